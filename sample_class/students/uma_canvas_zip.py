"""Uma handed in on Canvas, late, twice: first the release notebook unanswered, a day later her
answers from Colab, as "Copy of 01_arithmetic_intensity.ipynb". The instructor downloads the
zip and runs `make collect`: the newer upload is graded (full marks), and the table says that
the older one was left out and that Canvas marked it late."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
HANDIN = "canvas"
LMS_ID = "4101"
LATE = True
UPLOADED_AS = {"01_arithmetic_intensity": "Copy of 01_arithmetic_intensity.ipynb"}
OLDER_UPLOAD = {"01_arithmetic_intensity": "01_arithmetic_intensity.ipynb"}
EXPECTED = {"01_arithmetic_intensity": 11}
