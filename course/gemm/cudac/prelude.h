// The CUDA C that course kernels may use, mapped onto plain C++ for the course's CPU runner.
//
// Included (with -include) before a student's kernel source when it is compiled with g++ for
// a run on the CPU (course/gemm/cudac/cpu.py). The kernel is compiled with -fsanitize=thread so that
// the compiler calls a hook before every memory access; the course's own runtime
// (runtime.cpp) implements those hooks to count reads of A and B, catch out-of-bounds
// accesses and find shared-memory races. No ThreadSanitizer library is linked.
//
// How CUDA's model maps here:
//   * __shared__ arrays become static variables in their own linker section, so every thread
//     of a block sees the same array; blocks run one after another and the runtime refills
//     the section with NaN before each block.
//   * each thread of a block is a fiber; __syncthreads() hands control to the next fiber, so a
//     barrier really waits for the whole block.
//   * threadIdx, blockIdx, blockDim, gridDim are read-only globals the runtime sets before it
//     resumes a fiber.
// Standard headers are not available (the kernel is compiled with -nostdinc, like NVRTC's
// lack of system headers), and inline assembly is refused.
#pragma once

#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __shared__ static __attribute__((section("cudac_shared")))
#define asm __course_inline_assembly_cannot_run_on_the_cpu
#define __asm__ __course_inline_assembly_cannot_run_on_the_cpu
#define __asm __course_inline_assembly_cannot_run_on_the_cpu

struct uint3 { unsigned int x, y, z; };
struct dim3 { unsigned int x, y, z; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };

extern "C" uint3 __course_threadIdx;
extern "C" uint3 __course_blockIdx;
extern "C" dim3 __course_blockDim;
extern "C" dim3 __course_gridDim;
extern "C" int __course_warpSize;
#define threadIdx __course_threadIdx
#define blockIdx __course_blockIdx
#define blockDim __course_blockDim
#define gridDim __course_gridDim
#define warpSize __course_warpSize

extern "C" int printf(const char* format, ...);
extern "C" void __course_syncthreads(int line);
#define __syncthreads() __course_syncthreads(__LINE__)
extern "C" float __course_atomic_add_f32(float* address, float value);
extern "C" int __course_atomic_add_i32(int* address, int value);

static inline float atomicAdd(float* address, float value) {
    return __course_atomic_add_f32(address, value);
}
static inline int atomicAdd(int* address, int value) {
    return __course_atomic_add_i32(address, value);
}

static inline float2 make_float2(float x, float y) { return float2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline int2 make_int2(int x, int y) { return int2{x, y}; }
static inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
static inline dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3{x, y, z}; }

template <class T> static inline T __ldg(const T* p) { return *p; }

static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline float min(float a, float b) { return __builtin_fminf(a, b); }
static inline float max(float a, float b) { return __builtin_fmaxf(a, b); }
static inline float fminf(float a, float b) { return __builtin_fminf(a, b); }
static inline float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
static inline float fabsf(float a) { return __builtin_fabsf(a); }
static inline float sqrtf(float a) { return __builtin_sqrtf(a); }
static inline float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static inline float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float expf(float a) { return __builtin_expf(a); }
static inline float logf(float a) { return __builtin_logf(a); }
static inline float floorf(float a) { return __builtin_floorf(a); }
static inline float ceilf(float a) { return __builtin_ceilf(a); }
static inline double sqrt(double a) { return __builtin_sqrt(a); }
static inline double fabs(double a) { return __builtin_fabs(a); }
static inline double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
