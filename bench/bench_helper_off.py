#!/usr/bin/env python3
"""The prompt with the warm helper off, paired: two checkouts (or one checkout on two stores), prompt by prompt.

    .venv/bin/python bench/bench_helper_off.py --src A/src[,B/src] --store PROJECT [--rounds 18] [--merge a|b]

Each side gets its own copy of PROJECT (a project folder holding `.rose/`, e.g. one bench_scale.py --stores kept),
caught up by its own code (`rose index`: a migration runs there, not in a measured prompt). `--merge a|b` first
merges that side's full-text index into one piece (rose.store.fulltext, what the warm helper does after a quiet
spell; that side's src must have it), so one checkout given twice measures the merge alone. Then the
UserPromptSubmit hook runs with ROSE_WARM_HELPER=0, the sides alternated prompt by prompt (the order swapped every
round), and a bare `python -c pass` each round. Whole-process CPU (rusage of the child): mean and median ratios to
the mean bare. bench_scale.py's "helper off" is the same hook, one checkout at a time.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as scale

MERGE = """
import sys
from pathlib import Path
from rose.model import Scope
from rose.store import Store
from rose.store.fulltext import merge, size
store = Store(Path(sys.argv[1]), Scope.PROJECT)
before = size(store.index.conn)
steps = merge(store.index.conn, store.lock)
print(f"{steps} steps, {before} -> {size(store.index.conn)} bytes")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="one or two src/ folders, comma-separated (one: both sides)")
    parser.add_argument("--store", required=True, help="a project folder holding .rose/")
    parser.add_argument("--rounds", type=int, default=18)
    parser.add_argument("--merge", choices=["a", "b"], help="merge this side's full-text index first")
    args = parser.parse_args()
    srcs = [Path(s) for s in args.src.split(",")]
    srcs = srcs * 2 if len(srcs) == 1 else srcs
    tmp = Path(tempfile.mkdtemp(prefix="rose-bench-off-"))
    try:
        benches, projects = [], []
        for side, src in zip("ab", srcs):
            (tmp / side).mkdir()
            bench = scale.Bench(src, tmp / side, 1)
            project = tmp / side / "p"
            shutil.copytree(args.store, project, symlinks=True)
            bench.rose(["index"], project)
            if args.merge == side:
                done = subprocess.run([sys.executable, "-c", MERGE, str(project / ".rose")], env=bench.env,
                                      capture_output=True, text=True, check=True)
                print(f"{side}: merged, {done.stdout.strip()}")
            benches.append(bench)
            projects.append(project)
        cpu: list[list[float]] = [[], []]
        bare: list[float] = []
        for r in range(args.rounds):
            for i in ((0, 1) if r % 2 == 0 else (1, 0)):
                off = {**benches[i].env, "ROSE_WARM_HELPER": "0"}
                cpu[i].append(benches[i].prompt(projects[i], off, r)[0])
            bare.append(benches[0].run([sys.executable, "-c", "pass"], tmp, benches[0].env)[0])
        base = statistics.fmean(bare)
        print(f"bare `python -c pass`: {base * 1000:.1f} ms CPU (mean of {args.rounds})")
        for side, src, samples in zip("ab", srcs, cpu):
            merged = " (full-text index merged)" if args.merge == side else ""
            print(f"{side}: {src}{merged}: helper off {statistics.fmean(samples) / base:.2f}x mean, "
                  f"{statistics.median(samples) / base:.2f}x median")
        print(f"b/a: {statistics.fmean(cpu[1]) / statistics.fmean(cpu[0]):.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
