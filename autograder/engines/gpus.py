"""Which GPUs grading may use, and which grading slot uses which.

A machine (or a Slurm task) with several GPUs grades several students at once. Each grading
slot is bound to **one** GPU: its ``nbgrader autograde`` process, and so every notebook kernel
and every check process it starts, sees only that GPU (``CUDA_VISIBLE_DEVICES``, which the
sandbox passes through), and the GPU lock its checks share and its timings take alone is that
GPU's own (:func:`autograder.sandbox.gpulock.default_lock_dir` keys it by
``COURSE_GRADING_GPU_KEY``, the GPU's UUID where the driver gives one). So timings on different
GPUs run at the same time, a timing never shares its GPU, and a kernel that hangs holds up only
the slots of its own GPU, for the bounded moment of the launch limit. The speedup thresholds
follow the GPU each check sees, so a machine with two GPU models uses each model's margins.

Where the GPUs come from, first match wins:

* ``COURSE_GRADING_GPUS``: a comma-separated list of device ids (``0,2``) or ``none`` — the
  instructor's choice, and the CPU tests' stand-in GPUs;
* ``CUDA_VISIBLE_DEVICES``: what a scheduler (Slurm's ``--gres=gpu:N``) gave this job, in the
  scheduler's spelling (indices, ``GPU-<uuid>`` or MIG ids), passed on token by token;
* the driver's device count: every GPU of the machine, ``0`` … ``N-1``.

Nothing here creates a CUDA context: names and UUIDs are read with ``cuDeviceGetName`` and
``cuDeviceGetUuid`` after ``cuInit``, which the grader's parent process already calls to count
GPUs (:func:`course.runtime.backend.driver_gpu_count`).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from autograder.sandbox.gpulock import GPU_KEY_ENV, GRADING_GPU_ENV
from course.runtime.backend import driver_gpu_count, load_cuda_driver

GPUS_ENV = "COURSE_GRADING_GPUS"


@dataclass(frozen=True)
class GradingGpu:
    """One GPU a grading slot may be bound to.

    ``device`` is what ``CUDA_VISIBLE_DEVICES`` gets; ``key`` names its lock (the UUID when the
    driver gives one, so that two jobs that number the same GPU differently still share its
    lock); ``name`` is the model, empty for a stand-in.
    """

    device: str
    key: str
    name: str = ""

    @property
    def label(self) -> str:
        """How the grade table names it: ``GPU 1 (NVIDIA H200)``."""
        return f"GPU {self.device} ({self.name})" if self.name else f"GPU {self.device}"

    def env(self) -> dict[str, str]:
        """What a slot bound to this GPU adds to its environment."""
        return {"CUDA_VISIBLE_DEVICES": self.device, GPU_KEY_ENV: self.key,
                GRADING_GPU_ENV: self.label}


class GpuChoiceError(SystemExit):
    """``COURSE_GRADING_GPUS`` does not name GPUs in a way this module understands: the command
    stops with the sentence (exit 1), as for ``COURSE_GRADING_WORKERS``, not a traceback."""


def _tokens(value: str) -> list[str]:
    return [t.strip() for t in value.split(",") if t.strip()]


def _driver_facts(ordinal: int) -> tuple[str, str]:
    """(name, UUID) of the device at ``ordinal`` of this process's visible set; ("", "") where
    the driver cannot say."""
    lib = load_cuda_driver()
    if lib is None or lib.cuInit(0) != 0:
        return "", ""
    device = ctypes.c_int(0)
    if lib.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
        return "", ""
    buffer = ctypes.create_string_buffer(256)
    name = ""
    if lib.cuDeviceGetName(buffer, len(buffer), device) == 0:
        name = buffer.value.decode(errors="replace").strip()
    raw = ctypes.create_string_buffer(16)
    uuid = ""
    for symbol in ("cuDeviceGetUuid_v2", "cuDeviceGetUuid"):
        getter = getattr(lib, symbol, None)
        if getter is not None and getter(raw, device) == 0:
            uuid = "GPU-" + raw.raw.hex()
            break
    return name, uuid


def grading_gpus(environ: Mapping[str, str] | None = None) -> list[GradingGpu]:
    """The GPUs grading may use here, in order; empty without a GPU (the simulator grades)."""
    env = os.environ if environ is None else environ
    chosen = env.get(GPUS_ENV, "").strip()
    if chosen.lower() == "none":
        return []
    visible = _tokens(env.get("CUDA_VISIBLE_DEVICES", ""))
    if chosen:
        devices = _tokens(chosen)
        if not devices or len(set(devices)) != len(devices):
            raise GpuChoiceError(f"{GPUS_ENV} must list distinct device ids separated by commas "
                                 f"(for example 0,1) or be none; got {chosen!r}")
    elif visible:
        devices = visible
    else:
        devices = [str(i) for i in range(driver_gpu_count()[0])]
    gpus = []
    for device in devices:
        # the driver numbers this process's visible devices 0…n-1, in CUDA_VISIBLE_DEVICES order
        if visible:
            ordinal = visible.index(device) if device in visible else -1
        else:
            ordinal = int(device) if device.isdigit() else -1
        name, uuid = _driver_facts(ordinal) if ordinal >= 0 else ("", "")
        gpus.append(GradingGpu(device=device, key=uuid or device, name=name))
    return gpus


def bind_slots(slots: int, gpus: Sequence[GradingGpu]) -> list[GradingGpu | None]:
    """The GPU of each of ``slots`` grading slots: round robin, so that no GPU has more than one
    slot more than another; ``None`` for every slot where there is no GPU."""
    if not gpus:
        return [None] * slots
    return [gpus[i % len(gpus)] for i in range(slots)]


def describe(slots: Sequence[GradingGpu | None]) -> str:
    """``on 2 GPUs (2 slots each)``, for the line that says how grading runs; empty without."""
    bound = [gpu for gpu in slots if gpu is not None]
    if not bound:
        return ""
    count = len({gpu.device for gpu in bound})
    if count == 1:
        return f"on {bound[0].label}"
    per = sorted({sum(1 for g in bound if g.device == d.device) for d in bound})
    each = f"{per[0]}" if len(per) == 1 else f"{per[0]}-{per[-1]}"
    return f"on {count} GPUs ({each} slot(s) each)"
