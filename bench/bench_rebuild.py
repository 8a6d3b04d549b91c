"""Paired rebuilds: `rose index --rebuild` of two checkouts, alternately, each on its own copy of a store.

    .venv/bin/python bench/bench_rebuild.py --src MAIN/src,BRANCH/src --stores COPY_A,COPY_B [--rounds 4]

Each copy is a project folder holding `.rose/` (copy a store made by bench_scale.py --stores; the copies are
rebuilt in place). Whole-process CPU (user + system, rusage of the child) of each rebuild, and of a bare
`python -c pass` of the same environment before each, so a loaded machine shows in the baseline. The first round
of a checkout on a copy its parser did not index re-redacts every file (the clean_files digest covers the parser's
source): run a round more than you read, or read the later rounds. The issue's targets are in seconds; the "x bare"
figure is the same median over the bare interpreter, for comparing machines of different speeds.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def cpu_of(argv: list[str], cwd: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="two src/ folders, comma-separated")
    parser.add_argument("--stores", required=True, help="two project folders (each holding .rose/), comma-separated")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    srcs = [str(Path(p).resolve()) for p in args.src.split(",")]
    stores = [str(Path(p).resolve()) for p in args.stores.split(",")]
    if len(srcs) != 2 or len(stores) != 2:
        parser.error("--src and --stores each take two folders")
    for store in stores:
        if not (Path(store) / ".rose").is_dir():
            parser.error(f"{store} holds no .rose/")
    home = tempfile.mkdtemp(prefix="rose-bench-rebuild-")
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_") and k != "PYTHONDONTWRITEBYTECODE"}
    base.update(HOME=home, ROSE_HOME=str(Path(home) / ".rose"), TMPDIR=home)
    for src in srcs:   # an installed package: bytecode compiled, as pip does
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], stdout=subprocess.DEVNULL, check=False)
    cpu: list[list[float]] = [[], []]
    bare: list[float] = []
    for _ in range(args.rounds):
        for side in (0, 1):
            env = {**base, "PYTHONPATH": srcs[side]}
            bare.append(cpu_of([sys.executable, "-c", "pass"], home, env))
            cpu[side].append(cpu_of([sys.executable, "-m", "rose", "index", "--rebuild"], stores[side], env))
            print(f"  {'ab'[side]}: {cpu[side][-1]:.2f} s", file=sys.stderr, flush=True)
    bare_s = statistics.median(bare)
    print(f"bare `python -c pass`: {bare_s * 1000:.1f} ms CPU (median of {len(bare)}, same run)")
    for side in (0, 1):
        runs = " ".join(f"{c:.2f}" for c in cpu[side])
        print(f"{'ab'[side]} {srcs[side]}: rebuild CPU s {runs}; median {statistics.median(cpu[side]):.2f}, "
              f"later rounds' median {statistics.median(cpu[side][1:] or cpu[side]):.2f} "
              f"({statistics.median(cpu[side][1:] or cpu[side]) / bare_s:.0f}x bare)")
    ratio = statistics.median(cpu[1][1:] or cpu[1]) / statistics.median(cpu[0][1:] or cpu[0])
    print(f"b / a, later rounds: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
