# Week 4 course unit. Quick start: `make demo` (build the release, grade the sample class,
# print the table) and `make test`. Both create .venv and install what is needed first.

PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2
# make grade ENGINE=slurm SLURM_ARGS="--partition=gpu --gres=gpu:1" (docs/instructor.md, "Grading a whole class")
ENGINE  ?= local
SLURM_ARGS ?=
# nbgrader runs helper programs (alembic) from PATH: make them this environment's.
export PATH := $(abspath $(BIN)):$(PATH)
# Messages name make's variables (COMMIT=1, LMS=moodle), not the Python flags behind them
# (autograder.viewing.terminal.as_typed).
export COURSE_VIA_MAKE := 1

.PHONY: install system-deps colab-venv demo demo-full bench-grading release publish grade collect export return table similarity report test test-class test-edits test-fast test-ko lint figures gpu-check clean catalog

$(STAMP): pyproject.toml constraints.txt jupyter-config/jupyter_server_config.d/week4-viewing.json
	@# The venv starts without pip (ensurepip's copy cost 2.7 s of every fresh `make test`): the
	@# system's pip installs uv into it, and uv installs pip with the rest. Where the system's
	@# pip is missing or older than 22.3 (no --python), ensurepip puts one in first, as before.
	$(PY) -m venv --without-pip $(VENV)
	@# this package was called gpu-course-week4 before the student distribution took the name
	$(BIN)/python -m pip uninstall -y -q gpu-course-week4 2>/dev/null || true
	@# uv installs the pinned stack (the same versions: constraints.txt): 12-14 s for a new venv
	@# where pip took 36-48 s on 2 cores (docs/test-time.md, "An eighth session"). pip installs uv.
	@# Where uv reaches no index (pip's own configuration points at a mirror uv does not
	@# read), pip installs it all. Neither byte-compiles: compileall does it on every core
	@# below; the sandboxes see the environment read-only, so every file must be compiled here.
	$(PY) -m pip --python $(BIN)/python install -q -c constraints.txt uv 2>/dev/null \
	  || { $(BIN)/python -m ensurepip > /dev/null && $(BIN)/python -m pip install -q -c constraints.txt uv; }
	$(BIN)/uv pip install -q --python $(BIN)/python -c constraints.txt \
	    --upgrade-package pip pip -e ".[dev]" \
	  || { echo "uv could not install the environment; pip installs it instead (slower)"; \
	       { $(BIN)/python -m pip --version > /dev/null 2>&1 || $(BIN)/python -m ensurepip > /dev/null; } && \
	       $(BIN)/python -m pip install -q --upgrade pip && \
	       $(BIN)/python -m pip install -q --no-compile -c constraints.txt -e ".[dev]"; }
	@# jsonschema imports rfc3987-syntax (an optional extra that jupyter-events pulls in) when it
	@# is installed, and that builds a grammar at import time: 5-25 s in EVERY process that
	@# imports nbformat (each nbgrader command, each trusted check). Nothing here needs it.
	$(BIN)/python -m pip uninstall -y -q rfc3987-syntax
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null
	@# The formgrader's submission pages run only the formgrader's own script
	@# (autograder/viewing/formgrader.py): on for this environment's Jupyter, as a package
	@# turns its server extension on (a file in <env>/etc/jupyter/jupyter_server_config.d).
	install -D -m 644 jupyter-config/jupyter_server_config.d/week4-viewing.json \
	  $(VENV)/etc/jupyter/jupyter_server_config.d/week4-viewing.json
	touch $(STAMP)

## The course's own packages byte-compiled on every run (a no-op when nothing changed, 0.3 s):
## the sandboxes see them read-only and nothing writes a .pyc where PYTHONDONTWRITEBYTECODE is
## set, so without this every grading process compiles the modules it imports from source.
install: $(STAMP) system-deps
	@$(BIN)/python -m compileall -q -j 0 course autograder sample_class > /dev/null

## A stand-in for a student's Colab runtime (Python 3.13, Colab's versions), built once and
## reused while tests/colab-versions.txt is unchanged: the release tests run notebooks in it.
colab-venv: $(STAMP)
	$(BIN)/python scripts/build/colab_runtime.py

## bubblewrap isolates student code while grading; chromium drives the browser test.
system-deps:
	@bash scripts/build/system-deps.sh

## The sample class's slowest honest cell takes well under a minute even on 2 busy cores, so the
## demo waits 60 s for a cell (real grading: 600) and then 20 s for the rest of that notebook:
## fay_hangs costs about two and a half minutes instead of half an hour.
## demo: one sample student of every kind (sample_class.CORE_CLASS); demo-full: all of them.
demo: install
	COURSE_CELL_TIMEOUT=$${COURSE_CELL_TIMEOUT:-60} COURSE_AFTER_TIMEOUT=$${COURSE_AFTER_TIMEOUT:-20} \
		$(BIN)/python -m sample_class --class demo

demo-full: install
	COURSE_CELL_TIMEOUT=$${COURSE_CELL_TIMEOUT:-60} COURSE_AFTER_TIMEOUT=$${COURSE_AFTER_TIMEOUT:-20} \
		$(BIN)/python -m sample_class --class full

## One full submission (sample student ada_correct) graded by the course's grader and by plain
## nbgrader (a four-line configuration, no sandbox: our own sample student only), alternately,
## BENCH_ROUNDS runs each (default 2): every run's CPU seconds (its own process tree) and wall
## time, the CPU ratio course ÷ plain and issue 39's goal (≤ 1.0×); a row in
## docs/grading-history.md (docs/grading-cost.md, "Benchmarks and their history"). ~5 min here.
bench-grading: install
	$(BIN)/python scripts/gpu/bench_grading.py $(if $(BENCH_ROUNDS),--rounds $(BENCH_ROUNDS))

## The message catalog of the Korean edition (course/runtime/i18n.py): extract every _() / N_()
## message of course/ and autograder/ (Babel, [tool.babel] in pyproject.toml), merge it into
## course/locale/ko/LC_MESSAGES/course.po (translate the new entries there), compile course.mo.
## tests/test_i18n.py fails while an extracted message has no translation or the .mo is stale.
CATALOG := course/locale
catalog: install
	$(BIN)/pybabel extract -F pyproject.toml -k N_ -k in_language:2 --no-wrap --sort-by-file \
	  --project gpu-course-week4 --version 0.1.0 --copyright-holder "the course's authors" \
	  -o $(CATALOG)/course.pot .
	$(BIN)/pybabel update -D course -i $(CATALOG)/course.pot -d $(CATALOG) --no-wrap \
	  --ignore-obsolete --no-fuzzy-matching
	$(BIN)/pybabel compile -D course -d $(CATALOG) --statistics

release: install
	$(BIN)/python -m autograder release

## The student distribution (what students get; this repository stays private): the course
## package, both releases, the figures, a student README, a license and a pyproject.toml that
## packages `course` alone, written to $(PUBLISH_OUT) with its wheel in build/student-wheel/ --
## only if the leak check finds no answer in either (autograder/publish/). In a clone of the
## student repository: make publish PUBLISH_OUT=../week4-student COMMIT=1, then push the tag.
PUBLISH_OUT ?= student-dist
publish: install
	$(BIN)/python -m autograder.publish --out "$(PUBLISH_OUT)" $(if $(COMMIT),--commit)

grade: install
	$(BIN)/python -m autograder grade --engine $(ENGINE) \
	  $(if $(SLURM_ARGS),--sbatch-args "$(SLURM_ARGS)") \
	  $(if $(GPUS_PER_TASK),--gpus-per-task "$(GPUS_PER_TASK)")

## An LMS's bulk download (Canvas, Moodle) into submitted/: make collect ZIP=path/to/download.zip
## [LAYOUT=canvas|moodle] [MAPPING=ids.csv] [REGEX='…' for another LMS] (docs/instructor.md, "Handing in")
collect: install
	$(BIN)/python -m autograder collect --zip "$(ZIP)" \
	  $(if $(LAYOUT),--layout "$(LAYOUT)") $(if $(MAPPING),--mapping "$(MAPPING)") \
	  $(if $(REGEX),--regex '$(value REGEX)')

## Grades and feedback back to the LMS (docs/instructor.md, "Handing back"), into handback/:
## make export LMS=canvas [GRADEBOOK=canvas-export.csv] [ASSIGNMENT=<Canvas id or title>]
## make export LMS=moodle [WORKSHEET=moodle-worksheet.csv]
## make return LMS=canvas [DRY_RUN=1] [STUDENTS=a,b: only these] (CANVAS_URL, CANVAS_COURSE, CANVAS_ASSIGNMENT and
##   CANVAS_TOKEN or CANVAS_TOKEN_FILE in the environment: the token never on a command line)
## Both: [MAPPING=ids.csv] [OUT_OF=<points>] [INCLUDE_UNGRADED=1] [INCLUDE_FAILED=1]
HANDBACK_ARGS = --lms "$(LMS)" $(if $(MAPPING),--mapping "$(MAPPING)") \
	  $(if $(OUT_OF),--out-of "$(OUT_OF)") $(if $(INCLUDE_UNGRADED),--include-ungraded) \
	  $(if $(INCLUDE_FAILED),--include-failed) \
	  $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)")
export: install
	$(BIN)/python -m autograder export $(HANDBACK_ARGS) \
	  $(if $(GRADEBOOK),--gradebook "$(GRADEBOOK)") $(if $(WORKSHEET),--worksheet "$(WORKSHEET)")

return: install
	$(BIN)/python -m autograder return $(HANDBACK_ARGS) $(if $(DRY_RUN),--dry-run) \
	  $(if $(STUDENTS),--students "$(STUDENTS)")

table: install
	$(BIN)/python -m autograder table

## Copied answers across the class (submitted/): similarity.csv and similarity.html beside
## grades.csv, for the instructor to read; never a grade (docs/similarity.md).
similarity: install
	$(BIN)/python -m autograder similarity

## The class at a glance after grading (docs/report.md): report/index.html, its PNGs and
## class.json; LEADERBOARD=1 also writes report/leaderboard.html for students (pseudonyms).
report: install
	$(BIN)/python -m autograder report $(if $(LEADERBOARD),--leaderboard)

test: install colab-venv
	$(BIN)/ruff check .
	@# the layers of course/ and autograder/, no import cycle, the sample class kept apart
	@# (contracts in pyproject.toml, docs/architecture.md)
	$(BIN)/lint-imports
	@# types of course/ and autograder/ ([tool.mypy] in pyproject.toml)
	$(BIN)/mypy
	@# --dist loadfile: every test of a file on one worker (module-scoped fixtures built once);
	@# --no-loadscope-reorder: files start in the order tests/conftest.py sorts them (the
	@# longest first, the two files reading the sample class right after them), not by their
	@# number of tests. The sample class is graded once, in the background, from the start of
	@# the run (tests/sample_class_grading.py).
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15

## The sample-class tests on the full class (every sample student; `make test` grades the core
## class).
test-class: install
	COURSE_SAMPLE_CLASS=full $(BIN)/python -m pytest tests/test_sample_class.py tests/test_sample_class_views.py -rs --durations=5

## Random student edits (copies, scratch cells, deleted, swapped, pasted and retyped cells, 4.4
## without ids, kernelspecs) of every notebook: EDITS notebooks through the course's sanitize
## pipeline (`make test` runs 60), and EDITS_END_TO_END edited copies of notebook 01 graded by
## `nbgrader autograde` itself. tests/test_edits.py says what each part shows.
EDITS ?= 1200
EDITS_END_TO_END ?= 12
test-edits: install
	COURSE_EDITS_EXAMPLES=$(EDITS) COURSE_EDITS_END_TO_END=$(EDITS_END_TO_END) \
		$(BIN)/python -m pytest tests/test_edits.py -s -rs --durations=5

## Every notebook of the Korean release, both tracks, run with the solutions on the simulator:
## no line a Korean student reads holds English prose (`make test` runs a slice of five;
## tests/test_korean_outputs.py says which and why).
test-ko: install
	COURSE_KO_OUTPUTS=all $(BIN)/python -m pytest tests/test_korean_outputs.py -rs --durations=5

## Everything but the slow end-to-end tests (notebooks, sample class, browser).
test-fast: install
	$(BIN)/python -m pytest -m "not slow and not browser"

## On a machine with a CUDA GPU (and the driver; CuPy from `pip install ".[gpu]"` for the cuBLAS
## and CUDA C checks): the tests marked `gpu`, which everywhere else are skipped with a reason.
## -rs lists any that still skip, and why.
gpu-check: install
	$(BIN)/python -m pytest -m gpu -rs

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

## The figures, and their copies embedded in the notebooks (cell attachments).
figures: install
	$(BIN)/python scripts/build/make_figures.py --out assets
	$(BIN)/python scripts/build/make_figures.py --lang ko --out assets/ko
	$(BIN)/python -m autograder.release

clean:
	rm -rf student-dist build/student-wheel submitted autograded feedback gradebook.db grades.csv .nbgrader.log slurm-grading \
	  test-artifacts downloaded set_aside collection.csv sample-lms handback report
