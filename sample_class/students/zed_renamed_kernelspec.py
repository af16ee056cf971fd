"""Zed ran his notebooks with another kernel and saved them so: notebook 01 names an R kernel
(`ir`). The grader runs the course's sandboxed kernel whatever the notebook names: full marks,
as nbgrader already gave."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
KERNELSPEC = {"name": "ir", "display_name": "R", "language": "R"}
EXPECTED = {"01_arithmetic_intensity": 11}
