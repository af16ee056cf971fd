"""nbgrader's Execute, changed so that a dead kernel costs that notebook, not the class.

Out of the box, a kernel that dies (``os._exit``, a segfault, the OOM killer) raises out of
``nbgrader autograde``, which then deletes that student's autograded notebook: the student
silently vanishes from the grade table. Here the cell that killed the kernel gets an error
output saying so, later cells are left unexecuted, and grading goes on; the trusted
re-check (:mod:`autograder.trusted`) still scores every test cell.
"""

from __future__ import annotations

from typing import Any

from nbclient.exceptions import DeadKernelError
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute

DEAD_KERNEL_KEY = "course_dead_kernel"


class SurvivingExecute(Execute):
    """Execute every cell; if the kernel dies, record where and stop executing."""

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None):
        self._dead_at: str | None = None
        nb, resources = super().preprocess(nb, resources, km)
        if self._dead_at:
            resources[DEAD_KERNEL_KEY] = self._dead_at
        return nb, resources

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int):
        if self._dead_at is not None:
            return cell, self.resources
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError as exc:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
            self._dead_at = f"the kernel died while running {grade_id} ({exc})"
            cell.outputs.append(NotebookNode(
                output_type="error", ename="KernelDied",
                evalue=f"{self._dead_at}; later cells were not run",
                traceback=[f"KernelDied: {self._dead_at}; later cells were not run"],
            ))
            return cell, self.resources
