"""nbgrader's Execute, changed so that one notebook cannot cost the class (or the machine).

* **A dead kernel costs that notebook, not the class.** Out of the box, a kernel that dies
  (``os._exit``, a segfault, a memory limit) raises out of ``nbgrader autograde``, which then
  deletes that student's autograded notebook: the student silently vanishes from the grade
  table. Here the cell that killed the kernel gets an error output saying so (and why, when
  a limit stopped it), later cells are left unexecuted, and grading goes on; the trusted
  re-check (:mod:`autograder.grading.trusted`) still scores every test cell.
* **The kernel has no network**, so it talks to nbclient over jupyter_client's ``ipc``
  transport: Unix sockets in a folder of their own, bound into the sandbox
  (:func:`SurvivingExecute.create_kernel_manager`). nbgrader's ``Execute`` is nbconvert's
  ``ExecutePreprocessor``, i.e. an ``nbclient.NotebookClient``: its ``preprocess`` calls
  ``setup_kernel``, which calls ``create_kernel_manager`` (an ``AsyncKernelManager``, set by
  nbgrader) and then ``km.start_kernel``, which writes the connection file from the manager's
  ``transport``/``ip``/``connection_file`` traits. Setting those three on the new manager is
  all it takes; nothing else in nbgrader or nbclient reads them.
* **Resource limits** (:mod:`autograder.sandbox.limits`): the kernel's sandbox gets its own cgroups;
  a watchdog stops the whole sandbox when it breaks one. Output beyond ``COURSE_OUTPUT_LIMIT``
  is dropped (nbclient would keep all of it in memory).
* **A time budget per notebook**: after one cell times out, the rest of the notebook shares
  ``COURSE_AFTER_TIMEOUT`` seconds; cells past it are not run. A cell that does not stop when
  interrupted stops the kernel.
* **Checks are not simulated twice**: when the trusted re-check ran first
  (:class:`autograder.grading.trusted.TrustedPrecheck`), its checks' recorded outcomes are handed to
  the kernel as a read-only file (``COURSE_CHECK_REPLAY``), and the same check called on the
  same source there replays them (:mod:`course.trust.replay`).

Everything worth a line in the grade table is returned in ``resources[NOTES_KEY]``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute

from autograder.grading import outputs, ungraded
from autograder.grading.languages import grading_language
from autograder.sandbox import kernel_server
from autograder.sandbox import limits as limits_mod
from autograder.sandbox.bwrap import BOX_FILE, REPLAY_ENV, course_root
from course.runtime import i18n

#: set by autograder.grading.trusted.TrustedPrecheck (the value: what it found, with ``"replay"``).
PRECHECK_KEY = "course_trusted_precheck"

DEAD_KERNEL_KEY = "course_dead_kernel"
NOTES_KEY = "course_sandbox_notes"
#: resources key: how long each code cell this grading ran took in the kernel (grade id, or
#: ``cell <index>``, to seconds), for the notebook's ``.trusted.json``: what the per-cell limit
#: is measured against (tests/test_sample_class.py). Timed here, around the run, never read
#: from the cell's metadata, which comes with the student's notebook.
KERNEL_SECONDS_KEY = "course_kernel_seconds"
#: Messages whose content nbclient keeps (cell outputs, widget state): counted against the cap.
_KEPT = {"stream", "display_data", "execute_result", "error", "update_display_data",
         "comm_open", "comm_msg"}


def _error(ename: str, text: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=text,
                        traceback=[f"{ename}: {text}"])


def warm_kernel_server(resources: Any) -> None:
    """Start the student's kernel fork-server now, if this notebook will run and none is up.

    Called before the trusted re-check that precedes the kernel (TrustedPrecheck): the
    server's imports (IPython, NumPy, Numba's simulator, matplotlib: about 2.5 CPU-s) then
    overlap with the re-check instead of following it on the student's chain, which on a
    GPU machine with idle cores is wall time saved (issue 39). :meth:`SurvivingExecute.
    preprocess` finds the same live server (same folder, course and limits) and forks from
    it; if it could not start, the kernel starts cold there, as always."""
    if not ungraded.nothing_graded(course_root(), resources):
        _server_for(resources, limits_mod.Limits.from_env())


def _server_for(resources: Any, limits: limits_mod.Limits) -> kernel_server.KernelServer | None:
    """The student's live kernel server for this notebook (its folder, the course, the
    limits: the server's key), started if none is up; None where kernels start cold."""
    return kernel_server.server_for(SurvivingExecute._workdir(resources), course_root(), limits)


class SurvivingExecute(Execute):
    """Execute every cell within the notebook's limits; record what stopped it, and why."""

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None):
        self._limits = limits_mod.Limits.from_env()
        # The notebook's language: the kernel speaks it (COURSE_LANG) and so do the notes.
        self._language = grading_language(nb)
        if ungraded.nothing_graded(course_root(), resources):  # kept as handed in, not run
            nb = ungraded.keep_as_handed_in(nb, self._language, self._limits.output)
            resources.setdefault(NOTES_KEY, [])
            return nb, resources
        self._dead_at: str | None = None
        self._stop_reason: str | None = None
        self._notes: list[str] = []
        self._budget_end: float | None = None
        self._skipped: list[str] = []
        self._seconds: dict[str, float] = {}
        self._output_used = 0
        self._output_cut = False
        self.timeout_func = self._cell_timeout
        self._server = _server_for(resources, self._limits)
        if self._server is not None:  # the kernel's files where the server's sandbox sees them
            self._kernel_dir = Path(tempfile.mkdtemp(prefix="kernel-", dir=self._server.ro))
            self._ipc_dir = self._server.rw / self._kernel_dir.name
        else:
            self._kernel_dir = Path(tempfile.mkdtemp(prefix="week4-kernel-"))
            self._ipc_dir = self._kernel_dir / "ipc"
        self._ipc_dir.mkdir()
        self._box = limits_mod.Box.create(self._limits)
        (self._kernel_dir / BOX_FILE).write_text(json.dumps(self._box.to_json()))
        done = threading.Event()
        watchdog = threading.Thread(target=self._watch, args=(done,), daemon=True)
        watchdog.start()
        replay = (resources or {}).get(PRECHECK_KEY, {}).get("replay")
        replay_file = self._kernel_dir / "check-replay.jsonl"
        self._replay: str | None = None
        if replay:  # read by the kernel's launcher (autograder.sandbox), mounted read-only
            replay_file.write_text(replay)
            self._replay = str(replay_file)
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            replay_file.unlink(missing_ok=True)
            done.set()
            watchdog.join()
            late = self._stop_reason or self._box.breach()
            self._box.remove()
            if self._server is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)
                shutil.rmtree(self._kernel_dir, ignore_errors=True)
        if late and not self._dead_at:  # broken in the last cell, or between two polls
            self._notes.append(self._("the sandbox was stopped after its last cell ran: "
                                      "{reason}").format(reason=late))
            shutil.rmtree(self._kernel_dir, ignore_errors=True)
        if self._dead_at:
            resources[DEAD_KERNEL_KEY] = self._dead_at
        if self._skipped:
            self._notes.append(self._("{count} later cell(s) not run: the notebook's time "
                                      "after a timeout ({seconds} s) was spent").format(
                count=len(self._skipped), seconds=f"{self._limits.after_timeout:g}"))
        if self._output_cut:
            self._notes.append(self._("output beyond {limit} was dropped").format(
                limit=limits_mod.human(self._limits.output)))
        resources.setdefault(NOTES_KEY, []).extend(self._notes)
        resources[KERNEL_SECONDS_KEY] = self._seconds
        return nb, resources

    def _(self, message: str) -> str:
        """``message`` in the notebook's language (course.runtime.i18n's catalog)."""
        return i18n.in_language(self._language, message)

    # -- the kernel: ipc transport, in a folder of its own ----------------------------------

    def _kernel_env(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The kernel's start options, with what this notebook's kernel must know in its
        environment: ``COURSE_LANG`` (the notebook's language) and, where the re-check recorded
        its checks, the file to replay them from."""
        env = {**(kwargs.get("env") or os.environ), i18n.ENV: self._language}
        env.pop(REPLAY_ENV, None)
        env.pop(kernel_server.SERVER_ENV, None)
        if getattr(self, "_replay", None):
            env[REPLAY_ENV] = str(self._replay)
        server = getattr(self, "_server", None)
        if server is not None:
            env[kernel_server.SERVER_ENV] = str(server.info_file)
        return {**kwargs, "env": env}

    # nbclient's synchronous start_new_kernel (what nbconvert's setup_kernel calls) wraps the
    # base class's coroutine, not an override of it: both are overridden.
    def start_new_kernel(self, **kwargs: Any) -> None:
        """Start the kernel with this notebook's environment (:meth:`_kernel_env`)."""
        super().start_new_kernel(**self._kernel_env(kwargs))

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        """Start the kernel with this notebook's environment (:meth:`_kernel_env`)."""
        await super().async_start_new_kernel(**self._kernel_env(kwargs))

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        km.transport = "ipc"
        km.connection_file = str(self._kernel_dir / "kernel.json")
        km.ip = str(self._ipc_dir / "kernel")
        return km

    @staticmethod
    def _workdir(resources: Any) -> Path:
        """The folder the notebook runs in (nbclient starts the kernel there)."""
        path = ((resources or {}).get("metadata") or {}).get("path") or os.getcwd()
        return Path(path).resolve()

    # -- limits -----------------------------------------------------------------------------

    def _watch(self, done: threading.Event) -> None:
        """Stop the whole sandbox as soon as it breaks a cgroup limit."""
        if not self._box.groups:
            return
        while not done.wait(0.25):
            reason = self._box.breach()
            if reason and self._stop_reason is None:
                self._stop_reason = reason
                self._box.kill()

    def _kill_kernel(self) -> None:
        self._box.kill()
        pid = getattr(getattr(self.km, "provisioner", None), "pid", None)
        if pid:  # bwrap; --die-with-parent takes everything inside with it
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def _memory_seen(self) -> dict[str, str] | None:
        """``used`` and ``memory`` (the limit) for a timeout's message, when the box holds at
        least half its limit (:meth:`limits.Box.memory_in_use`); else None."""
        used = self._box.memory_in_use()
        if used is None:
            return None
        return {"used": limits_mod.human(used, 2), "memory": limits_mod.human(self._limits.memory)}

    def _cell_timeout(self, cell: NotebookNode) -> int | None:
        if self._budget_end is None:
            return self.timeout
        left = max(1, int(self._budget_end - time.monotonic() + 0.999))
        return min(self.timeout, left) if self.timeout else left

    def process_message(self, msg: dict, cell: NotebookNode, cell_index: int):
        if msg.get("msg_type") in _KEPT:
            size = outputs.size(msg.get("content", {}))
            if self._output_cut or self._output_used + size > self._limits.output:
                if msg["msg_type"] == "error":  # keep the error (it scores the cell), short
                    content = msg["content"]
                    text = str(content.get("evalue", ""))[:500]
                    content.update(evalue=text, traceback=[f"{content.get('ename')}: {text}"])
                    size = len(text)
                elif not self._output_cut:
                    self._output_cut = True
                    cell.outputs.append(outputs.cut_notice(self._language, self._limits.output))
                    return None
                else:
                    return None
            self._output_used += size
        return super().process_message(msg, cell, cell_index)

    # -- cells ------------------------------------------------------------------------------

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int):
        if self._dead_at is not None:
            return cell, self.resources
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
        if (cell.cell_type == "code" and self._budget_end is not None
                and time.monotonic() >= self._budget_end):
            self._skipped.append(grade_id)
            cell.outputs = [_error("NotRun", self._("not run: an earlier cell timed out and "
                                                    "the notebook's remaining time was spent"))]
            return cell, self.resources
        started = time.monotonic()
        try:
            cell, res = super().preprocess_cell(cell, resources, index)
        except DeadKernelError as exc:
            reason = self._stop_reason or self._box.breach()
            if reason:
                self._dead_at = self._("the kernel was stopped while running {cell}: "
                                       "{reason}").format(cell=grade_id, reason=reason)
            else:
                self._dead_at = self._("the kernel died while running {cell} ({error})"
                                       ).format(cell=grade_id, error=exc)
            cell.outputs.append(_error("KernelDied", self._(
                "{what}; later cells were not run").format(what=self._dead_at)))
            return cell, self.resources
        except CellTimeoutError:
            # The cell timed out and ignored the interrupt: the kernel is stuck in it.
            memory = self._memory_seen()
            self._kill_kernel()
            if memory:
                self._dead_at = self._(
                    "the kernel was stopped: {cell} timed out with {used} of its {memory} of "
                    "memory in use, and did not stop when interrupted").format(
                    cell=grade_id, **memory)
            else:
                self._dead_at = self._("the kernel was stopped: {cell} timed out and did not "
                                       "stop when interrupted").format(cell=grade_id)
            cell.outputs.append(_error("KernelDied", self._(
                "{what}; later cells were not run").format(what=self._dead_at)))
            return cell, self.resources
        finally:
            if cell.cell_type == "code":
                self._seconds[grade_id] = round(time.monotonic() - started, 2)
        timeout_name = (self.error_on_timeout or {}).get("ename", "CellTimeoutError")
        if self._budget_end is None and any(
                o.get("output_type") == "error" and o.get("ename") == timeout_name
                for o in cell.get("outputs", [])):
            self._budget_end = time.monotonic() + self._limits.after_timeout
            after = f"{self._limits.after_timeout:g}"
            if memory := self._memory_seen():
                self._notes.append(self._(
                    "{cell} timed out after {seconds} s with {used} of its {memory} of memory "
                    "in use; the rest of the notebook had {after} s").format(
                    cell=grade_id, seconds=self.timeout, after=after, **memory))
            else:
                self._notes.append(self._("{cell} timed out after {seconds} s; the rest of the "
                                          "notebook had {after} s").format(
                    cell=grade_id, seconds=self.timeout, after=after))
        return cell, res
