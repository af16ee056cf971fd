"""Check the kernel rule of the code policy against what Numba really compiles for a GPU.

``course.trust.code_policy`` refuses, inside ``@cuda.jit`` functions, constructs that the simulator
runs but the GPU compiler rejects, so that no kernel passes on a laptop and fails on the
grader's GPU. This script compiles and launches one small kernel per construct on the GPU and
compares: a construct the policy *accepts* but the GPU rejects is a bug (exit status 1); one
the policy refuses although the GPU compiles it is stricter than needed (reported).

    python scripts/gpu/policy_probe.py [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import common  # noqa: F401  (first: the shared setup, scripts/gpu/common.py)

HEADER = ("import math\nimport numpy as np\nimport numba\nfrom numba import cuda, float32\n"
          "from numba.cuda import grid as cgrid\n")

#: construct -> kernel body (one indented block; `a` is a float32 array of 8 elements).
PROBES = {
    "baseline": "i = cuda.grid(1)\nif i < a.size:\n    a[i] = a[i] + 1.0",
    "numba.cuda spelling": "i = numba.cuda.blockIdx.x * numba.cuda.blockDim.x + "
                           "numba.cuda.threadIdx.x\nif i < a.size:\n    a[i] = numba.float32(1.0)",
    "from numba.cuda import grid": "i = cgrid(1)\nif i < a.size:\n    a[i] = 1.0",
    "tuple unpacking": "x, y = 1.0, 2.0\na[0] = x + y",
    "conditional expression": "a[0] = 1.0 if a[1] > 0 else 2.0",
    "while/break/continue": "k = 0\nwhile True:\n    k += 1\n    if k < 3:\n        continue\n"
                            "    break\na[0] = k",
    "assert": "assert a.size > 0\na[0] = 1.0",
    "raise": "if a.size < 0:\n    raise ValueError('negative size')\na[0] = 1.0",
    "print with values": "if cuda.grid(1) == 0:\n    print('a0 =', a[0])",
    "math.sqrt": "a[0] = math.sqrt(4.0)",
    "np.sqrt on a scalar": "a[0] = np.sqrt(np.float32(4.0))",
    "np.float32()": "a[0] = np.float32(3.0)",
    "min/max/abs/round": "a[0] = min(1.0, 2.0) + max(1, 2) + abs(-1.0) + round(2.4)",
    "enumerate/zip over range": "s = 0\nfor i, j in zip(range(3), range(3)):\n    s += i * j\n"
                                "for i, v in enumerate(range(2)):\n    s += v\na[0] = s",
    "isinstance": "a[0] = 1.0 if isinstance(a[0], float) else 2.0",
    "cuda.local.array": "t = cuda.local.array(4, float32)\nfor i in range(4):\n    t[i] = i\n"
                        "a[0] = t[3]",
    "cuda.atomic.add": "cuda.atomic.add(a, 0, 1.0)",
    "nested function": "def twice(x):\n    return 2 * x\na[0] = twice(a[0])",
    "sum of a tuple": "a[0] = sum((1.0, 2.0))",
    "any/all": "a[0] = 1.0 if any((a[0] > 0, a[1] > 0)) else 0.0",
    "list display": "xs = [1.0, 2.0]\na[0] = xs[0]",
    "list comprehension": "xs = [i for i in range(3)]\na[0] = xs[0]",
    "dict": "d = {'x': 1.0}\na[0] = d['x']",
    "set": "s = {1, 2}\na[0] = len(s)",
    "generator expression": "a[0] = max(i for i in range(3))",
    "lambda": "f = lambda x: x + 1\na[0] = f(a[0])",
    "try/except": "try:\n    a[0] = 1.0\nexcept Exception:\n    a[0] = 2.0",
    "with": "with np.errstate(all='ignore'):\n    a[0] = 1.0",
    "f-string": "if cuda.grid(1) == 0:\n    print(f'{a[0]}')",
    "np.zeros": "t = np.zeros(3)\na[0] = t[0]",
    "sorted": "a[0] = sorted((2.0, 1.0))[0]",
    "str": "a[0] = len(str(1))",
}


def compile_and_run(body: str) -> tuple[bool, str]:
    import numpy as np

    source = HEADER + "\n@cuda.jit\ndef probe(a):\n" + "".join(
        f"    {line}\n" for line in body.splitlines())
    namespace: dict = {}
    try:
        exec(compile(source, "<probe>", "exec"), namespace)  # noqa: S102 - our own probes
        from numba import cuda

        d = cuda.to_device(np.ones(8, dtype=np.float32))
        namespace["probe"][1, 8](d)
        cuda.synchronize()
        return True, ""
    except Exception as exc:  # noqa: BLE001 - a compile error is the measurement
        return False, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"


def policy_refuses(body: str) -> str:
    from course.trust.code_policy import DisallowedCodeError, validate_module

    source = HEADER + "\n@cuda.jit\ndef probe(a):\n" + "".join(
        f"    {line}\n" for line in body.splitlines())
    try:
        validate_module(source)
    except DisallowedCodeError as exc:
        return str(exc)[:100]
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import course  # noqa: F401
    from course.runtime import backend

    b = backend.detect()
    if b.kind != "gpu":
        print(f"needs a GPU: this machine runs kernels on the {b.kind} ({b.reason})")
        return 2
    rows, bugs = [], 0
    for name, body in PROBES.items():
        gpu_ok, error = compile_and_run(body)
        refused = policy_refuses(body)
        verdict = ("ok" if gpu_ok != bool(refused) else
                   "BUG: policy accepts what the GPU rejects" if not gpu_ok else
                   "stricter than needed")
        bugs += verdict.startswith("BUG")
        rows.append({"construct": name, "gpu_compiles": gpu_ok, "gpu_error": error,
                     "policy_refuses": bool(refused), "verdict": verdict})
        print(f"{name:28s} GPU {'ok ' if gpu_ok else 'NO '} policy "
              f"{'refuses' if refused else 'accepts'}  {verdict}  {error}", flush=True)
    print(f"\n{bugs} construct(s) the policy accepts but the GPU rejects ({b.device_name})")
    if args.json:
        args.json.write_text(json.dumps({"device": b.device_name, "rows": rows}, indent=1))
    return 1 if bugs else 0


if __name__ == "__main__":
    raise SystemExit(main())
