#!/usr/bin/env python3
"""How long `rose status` and `rose index` take on 1,000 and 10,000 lessons, beside a bare `python -c pass`.

    python3 dev.py bench store          (or: .venv/bin/python bench/bench_store.py [--sizes 1000,10000])

Each figure is the median of N runs of a fresh process, as a user's shell runs it; the ratio column divides by
the bare interpreter measured in the same run, so a noisy shared machine moves both.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.gen_store import populate  # noqa: E402


def timed(argv: list[str], cwd: Path, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory(prefix="rose-bench-") as tmp:
        base = timed([py, "-c", "pass"], Path(tmp), args.runs)
        rows.append(("python -c pass", "-", base))
        for size in [int(s) for s in args.sizes.split(",")]:
            project = Path(tmp) / f"p{size}"
            project.mkdir()
            start = time.perf_counter()
            populate(project / ".rose", size)
            build = time.perf_counter() - start
            print(f"generated {size} lessons in {build:.1f}s", file=sys.stderr)
            for label, argv in (("rose status", ["status"]), ("rose status --json", ["status", "--json"]),
                                ("rose index (catch-up)", ["index"]),
                                ("rose index --rebuild", ["index", "--rebuild"])):
                rows.append((label, str(size), timed([py, "-m", "rose", *argv], project, args.runs)))
    print(f"{'command':<24} {'lessons':>8} {'median':>10} {'x bare':>8}")
    for label, size, seconds in rows:
        print(f"{label:<24} {size:>8} {seconds * 1000:>8.0f}ms {seconds / base:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
