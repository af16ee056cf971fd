#!/usr/bin/env bash
# Everything the lent GPU must prove, in one call (the device tool runs it in the repo root):
#   bash scripts/gpu_session.sh            # results land in $OUT (or ./gpu-out)
# Needs the carried wheels in .whl/ (numpy<2.5 and nbgrader without its browser UI, see
# docs/gpu-runs.md) and bubblewrap's .deb in .debs/. Prints a short summary last.
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
QUICK=${QUICK:-}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/debs && for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export PATH=/tmp/debs/usr/bin:$PATH MPLBACKEND=Agg
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import course; from course import backend; backend.show()"; } | tee "$OUT/env.txt"

echo "== GPU tests"; python3 -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 \
  | tee "$OUT/pytest-gpu.log" | tail -4
echo "== occupancy vs driver"; python3 scripts/gpu_check_occupancy.py --out "$OUT/occupancy.md" \
  | tail -2
echo "== benchmarks"; python3 scripts/gpu_bench.py --out "$OUT/bench.md" ${QUICK:+--quick} \
  > "$OUT/bench.log" 2>&1; tail -12 "$OUT/bench.log"
echo "== sample class, real nbgrader autograde on this GPU"
python3 -m autograder.harness demo --json "$OUT/class.json" > "$OUT/class.txt" 2>&1
tail -22 "$OUT/class.txt"
python3 scripts/compare_scores.py "$OUT/class.json" --gpu | tee "$OUT/compare.txt" | tail -3
cp -r feedback "$OUT/" 2>/dev/null; tar czf "$OUT/feedback.tgz" feedback 2>/dev/null
