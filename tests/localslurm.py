"""A real, throw-away Slurm cluster on localhost for the tests: munged, slurmctld and slurmd.

Debian's ``slurmctld``, ``slurmd``, ``slurm-client`` and ``munge`` packages (installed with
apt-get when missing and running as root), a generated ``slurm.conf`` with free ports, and
every file (key, state, spool, logs) in one temporary folder; nothing in /etc is changed.
The daemons run in the foreground as children of this process and are stopped by their PIDs.
Clients reach this cluster through the ``SLURM_CONF`` variable of :attr:`LocalSlurm.env`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
BINARIES = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel"]


class SlurmUnavailable(RuntimeError):
    """Slurm cannot be installed or started here; the message says why."""


def ensure_installed() -> None:
    """Install the Slurm and MUNGE packages with apt-get if any binary is missing."""
    if all(shutil.which(b) for b in BINARIES):
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise SlurmUnavailable("Slurm is not installed and this is not root with apt-get: "
                               f"install {' '.join(PACKAGES)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-300:]}")
    missing = [b for b in BINARIES if not shutil.which(b)]
    if missing:
        raise SlurmUnavailable(f"apt-get ran but {', '.join(missing)} are still missing")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSlurm:
    """Controller and one node (this machine, all its CPUs) in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen] = []
        self.munged_pid: int | None = None
        self.env: dict[str, str] = {}

    def start(self, timeout_s: float = 60.0) -> None:
        if os.geteuid() != 0:
            raise SlurmUnavailable("a localhost Slurm needs root here (SlurmUser=root)")
        ensure_installed()
        f = self.folder
        for sub in ("state", "spool"):
            (f / sub).mkdir(parents=True, exist_ok=True)
        key = f / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        socket_path = f / "munge.sock"
        proc = subprocess.run(
            ["munged", "--force", f"--socket={socket_path}", f"--key-file={key}",
             f"--pid-file={f / 'munged.pid'}", f"--log-file={f / 'munged.log'}",
             f"--seed-file={f / 'munged.seed'}"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SlurmUnavailable(f"munged did not start: {proc.stderr.strip()}")
        self.munged_pid = int((f / "munged.pid").read_text())
        host = socket.gethostname()
        conf = f / "slurm.conf"
        conf.write_text("\n".join([
            "ClusterName=week4test", f"SlurmctldHost={host}(127.0.0.1)",
            "SlurmUser=root", "SlurmdUser=root",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={socket_path}",
            f"StateSaveLocation={f / 'state'}", f"SlurmdSpoolDir={f / 'spool'}",
            f"SlurmctldPidFile={f / 'slurmctld.pid'}", f"SlurmdPidFile={f / 'slurmd.pid'}",
            f"SlurmctldLogFile={f / 'slurmctld.log'}", f"SlurmdLogFile={f / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            "SchedulerType=sched/backfill", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none", "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN",
            f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""]))
        self.env = dict(os.environ, SLURM_CONF=str(conf))
        for argv, log in ((["slurmctld", "-D", "-i"], "slurmctld.out"),
                          (["slurmd", "-D"], "slurmd.out")):
            with open(f / log, "w") as out:
                self.procs.append(subprocess.Popen(argv, env=self.env, stdout=out,
                                                   stderr=subprocess.STDOUT))
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    raise SlurmUnavailable(f"{p.args[0]} exited ({p.returncode}): "
                                           + self.log_tail())
            out = subprocess.run(["sinfo", "--noheader", "--format=%T"], env=self.env,
                                 capture_output=True, text=True)
            if out.returncode == 0 and out.stdout.strip() == "idle":
                return
            time.sleep(0.5)
        raise SlurmUnavailable("the localhost node never became idle: " + self.log_tail())

    def log_tail(self) -> str:
        tails = []
        for name in ("slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"):
            path = self.folder / name
            if path.exists():
                tails.append(f"{name}: " + " | ".join(path.read_text().splitlines()[-4:]))
        return "\n".join(tails)

    def stop(self) -> None:
        if self.env:
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env,
                           capture_output=True)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        if self.munged_pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.munged_pid, signal.SIGTERM)
