"""Inspection commands without the warm helper: each `rose <command>` in its own process, as a ratio to bare Python.

    .venv/bin/python bench/bench_commands_cold.py --src MAIN/src[,BRANCH/src] --store PROJECT[,PROJECT2] [--rounds 7]

PROJECT is a project folder holding `.rose/` (a copy of a store made by bench_scale.py --stores; the commands only
read it, but the first one may catch its index up; give each checkout a copy of its own, PROJECT2 for BRANCH, when
one of them migrates the index, or the other side reads the first one's new tables too). ROSE_WARM_HELPER=0, so no
command is served by a helper. Each round runs a bare `python -c pass` of the same interpreter and environment, then
every command once per checkout, the checkouts alternated command by command, so a loaded machine shows in the
baseline and falls on both sides alike. Whole-process CPU (user + system, rusage of the child); medians over the
rounds; ratios to the bare median. Each round also runs the stat-only floor: a bare Python that lists every lesson
folder and stats each file in it, nothing else, what any command that sees an in-place edit at once must at least do
(the files are the source of truth, and an edit in place changes no folder's mtime).
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
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


# The floor: the folders of .rose/nodes/ listed, each lesson file stat-ed by name against its folder, in C.
_FLOOR = """
import os, sys
for family in os.scandir(sys.argv[1]):
    if family.is_dir(follow_symlinks=False):
        fd = os.open(family.path, os.O_RDONLY | os.O_DIRECTORY)
        with os.scandir(fd) as entries:
            list(map(os.DirEntry.stat, [e for e in entries if e.name.endswith(".md")]))
        os.close(fd)
"""


def a_lesson_id(store: Path) -> str:
    """The id of one lesson of the store (its file's name), for `rose show`."""
    for path in sorted((store / ".rose" / "nodes").rglob("n_*.md")):
        return path.stem
    raise SystemExit(f"{store} holds no lesson under .rose/nodes/")


def commands(lesson: str, query: str) -> list[tuple[str, list[str]]]:
    return [("status", ["status"]), ("list", ["list"]), ("tree", ["tree"]), ("conflicts", ["conflicts"]),
            ("show", ["show", lesson]), ("credit", ["credit"]), ("doctor", ["doctor"]),
            ("evolution", ["evolution"]), ("search", ["search", query]),
            ("recall", ["recall", "--prompt", query]), ("trace", ["trace", "--prompt", query])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="one or two src/ folders, comma-separated")
    parser.add_argument("--store", required=True,
                        help="a project folder holding .rose/, or one per --src, comma-separated")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--query", default="redis cache ttl",
                        help="what `rose search` looks for (and `rose recall` / `rose trace` are asked)")
    parser.add_argument("--only", default="", help="command names to run, comma-separated (default: all)")
    args = parser.parse_args()
    srcs = [str(Path(p).resolve()) for p in args.src.split(",")]
    stores = [Path(p).resolve() for p in args.store.split(",")]
    if not 1 <= len(srcs) <= 2:
        parser.error("--src takes one or two folders")
    if len(stores) not in (1, len(srcs)):
        parser.error("--store takes one folder, or one per --src")
    stores = stores * (len(srcs) // len(stores))
    for store in stores:
        if not (store / ".rose").is_dir():
            parser.error(f"{store} holds no .rose/")
    store = stores[0]
    chosen = [c for c in commands(a_lesson_id(store), args.query)
              if not args.only or c[0] in args.only.split(",")]
    home = tempfile.mkdtemp(prefix="rose-bench-cold-")
    base = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_") and k != "PYTHONDONTWRITEBYTECODE"}
    base.update(HOME=home, ROSE_HOME=str(Path(home) / ".rose"), TMPDIR=home, ROSE_WARM_HELPER="0")
    for src in srcs:   # an installed package: bytecode compiled, as pip does
        subprocess.run([sys.executable, "-m", "compileall", "-q", src], stdout=subprocess.DEVNULL, check=False)
    envs = [{**base, "PYTHONPATH": src} for src in srcs]
    for env, where in zip(envs, stores):   # one unmeasured pass: the index caught up, bytecode and page cache warm
        for _, argv in chosen:
            cpu_of([sys.executable, "-m", "rose", *argv], str(where), env)
    cpu: dict[tuple[str, int], list[float]] = {(name, side): [] for name, _ in chosen for side in range(len(srcs))}
    bare: list[float] = []
    floor: list[float] = []
    for _ in range(args.rounds):
        bare.append(cpu_of([sys.executable, "-c", "pass"], home, base))
        floor.append(cpu_of([sys.executable, "-c", _FLOOR, str(store / ".rose" / "nodes")], home, base))
        for name, argv in chosen:
            for side, env in enumerate(envs):
                cpu[name, side].append(cpu_of([sys.executable, "-m", "rose", *argv], str(stores[side]), env))
        print(".", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    bare_s = statistics.median(bare)
    print(f"bare `python -c pass`: {bare_s * 1000:.1f} ms CPU (median of {len(bare)}, same run)")
    floor_s = statistics.median(floor)
    print(f"stat-only floor (list and stat every lesson file, nothing else): {floor_s * 1000:.1f} ms CPU, "
          f"{floor_s / bare_s:.1f}x bare")
    for side, src in enumerate(srcs):
        print(f"{'ab'[side]}: {src} on {stores[side]}")
    head = "  ".join(f"{'ab'[side]} ms  {'ab'[side]}/bare" for side in range(len(srcs)))
    print(f"{'command':<10}  {head}" + ("  b/a" if len(srcs) == 2 else ""))
    for name, _ in chosen:
        medians = [statistics.median(cpu[name, side]) for side in range(len(srcs))]
        cells = "  ".join(f"{m * 1000:6.1f}  {m / bare_s:8.1f}x" for m in medians)
        print(f"{name:<10}  {cells}" + (f"  {medians[1] / medians[0]:.2f}" if len(srcs) == 2 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
