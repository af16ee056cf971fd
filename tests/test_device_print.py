"""Does a kernel print from the device (course/gemm/device_print.py)? Asked of CUDA C through
NVRTC's PTX, of Numba kernels through Python's parser, on the bundle the grader rebuilds."""

from __future__ import annotations

import textwrap

import kernels_for_tests as kft
import pytest

from course.gemm import device_print
from course.gemm.cudac import nvrtc
from course.gemm.cudac.source import NAIVE, TILED, compile_kernel
from course.trust.kernel_source import bundle_from_objects
from tests import cudac_kernels as k

needs_nvrtc = pytest.mark.skipif(not nvrtc.available(), reason="needs NVRTC")


def cuda_prints(source: str, spec=NAIVE, tile=None) -> bool:
    return device_print.ptx_prints(compile_kernel(source, spec, tile).result.ptx)


@needs_nvrtc
def test_a_cuda_c_kernel_with_printf_prints_and_one_without_does_not():
    assert cuda_prints(k.NAIVE_PRINTF)
    assert not cuda_prints(k.NAIVE)
    assert not cuda_prints(k.TILED, TILED, 32)


@needs_nvrtc
def test_the_compiler_decides_what_a_cuda_c_printf_is():
    # Not one: in a comment, in a string, or code the compiler removes.
    assert not cuda_prints(k.NAIVE_PRINTF_IN_COMMENT)
    dead = k.NAIVE.replace("C[row * N + col] = acc;",
                           'if (0) printf("x");\nC[row * N + col] = acc;')
    assert not cuda_prints(dead)
    # One: behind a macro, in a __device__ helper, in one thread only.
    macro = "#define SHOW printf\n" + k.NAIVE.replace(
        "C[row * N + col] = acc;", 'SHOW("%f", acc);\nC[row * N + col] = acc;')
    helper = ('__device__ void show(float acc) { printf("%f\\n", acc); }\n'
              + k.NAIVE.replace("C[row * N + col] = acc;", "show(acc);\nC[row * N + col] = acc;"))
    one = k.NAIVE.replace("C[row * N + col] = acc;",
                          'if (row == 0 && col == 0) printf("hi\\n");\nC[row * N + col] = acc;')
    assert cuda_prints(macro) and cuda_prints(helper) and cuda_prints(one)


def test_the_ptx_test_reads_a_call_not_a_name():
    call = "\tcall.uni (retval0), \n\tvprintf, \n\t(\n\tparam0, \n\tparam1\n\t);"
    assert device_print.ptx_prints(call)
    assert not device_print.ptx_prints("// vprintf\n\tmov.u32 %r1, %r2;")


def bundle(**objects) -> str:
    return bundle_from_objects(objects).source


def test_a_numba_kernel_that_prints_is_found_in_its_bundle():
    assert device_print.python_prints(bundle(gemm_naive=kft.gemm_naive_prints), "gemm_naive")
    assert not device_print.python_prints(bundle(gemm_naive=kft.gemm_naive), "gemm_naive")
    # through a device function of the same bundle
    helper = bundle(gemm_naive=kft.gemm_naive_prints_in_a_helper)
    assert "def _show" in helper and device_print.python_prints(helper, "gemm_naive")
    # each kernel of a submission is asked on its own
    both = bundle(make_gemm_tiled=kft.make_gemm_tiled, gemm_naive=kft.gemm_naive_prints)
    assert device_print.python_prints(both, "gemm_naive")
    assert not device_print.python_prints(both, "make_gemm_tiled")


def test_python_prints_reads_the_code_not_the_text():
    source = textwrap.dedent('''
        from numba import cuda

        def unrelated():
            print("not called by the kernel")

        show = print

        @cuda.jit
        def quiet(A, B, C):
            """print(x) in a docstring"""
            # print(x) in a comment
            C[0, 0] = A[0, 0]

        @cuda.jit
        def aliased(A, B, C):
            show(A[0, 0])

        def make_gemm_tiled(tile):
            @cuda.jit
            def gemm_tiled(A, B, C):
                print(tile)
            return gemm_tiled

        def make_quiet_tiled(tile):
            print("making tile", tile)  # on the host, when the factory is called

            @jit
            def gemm_tiled(A, B, C):
                C[0, 0] = A[0, 0]
            return gemm_tiled
    ''')
    assert not device_print.python_prints(source, "quiet")
    assert device_print.python_prints(source, "aliased")
    assert device_print.python_prints(source, "make_gemm_tiled")
    assert not device_print.python_prints(source, "make_quiet_tiled")
    assert device_print.python_prints(source, "unrelated")
    assert not device_print.python_prints(source, "missing")
    assert not device_print.python_prints(source + "\ndef print(*a):\n    pass\n", "aliased")


def test_a_local_that_shares_a_host_functions_name_is_not_a_call_to_it():
    """Only what device code *uses* links it to the module's definitions: a local ``log`` in
    the kernel is not the host's ``log`` that prints."""
    source = '''
def log(msg):
    print(msg)

@cuda.jit
def gemm_naive(A, B, C):
    log = 0.0
    row, col = cuda.grid(2)
    C[row, col] = log
'''
    assert device_print.python_prints(source, "gemm_naive") is False
    calls = source.replace("    log = 0.0\n", "    log('x')\n")
    assert device_print.python_prints(calls, "gemm_naive")
