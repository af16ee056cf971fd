#!/usr/bin/env bash
# What the lent GPU must prove, in two calls of under ten minutes each (the device tool runs
# this in the repository root; results land in $OUT, or ./gpu-out):
#   bash scripts/gpu/session.sh bench   # GPU tests, occupancy vs driver, GEMM table, stability
#   bash scripts/gpu/session.sh class   # the sample class through real `nbgrader autograde`
#                                       # (ONLY_STUDENTS="ada_correct …": just those)
#   bash scripts/gpu/session.sh roofline  # ceilings, notebooks 00/04/05 executed, GPU tests
#   bash scripts/gpu/session.sh throughput  # grading seconds per student, serial vs parallel
#                                       # (FULL_SERIAL=1 FULL_PARALLEL=8 WORKERS=8: sizes)
#   bash scripts/gpu/session.sh throughput16  # the issue-21 measure: 16 submissions at a time
#                                       # (15 full + ivy), projected to 100 full (about 4 min)
#   bash scripts/gpu/session.sh throughput100  # issue 39's goal itself: 100 full submissions
#                                       # graded at once with the harness's default slots
#                                       # (1.25 per core), measured, not projected (~5 min)
#   bash scripts/gpu/session.sh slots   # the same 40 full submissions graded at 20 slots, then
#                                       # at 40 (SLOTS="20 40", STUDENTS=40), one host: does a
#                                       # slot buy more than 1.25 per core? (~6 min)
#   bash scripts/gpu/session.sh stagger # throughput16 twice on one host: the slots' notebooks
#                                       # staggered (the default), then in name order (~4 min)
#   bash scripts/gpu/session.sh hang    # kernels that never end, at 2048³ (yan) and at one
#                                       # checked shape (yul), graded beside 7 correct full
#                                       # submissions: every speedup check's seconds, GPU queue
#                                       # included (course/perf/budget.py, gpulock's launch limit)
#   bash scripts/gpu/session.sh printing  # issue 32: what a print in every thread of the naive
#                                       # kernel costs at 2048³ (both tracks), then rin and sol
#                                       # (printing naive kernels) graded beside ada, bea and the
#                                       # lazy, hanging and fake-kernel students: scores, and each
#                                       # speedup cell's verdict and note (~6 min)
#   bash scripts/gpu/session.sh printing-tests  # issue 32's GPU tests: a printing and a spinning
#                                       # naive kernel through the real check processes (~3 min)
#   bash scripts/gpu/session.sh profile  # CPU seconds of one full submission by notebook and
#                                       # process kind (scripts/gpu/profile_grading.py)
#   bash scripts/gpu/session.sh check-fork  # the GPU checks' fork server (course/trust/forking.py,
#                                       # off by default: 1 CPU-s of 31 saved on an H100): the
#                                       # probe, the profile cold then forked, the class forked
#                                       # (ONLY_STUDENTS for a part; ~8 min for the whole class);
#                                       # probe and profiles in one check-fork.tgz (a call
#                                       # brings back 8 files at most)
#   bash scripts/gpu/session.sh bench-grading  # issue 39: one full submission graded by the
#                                       # course's grader and by plain nbgrader, alternately
#                                       # (BENCH_ROUNDS=2 each): the CPU ratio (~4 min)
# throughput, throughput16, throughput100, slots, profile and bench-grading append a row to
# docs/grading-history.md and copy it to $OUT: put that copy back over docs/grading-history.md
# (COURSE_COMMIT=<commit> names the commit in the row, as the copy here has no git).
#   bash scripts/gpu/session.sh t4model   # the T4 estimate's claims, checked on this GPU
#                                         # (QUICK=1: fewer sizes; docs/t4-estimate.md)
#   bash scripts/gpu/session.sh probe     # GPU tests, the code policy's kernel rule against
#                                         # the compiler, the sandbox's GPU access, T4 model
#   bash scripts/gpu/session.sh cudac     # the CUDA C track: correctness, speedup stability,
#                                         # the write-up's experiment, racecheck, ladder
#   bash scripts/gpu/session.sh cudac-nb  # notebooks 04 and 06 on the CUDA C track: their
#                                         # course paths, GPU tests, both executed (~3 min)
#   bash scripts/gpu/session.sh traffic   # issue 31: ncu here, then bytes per memory level of
#                                         # both tracks at 1024-4096 (the table students get:
#                                         # scripts/gpu/traffic_table.py) and the counters' tests
#   bash scripts/gpu/session.sh setup     # only install (then run commands of your own)
#   bash scripts/gpu/session.sh smoke     # after a restructure: every GPU test, the Numba
#                                         # notebooks executed, a few students autograded
#   bash scripts/gpu/session.sh notebooks # every notebook of both tracks, top to bottom with
#                                         # the solutions, twice in a row (the second run finds
#                                         # what only a warm cache does), then once in Korean;
#                                         # any cell that raised or wrote to stderr is reported
#                                         # (~6 min)
# Needs the carried wheels in .whl/ (numpy<2.5 — the image's numpy 2.5 breaks every Numba
# compile — and nbgrader without its browser UI), .whl-grading/ for grading parts (Babel),
# .whl-fonts/ for every part that draws (NanumGothic: notebooks, the class report of class and
# profile), and bubblewrap's .deb in .debs/:
# `bash scripts/gpu/wheels.sh` fetches them here.
set -uo pipefail
PART=${1:-bench}
case "$PART" in  # an unknown part must not fall through to one that grades the whole class
  probe|smoke|notebooks|cudac|cudac-nb|bench|roofline|throughput|throughput16|throughput100|\
  slots|stagger|hang|profile|check-fork|\
  bench-grading|\
  t4model|class|printing|printing-tests|traffic|setup) ;;
  *) echo "unknown part: $PART (the parts are listed at the top of $0)"; exit 2 ;;
esac
case "$PART" in  # these draw figures with Hangul in them: without the font they fail at the end
  notebooks|roofline|smoke|cudac-nb|class|profile|check-fork)
    [ -n "$(ls .whl-fonts/*.whl 2>/dev/null)" ] || {
      echo "the $PART part draws figures with Korean text and needs NanumGothic: carry .whl-fonts" \
        "(bash scripts/gpu/wheels.sh fetches it)"; exit 2; } ;;
esac
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
# Every carried folder in ONE install: a second `pip install --target --upgrade` replaces the
# first one's bin/ (nbgrader, alembic) with its own. A warm machine keeps /tmp/site.
stamp=/tmp/site/.done-$(ls -d .whl*/ | tr -d '/\n')
if [ ! -f "$stamp" ]; then
  rm -rf /tmp/site
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl*/*.whl || exit 1
  # Byte-compile once, here: the graders' sandboxes see /tmp/site and the repository read-only,
  # so without .pyc files every kernel and check process compiles numpy, nbformat and the
  # course from source again (measured on the H200: `import numpy` 2.17 CPU-s without, 0.84
  # with; grading starts some 60 such processes per submission).
  python3 -m compileall -q -j 0 /tmp/site "$PWD/course" "$PWD/autograder" "$PWD/sample_class" \
    > /dev/null
  touch "$stamp"
fi
export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/debs && for f in .debs/*.deb; do dpkg -x "$f" /tmp/debs; done
export PATH=/tmp/debs/usr/bin:/tmp/site/bin:$PATH MPLBACKEND=Agg JUPYTER_PATH=/tmp/site/share/jupyter
# The GPU's and the machine's busy share every second, beside a grading measure: $OUT/NAME-gpu-busy.csv
# and $OUT/NAME-vmstat.txt (busy_start NAME … busy_stop).
busy_start() {
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -l 1 \
    > "$OUT/$1-gpu-busy.csv" 2>/dev/null & busy_gpu=$!
  vmstat -n 1 > "$OUT/$1-vmstat.txt" 2>/dev/null & busy_cpu=$!
}
busy_stop() { kill "$busy_gpu" "$busy_cpu" 2>/dev/null; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import course; from course.tools import backend; backend.show()"; } | tee "$OUT/env-$PART.txt"

if [ "$PART" = probe ]; then
  echo "== GPU tests"; timeout 300 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests \
    --continue-on-collection-errors 2>&1 | tee "$OUT/pytest-gpu.log" | tail -8
  echo "== the kernel rule of the code policy, against what Numba compiles for this GPU"
  python3 scripts/gpu/policy_probe.py --json "$OUT/policy-probe.json" 2>&1 \
    | tee "$OUT/policy-probe.txt" | tail -40
  echo "== CUDA inside the grading sandbox (minimal files, limits, no network)"
  timeout 300 python3 -m pytest -q -p no:cacheprovider -rs tests/test_sandbox.py \
    tests/test_isolation.py -k "not end_to_end" 2>&1 | tee "$OUT/pytest-isolation.log" | tail -6
  echo "== T4 model check (quick)"
  QUICK=1 timeout 240 python3 scripts/gpu/t4_model_check.py --out "$OUT/t4-model-check.md" \
    --quick 2>&1 | tail -25
elif [ "$PART" = smoke ]; then
  echo "== every GPU test"
  timeout 240 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests 2>&1 \
    | tee "$OUT/pytest-gpu.log" | tail -8
  echo "== the Numba notebooks 00-07 executed with the solutions (copies in $OUT/executed)"
  timeout 200 python3 scripts/gpu/run_notebooks.py --track numba --out "$OUT/executed" 2>&1 \
    | grep -v "without encryption" | tail -15
  echo "== a few students through real nbgrader autograde"
  python3 -m sample_class --json "$OUT/smoke.json" --class full \
    --students ada_correct,zoe_lazy_at_large_k,bea_cuda_correct,ivy_global_inner_loop \
    > "$OUT/smoke.txt" 2>&1
  python3 scripts/gpu/compare_scores.py "$OUT/smoke.json" --gpu --only-present | tail -4
  grep -E "^(ada|zoe|bea|ivy)" "$OUT/smoke.txt" | cut -c1-160
elif [ "$PART" = notebooks ]; then
  # Each pass runs both tracks side by side (02/03 or 02c/03c; 00, 01, 04-07 on each), so
  # every notebook runs at least twice a pass; the second pass finds the machine warm (Numba's
  # and NVRTC's caches filled by the first).
  # A third pass speaks Korean (COURSE_LANG=ko: every message, table and figure of the
  # Korean release, on the same code cells).
  # PASSES="1 ko": one English and the Korean pass only (a short call; the second English
  # pass finds what only a warm cache does).
  fails=0
  for pass in ${PASSES:-1 2 ko}; do
    lang=en; [ "$pass" = ko ] && lang=ko
    for track in numba cuda; do
      COURSE_LANG=$lang PYTHONUNBUFFERED=1 timeout 200 python3 scripts/gpu/run_notebooks.py \
        --track "$track" --any-stderr --out "$OUT/nb/$track-$pass" \
        > "$OUT/notebooks-$track-$pass.txt" 2>&1 &
    done
    for job in $(jobs -p); do wait "$job" || fails=$((fails + 1)); done
    for track in numba cuda; do
      echo "== pass $pass ($lang), $track track"
      grep -v "without encryption" "$OUT/notebooks-$track-$pass.txt"
    done
  done
  echo "== English prose or missing glyphs in the Korean pass (its GPU-only lines included)"
  python3 - "$OUT/nb" <<'PY' | tee "$OUT/notebooks-ko-english.txt" || fails=$((fails + 1))
import pathlib, sys
import nbformat
sys.path.insert(0, "tests")
from korean_outputs import english_prose, missing_glyphs  # the test's own detector
found = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("*-ko/*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    found += [f"{path.parent.name}/{path.name}: {f}" for f in english_prose(nb) + missing_glyphs(nb)]
print("\n".join(found) or "none")
sys.exit(1 if found else 0)
PY
  (cd "$OUT" && tar czf notebooks-executed.tgz nb && rm -rf nb)
  echo "notebook runs with a problem (or cut off by the time limit): $fails of $(( $(echo ${PASSES:-1 2 ko} | wc -w) * 2 + 1 ))"
  [ "$fails" = 0 ]
elif [ "$PART" = cudac ]; then
  echo "== CUDA C track on this GPU (full numbers in $OUT/gpu_cudac.json)"
  timeout 540 python3 scripts/gpu/cudac.py ${QUICK:+--quick} 2>&1 | tee "$OUT/gpu_cudac.log" \
    | tail -45
elif [ "$PART" = cudac-nb ]; then
  echo "== notebook 04's and 06's CUDA C paths on the course's solutions"
  timeout 150 python3 scripts/gpu/cudac.py --only experiment,occupancy 2>&1 \
    | tee "$OUT/gpu_cudac-nb.log" | tail -32
  echo "== GPU tests of those paths"
  timeout 120 python3 -m pytest -q -p no:cacheprovider -rs -m gpu \
    tests/test_cudac_experiment.py tests/test_track_kernels.py 2>&1 \
    | tee "$OUT/pytest-gpu-cudac-nb.log" | tail -4
  echo "== notebooks 04 and 06 as a CUDA C student's (02/03 left out; copies in $OUT/executed-cudac)"
  timeout 300 python3 scripts/gpu/run_notebooks.py 04 06 --track cuda --out "$OUT/executed-cudac" \
    2>&1 | grep -v "without encryption"
elif [ "$PART" = bench ]; then
  echo "== GPU tests"; python3 -m pytest -q -p no:cacheprovider -m gpu tests 2>&1 \
    | tee "$OUT/pytest-gpu.log" | tail -4
  echo "== occupancy vs driver"
  python3 scripts/gpu/check_occupancy.py --out "$OUT/occupancy.md" | tail -1
  echo "== benchmarks"; python3 scripts/gpu/bench.py --out "$OUT/bench.md" ${QUICK:+--quick} \
    > "$OUT/bench.log" 2>&1; tail -14 "$OUT/bench.log"
elif [ "$PART" = roofline ]; then
  echo "== ceilings"; python3 scripts/gpu/ceilings.py --out "$OUT/ceilings.md" 2>&1 | tail -30
  echo "== notebooks 00, 04, 05 on this GPU (executed copies in $OUT/executed)"
  python3 scripts/gpu/run_notebooks.py 00 04 05 --out "$OUT/executed" 2>&1 | grep -v "without encryption"
  echo "== GPU tests"; python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests 2>&1 \
    | tee "$OUT/pytest-gpu.log" | tail -4
  echo "== GEMM table, quick (cuBLAS through course.perf.ceilings)"
  python3 scripts/gpu/bench.py --quick --out "$OUT/bench-quick.md" 2>&1 | tail -16
elif [ "$PART" = throughput ]; then
  # About 5 minutes with the defaults on the H200; every phase's result is in throughput.md
  # as soon as it ends, so a run cut short still reports what it measured.
  echo "== grading throughput: ${FULL_SERIAL:-1} full submission(s) serial, then" \
       "${FULL_PARALLEL:-8} in parallel (${WORKERS:-1.25 per core} at a time)"
  python3 scripts/gpu/throughput.py --full-serial "${FULL_SERIAL:-1}" \
    --full-parallel "${FULL_PARALLEL:-8}" ${WORKERS:+--workers "$WORKERS"} \
    --out "$OUT/throughput.md" 2>&1 | tee "$OUT/throughput.log" | grep -v "^  " | tail -30
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = throughput16 ]; then
  # 16 submissions at once on 16 cores: 15 full ones and ivy (a fake tiled kernel, so that a
  # failing ratio is measured under load too); the projection divides by the 15 full ones only.
  echo "== grading throughput: 15 full submissions + ivy, 16 at a time (no serial phase)"
  # The GPU's and the machine's busy share every second beside it: at 16 at a time the cores
  # were 39 % busy (H100, 2026-12-07), so what the slots wait for is the next question.
  busy_start throughput16
  python3 scripts/gpu/throughput.py --skip-serial --full-parallel 15 --workers 16 \
    --out "$OUT/throughput16.md" 2>&1 | tee "$OUT/throughput16.log" | grep -v "^  " | tail -30
  busy_stop
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = stagger ]; then
  # throughput16 twice on one host: the slots' notebooks staggered (the default), then all in
  # name order (--no-stagger), with the cores' and the GPU's busy share beside each.
  for mode in stagger no-stagger; do
    echo "== grading throughput: 15 full submissions + ivy, 16 at a time, $mode"
    busy_start "$mode"
    python3 scripts/gpu/throughput.py --skip-serial --full-parallel 15 --workers 16 \
      $([ "$mode" = no-stagger ] && echo --no-stagger) --out "$OUT/$mode.md" 2>&1 \
      | tee "$OUT/$mode.log" | grep -v "^  " | grep -v "^speedup" | tail -8
    busy_stop
  done
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = throughput100 ]; then
  # The class the goal speaks of, graded as an instructor would (`make grade`'s default slots):
  # no projection from 16, and no check student, so that 100 fill whole rounds.
  echo "== grading throughput: 100 full submissions, the harness's default slots"
  busy_start throughput100
  python3 scripts/gpu/throughput.py --skip-serial --full-parallel 100 --checks '' \
    --out "$OUT/throughput100.md" 2>&1 | tee "$OUT/throughput100.log" | grep -v "^  " | tail -30
  busy_stop
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = slots ]; then
  # One class, two slot counts, on one host (hosts of one kind differ by a third in CPU speed:
  # docs/gpu-runs/2026-12-07-issue-39-h100-20fc130): students per second at each, and the cores'
  # and the GPU's busy share beside each run.
  for w in ${SLOTS:-20 40}; do
    echo "== grading throughput: ${STUDENTS:-40} full submissions, $w at a time"
    busy_start "slots$w"
    python3 scripts/gpu/throughput.py --skip-serial --full-parallel "${STUDENTS:-40}" --checks '' \
      --workers "$w" --out "$OUT/slots$w.md" 2>&1 | tee "$OUT/slots$w.log" | grep -v "^  " | tail -8
    busy_stop
  done
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = hang ]; then
  echo "== hanging tiled kernels (yan at the timed size, yul at one checked shape) graded beside"
  echo "   7 correct full submissions and zoe (lazy at the timed size), all 10 at once"
  COURSE_CELL_TIMEOUT=${COURSE_CELL_TIMEOUT:-240} python3 scripts/gpu/throughput.py \
    --skip-serial --full-parallel 7 \
    --checks yan_spins_at_large_k,yul_spins_at_one_shape,zoe_lazy_at_large_k \
    --workers 10 --no-history --out "$OUT/hang.md" 2>&1 | tee "$OUT/hang.log" | grep -v "^  " | tail -30
elif [ "$PART" = printing ]; then
  echo "== a print in every thread of the naive kernel at 2048³: seconds per launch, both tracks"
  timeout 150 python3 scripts/gpu/device_print_cost.py --json "$OUT/device-print-cost.json" \
    2>&1 | tee "$OUT/device-print-cost.txt"
  who=rin_prints_in_naive,sol_cuda_printf_in_naive,ada_correct,bea_cuda_correct
  who=$who,zoe_lazy_at_large_k,yan_spins_at_large_k,yul_spins_at_one_shape,kim_fake_kernel
  who=$who,ivy_global_inner_loop,gwen_cuda_global_inner_loop,hana_cuda_compile_and_types
  echo "== graded through real nbgrader autograde: ${who//,/ }"
  timeout 400 python3 -m sample_class --json "$OUT/printing.json" --class full \
    --students "$who" > "$OUT/printing.txt" 2>&1
  grep -E "^[a-z]+_[a-z_]+ +[0-9]+ notebook" "$OUT/printing.txt" | cut -c1-100
  python3 scripts/gpu/compare_scores.py "$OUT/printing.json" --gpu --only-present \
    | tee "$OUT/printing-compare.txt"
  python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1]); rows = {}
for nb, cell in (("03_tiled_gemm", "tiled_gemm_speedup"),
                 ("03c_tiled_gemm_cuda", "tiled_gemm_cuda_speedup")):
    for p in sorted(pathlib.Path("autograded").glob(f"*/week4/{nb}.trusted.json")):
        c = json.loads(p.read_text())["cells"].get(cell, {})
        graded = json.loads(p.with_name(f"{nb}.ipynb").read_text())  # the cell's outputs
        text = "".join("".join(o.get("text", "")) for g in graded["cells"]
                       if g.get("metadata", {}).get("nbgrader", {}).get("grade_id") == cell
                       for o in g.get("outputs", []) if o.get("output_type") == "stream")
        c["stdout"] = text
        rows[f"{p.parts[1]} {nb[:3]}"] = c
        shown = [l for l in text.splitlines() if l.startswith(("Note:", "✓"))]
        print(f"{p.parts[1]:28} {nb[:3]} {c.get('status')}: "
              + " | ".join(shown + [(c.get("evalue") or "")[:300]]).strip(" |"))
(out / "printing-speedup-cells.json").write_text(json.dumps(rows, indent=1))
PY
  tar czf "$OUT/printing-feedback.tgz" feedback 2>/dev/null
elif [ "$PART" = printing-tests ]; then
  echo "== issue 32's GPU tests, and the budget's and the speedups' own"
  timeout 400 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/test_speedup_baseline.py \
    tests/test_timing_budget.py tests/test_cudac_speedup.py 2>&1 \
    | tee "$OUT/pytest-gpu-printing.log" | tail -12
elif [ "$PART" = traffic ]; then
  echo "== the profiler here: ncu, its version, the metrics the course reads, CUPTI's Python"
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null); echo "ncu: $NCU"
  "$NCU" --version 2>&1 | tail -1
  "$NCU" --query-metrics 2>/dev/null | grep -E "^(dram__bytes|lts__t_bytes|l1tex__t_bytes|\
(dram|lts|l1tex)__cycles_elapsed|gpu__time_duration) " | cut -c1-90 | tee "$OUT/ncu-metrics.txt"
  python3 -c "import cupti; print('cupti-python', cupti.__version__)" 2>&1 | tail -1
  echo "== issue 31: bytes per level of both tracks' kernels at 1024, 2048 and 4096 (~4 min)"
  timeout 420 python3 scripts/gpu/traffic_table.py --json "$OUT/recorded_traffic.json" \
    --markdown "$OUT/traffic-table.md" 2>&1 | tee "$OUT/traffic.log" | tail -40
  echo "== the counters' GPU tests"
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/test_counters.py 2>&1 \
    | tee "$OUT/pytest-gpu-counters.log" | tail -8
elif [ "$PART" = profile ]; then
  echo "== CPU seconds of one full submission (ada_correct), by notebook and process kind"
  python3 scripts/gpu/profile_grading.py --startup --out "$OUT/profile.md" 2>&1 | tail -45
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = check-fork ]; then
  # Whether COURSE_CHECK_FORK=1 earns its place (on an H100, 2026-12-07: 1 CPU-s of 31, so off):
  # may the server fork here (libcuda unmapped after each import), what it saves (one host,
  # the profile part cold then forked: the forked checks count as "trusted", not
  # "trusted-isolated"), and the class part with it.
  echo "== what the fork server may import before it forks (libcuda must stay unmapped)"
  python3 scripts/gpu/fork_probe.py 2>&1 | tee "$OUT/fork-probe.txt"
  for fork in 0 1; do
    COURSE_CHECK_FORK=$fork bash "$0" profile | grep "Per full\|processes started\|Total:"
    mv "$OUT/profile.md" "$OUT/profile-fork$fork.md"
    mv "$OUT/profile.log" "$OUT/profile-fork$fork.log"
  done
  (cd "$OUT" && tar czf check-fork.tgz fork-probe.txt profile-fork* env-profile.txt \
     && rm -f fork-probe.txt profile-fork* env-profile.txt)
  COURSE_CHECK_FORK=1 bash "$0" class
elif [ "$PART" = bench-grading ]; then
  echo "== one full submission: the course's grader and plain nbgrader, alternately"
  python3 scripts/gpu/bench_grading.py --rounds "${BENCH_ROUNDS:-2}" 2>&1 \
    | tee "$OUT/bench-grading.log" | tail -20
  cp docs/grading-history.md "$OUT/"
elif [ "$PART" = t4model ]; then
  echo "== the T4 model's claims on this GPU (report in $OUT/t4-model-check.md)"
  python3 scripts/gpu/t4_model_check.py --out "$OUT/t4-model-check.md" ${QUICK:+--quick} \
    2>&1 | tail -40
elif [ "$PART" = setup ]; then
  echo "installed; for further commands: PYTHONPATH=/tmp/site:$PWD PATH=/tmp/debs/usr/bin:/tmp/site/bin:\$PATH"
elif [ "$PART" = class ]; then
  echo "== sample class, real nbgrader autograde on this GPU ${ONLY_STUDENTS:+(only $ONLY_STUDENTS)}"
  # ONLY_STUDENTS (space-separated): a part of the class, to fit a short GPU call.
  # The full class (the demo's default is the core class), or ONLY_STUDENTS.
  # 60 s a cell (the demo's), so that the hanging students (fay, seo) cost minutes, not the
  # 600 s of a real grading's cell limit: with that, the full class does not fit in one
  # 10-minute call (2026-12-02). The rest of a notebook after a timeout keeps its default 60 s:
  # with the demo's 20 s, yul's speedup check ran out of it in the full class's GPU queue.
  COURSE_CELL_TIMEOUT=${COURSE_CELL_TIMEOUT:-60} \
  python3 -m sample_class --json "$OUT/class.json" --class full \
    ${ONLY_STUDENTS:+--students "${ONLY_STUDENTS// /,}"} > "$OUT/class.txt" 2>&1
  tail -20 "$OUT/class.txt" | cut -c1-110
  python3 scripts/gpu/compare_scores.py "$OUT/class.json" --gpu ${ONLY_STUDENTS:+--only-present} | tee "$OUT/compare.txt" | tail -4
  python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1]); rows = {}
for p in sorted(pathlib.Path("autograded").glob("*/week4/03_tiled_gemm.trusted.json")):
    d = json.loads(p.read_text())
    rows[p.parts[1]] = d["cells"]
(out / "trusted-03.json").write_text(json.dumps(rows, indent=1))
for s, cells in rows.items():
    c = cells.get("tiled_gemm_speedup", {})
    print(f"{s:26} speedup: {c.get('status')} {c.get('evalue', '')[:90]}")
PY
  tar czf "$OUT/feedback.tgz" feedback 2>/dev/null
  # the class report the demo ended with (docs/report.md): the roofline shows the measured kernels
  tar czf "$OUT/report.tgz" report 2>/dev/null
fi
