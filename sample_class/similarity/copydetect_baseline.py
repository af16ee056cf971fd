"""The baseline docs/similarity.md compares with: copydetect 0.5 at its defaults (k=25, window
1, report threshold 0.33) on the similarity class, the release's answer cells as boilerplate,
each student's code answers of a notebook as one file. ``python -m
sample_class.similarity.copydetect_baseline [COURSE]`` after ``python -m sample_class.similarity
COURSE`` (default build/similarity-demo)."""
import itertools
import sys
import tempfile
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files
from autograder.similarity import answers
from sample_class.similarity import copied_pairs, honest_pairs
root = Path(__file__).resolve().parents[2]
course = Path(sys.argv[1]) if sys.argv[1:] else root / 'build' / 'similarity-demo'
nbs = answers.released_notebooks(root)
out = Path(tempfile.mkdtemp())
docs = {}
for student, name, nb in answers.handed_in(root, course / 'submitted', nbs):
    g = answers.given(root, name)
    text = "\n".join(a.text for a in answers.student_answers(nb, g) if a.kind == 'code')
    p = out / f"{student}__{name}.py"; p.write_text(text); docs.setdefault(name, {})[student] = p
for name in nbs:
    sol = "\n".join(a.text for a in answers.solution(root, name) if a.kind == 'code')
    p = out / f"solution__{name}.py"; p.write_text(sol); docs.setdefault(name, {})['solution'] = p
best = {}
for name, owners in docs.items():
    g = answers.given(root, name)
    bp = out / f"bp__{name}.py"; bp.write_text("\n".join(v[0].text for v in g.cells.values()))
    bpf = CodeFingerprint(str(bp), 25, 1)
    fps = {o: CodeFingerprint(str(p), 25, 1, boilerplate=np.array(sorted(bpf.hashes))) for o, p in owners.items()}
    for a, b in itertools.combinations(sorted(fps), 2):
        _, (s1, s2), _ = compare_files(fps[a], fps[b])
        key = frozenset((a, b)); best[key] = max(best.get(key, 0), s1, s2)
for label, group in (("copied", copied_pairs()), ("honest", honest_pairs())):
    vals = [best.get(frozenset(p), 0.0) for p in group]
    print(label, len(vals), "shown at 0.33:", sum(v >= 0.33 for v in vals),
          "min", round(min(vals), 2), "max", round(max(vals), 2))
