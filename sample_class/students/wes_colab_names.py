"""Wes worked on Colab and downloaded twice, so his notebook came as
"01_Arithmetic_Intensity (1).IPYNB"; he also handed in a scratch notebook of his own. The first
is graded as notebook 01 (full marks); the scratch notebook matches no notebook of the week and
is set aside, named in the collection summary and the grade table's notes."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ROUND_TRIP = "colab"
HANDIN = "colab"
UPLOADED_AS = {"01_arithmetic_intensity": "01_Arithmetic_Intensity (1).IPYNB"}
EXTRA_FILES = {"scratch.ipynb": "blank"}
EXPECTED = {"01_arithmetic_intensity": 11}
