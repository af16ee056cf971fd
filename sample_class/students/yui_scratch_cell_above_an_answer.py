"""Yui added a scratch code cell (and a markdown note) above her `ai_matmul` answer: her own
cells, run and never graded. Full marks, as nbgrader already gave."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
INSERT = {"01_arithmetic_intensity": [
    ("ai_matmul", "markdown", "My notes: FLOPs = 2·M·N·K."),
    ("ai_matmul", "code", "flops = 2 * 64 * 64 * 64\nprint(flops)\n"),
]}
EXPECTED = {"01_arithmetic_intensity": 11}
