"""The sandbox's launcher: apply the limits, then become bwrap (with the scrubbed environment).

``python -m autograder.sandbox`` runs :func:`main`: as the grading kernel's kernelspec
(``-f CONNECTION_FILE``), or as ``exec`` for a command that :func:`autograder.sandbox.bwrap.wrap`
built (``SandboxCommand.launcher_argv``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from autograder.sandbox import kernel_server
from autograder.sandbox import limits as limits_mod
from autograder.sandbox.bwrap import BOX_FILE, REPLAY_ENV, SandboxCommand, course_root, wrap


def _exec(command: SandboxCommand) -> None:
    """Take the box's limits, then become the command (bwrap)."""
    if command.box:
        enter(command.box)
    os.execve(command.argv[0], command.argv, command.env)


def enter(box: dict) -> None:
    """Join the box's cgroups and take its rlimits (in the launcher, before bwrap)."""
    for group in box.get("groups", {}).values():
        Path(group, "cgroup.procs").write_text(str(os.getpid()))
    limits_mod.apply_rlimits(box.get("rlimits", {}))


def _kernel_main(argv: list[str]) -> int:
    """Kernelspec entry point: ``python -m autograder.sandbox -f CONNECTION_FILE``.

    Started by nbclient (through :class:`autograder.grading.execute.SurvivingExecute`) in the
    notebook's folder. The kernel must use the ``ipc`` transport (its sockets in a folder
    beside the connection file): the sandbox has no network, not even the host's loopback.
    """
    conn = Path(argv[argv.index("-f") + 1]).resolve()
    info = json.loads(conn.read_text())
    if info.get("transport") != "ipc":
        print("autograder.sandbox: the grading kernel needs the ipc transport (TCP cannot "
              "reach into a sandbox without network); start it through "
              "autograder.grading.execute.SurvivingExecute", file=sys.stderr)
        return 2
    sockets = Path(info["ip"]).parent.resolve()
    box_path = conn.parent / BOX_FILE
    box = json.loads(box_path.read_text()) if box_path.exists() else {}
    root = course_root()
    # The trusted re-check's recorded outcomes, for the kernel's checks to replay (read-only).
    replay = os.environ.get(REPLAY_ENV)
    replay_ro = (Path(replay).resolve(),) if replay and Path(replay).is_file() else ()
    kernel_args = ["-f", str(conn), "--HistoryManager.hist_file=:memory:"]
    command = wrap([sys.executable, "-m", "ipykernel_launcher", *kernel_args],
                   course_root=root, workdir=Path.cwd(), extra_ro=(conn, *replay_ro),
                   extra_rw=(sockets,), gpu=False)
    command.box = box
    server = os.environ.get(kernel_server.SERVER_ENV)
    if server:  # this student's fork-server; anything short of a running kernel: start cold
        forked = kernel_server.start_forked(server, argv=kernel_args, cwd=Path.cwd(),
                                            env=command.env, groups=box.get("groups", {}))
        if forked is not None:
            return kernel_server.wait_forked(forked)
    _exec(command)
    return 1  # pragma: no cover


def _exec_main(argv: list[str]) -> int:
    """``python -m autograder.sandbox exec BOX_JSON -- BWRAP_ARGV…`` (started with the
    scrubbed environment)."""
    box = json.loads(argv[0])
    rest = argv[argv.index("--") + 1:]
    _exec(SandboxCommand(rest, dict(os.environ), box))
    return 1  # pragma: no cover


def main(args: list[str]) -> int:
    """``python -m autograder.sandbox``: the kernel launcher, or ``exec`` (see above)."""
    return _exec_main(args[1:]) if args[:1] == ["exec"] else _kernel_main(args)
