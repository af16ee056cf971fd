#!/usr/bin/env bash
# Fetch, on this machine, what the GPU session (scripts/gpu/session.sh) carries to the lent
# GPU machine: wheels for Python 3.12 and bubblewrap's .deb in .debs/ (git-ignored through
# .git/info/exclude). The GPU image has CUDA, CuPy, Numba and the scientific stack, but
# numpy 2.5 (which breaks every Numba compile) and no Jupyter or nbgrader: these are what
# `nbgrader autograde` and the notebook runner import beyond it. A call may carry 64 MiB with
# the repository, so the wheels come in three folders, carried as a call needs them:
#   .whl/          always: numpy, Jupyter, nbgrader (about 33 MiB, slimmed below)
#   .whl-grading/  grading calls (class, throughput, hang): Babel, for the Korean release, and
#                  nh3, which cleans every autograded notebook (autograder/viewing/)
#   .whl-fonts/    notebook runs: koreanize-matplotlib's NanumGothic, for Korean figures
# (IPython's optional jedi and ipykernel's optional debugpy are left out: 10 MiB.)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PY:-.venv/bin/python}
PACKAGES=(
  numpy==2.4.6 pyelftools==0.33 greenlet==3.5.6 nbgrader==0.9.6 nbclient==0.11.0 nbformat==5.11.1
  nbconvert==7.17.2 ipykernel==7.4.0 ipywidgets==8.1.9
  # what those import that the image lacks
  alembic mako sqlalchemy rapidfuzz argon2-cffi argon2-cffi-bindings cffi pycparser
  asttokens executing pure-eval stack-data comm ipython ipython-pygments-lexers
  matplotlib-inline nest-asyncio2 pexpect ptyprocess prompt-toolkit wcwidth traitlets
  tornado pyzmq jupyter-client jupyter-core platformdirs jupyterlab-widgets
  beautifulsoup4 soupsieve bleach tinycss2 webencodings defusedxml mistune pandocfilters
  jupyterlab-pygments fastjsonschema jsonschema jsonschema-specifications referencing rpds-py
  jupyter-server jupyter-server-terminals terminado send2trash jupyter-events
  python-json-logger overrides websocket-client arrow fqdn isoduration jsonpointer
  rfc3339-validator rfc3986-validator uri-template webcolors tzdata
)
download() {  # folder, packages…
  local folder=$1; shift
  rm -rf "$folder" && mkdir -p "$folder"
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --abi cp312 --abi abi3 --abi none \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --platform any \
    -c constraints.txt -d "$folder" "$@"
}
download .whl "${PACKAGES[@]}"
download .whl-grading babel nh3
download .whl-fonts koreanize-matplotlib
mkdir -p .debs && (cd .debs && apt-get download bubblewrap)
# Slim the two largest wheels for the call's 64 MiB: nbgrader's documentation and tests (10 of
# its 11 MB; grading never reads them), Babel's locale data but root, English and Korean.
"$PY" - <<'SLIM'
import glob, re, zipfile, os
drop = {"nbgrader": re.compile(r"nbgrader/(docs|tests)/"),
        "babel": re.compile(r"babel/locale-data/(?!(root|en|en_\w+|ko|ko_\w+)\.dat$)")}
for wheel in glob.glob(".whl*/*.whl"):
    name = os.path.basename(wheel).split("-")[0]
    if name not in drop:
        continue
    slim = wheel + ".slim"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(slim, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            if not drop[name].match(item.filename):
                dst.writestr(item, src.read(item))
    os.replace(slim, wheel)
SLIM
for folder in /.whl/ /.whl-grading/ /.whl-fonts/ /.debs/; do
  grep -qx "$folder" .git/info/exclude 2>/dev/null || echo "$folder" >> .git/info/exclude
done
du -sh .whl .whl-grading .whl-fonts .debs
