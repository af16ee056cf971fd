"""Vic handed in on Moodle, in a folder, a notebook he renamed ("week4/intensity_final.ipynb").
Nothing in the name says which notebook it is; its cells do: graded as notebook 01, full
marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
HANDIN = "moodle"
LMS_ID = "5202"
UPLOADED_AS = {"01_arithmetic_intensity": "week4/intensity_final.ipynb"}
EXPECTED = {"01_arithmetic_intensity": 11}
