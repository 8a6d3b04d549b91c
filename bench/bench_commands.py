"""Every read-only command, with the warm helper up and with it off, at the sizes given, in one run.

    .venv/bin/python bench/bench_commands.py [--sizes 10000,50000] [--runs 3] [--src DIR] [--stores DIR]

Each figure is CPU of the whole process tree (the command's own process and the helper's CPU over the same moments,
as bench_scale.py measures), median of --runs, divided by a bare `python -c pass` of the same interpreter measured
in the same run. "served" has a helper of the run's own up and settled (its model and vectors loaded); "own process"
runs with ROSE_WARM_HELPER=0. For the commands that rank (rose.warm.client.RANKING_COMMANDS), "none running" starts
from no helper at all, helpers allowed: the first command runs in its own process and starts one; printed are that
first command's CPU, the new helper's CPU until it serves one (its start, once per idle spell), how many commands
ran in their own process before one was served, and the median of the --runs served after it. The stores are
generated as bench_scale.py generates them (tests/support/gen_store.py), or copied from --stores (a folder
bench_scale.py --stores filled: p10000/, p50000/).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as scale

from rose.warm.client import RANKING_COMMANDS

COMMANDS = [["status"], ["search", "redis cache ttl"], ["recall", "--prompt", scale.PROMPTS[0]],
            ["trace", "--prompt", scale.PROMPTS[0]], ["tree"], ["tree", "--family", "{family}"], ["list"],
            ["show", "{id}"], ["credit"], ["route"], ["conflicts"], ["events"], ["evolution"], ["doctor"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--src", default=str(scale.REPO / "src"))
    parser.add_argument("--stores", help="copy each store from here (p<size>/) and keep newly generated ones there")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: dict[str, dict[int, tuple[float, float]]] = {}
    starts: dict[str, dict[int, Start]] = {" ".join(c): {} for c in COMMANDS if c[0] in RANKING_COMMANDS}
    with tempfile.TemporaryDirectory(prefix="rose-bench-commands-") as name:
        tmp = Path(name)
        bench = scale.Bench(Path(args.src).resolve(), tmp, args.runs)
        bare = [bench.run([sys.executable, "-c", "pass"], tmp, bench.env)[0] for _ in range(9)]
        try:
            for size in sizes:
                project = tmp / f"p{size}"
                kept = Path(args.stores).resolve() / f"p{size}" if args.stores else None
                if kept is not None and (kept / ".rose").is_dir():
                    shutil.copytree(kept, project, symlinks=True)
                    bench.rose(["index"], project)
                else:
                    project.mkdir()
                    scale.build(bench, project, size, {})
                    if kept is not None:
                        shutil.copytree(project, kept, symlinks=True)
                some = next((project / ".rose" / "nodes").rglob("*.md"))
                served = {**bench.env, "TMPDIR": str(tmp / f"sock{size}")}
                Path(served["TMPDIR"]).mkdir()
                own = {**bench.env, "ROSE_WARM_HELPER": "0"}
                scale.wait_settled(bench, project, served)
                for template in COMMANDS:
                    argv = [a.format(id=some.stem, family=some.parent.name) for a in template]
                    label = " ".join(template)
                    figures = []
                    for env in (served, own):
                        figures.append(statistics.median(bench.rose(argv, project, env)[0] for _ in range(args.runs)))
                    rows.setdefault(label, {})[size] = (figures[0], figures[1])
                    print(f"  {size}: {label}", file=sys.stderr, flush=True)
                scale.stop_helper(served)
                for template in COMMANDS:
                    if template[0] in RANKING_COMMANDS:
                        starts[" ".join(template)][size] = none_running(bench, project, tmp / f"socknone{size}{template[0]}",
                                                                        template, args.runs)
                        print(f"  {size}: {' '.join(template)} (none running)", file=sys.stderr, flush=True)
        finally:
            for folder in tmp.glob("sock*"):
                scale.stop_helper({"TMPDIR": str(folder)})
        bare += [bench.run([sys.executable, "-c", "pass"], tmp, bench.env)[0] for _ in range(9)]
    base = statistics.median(bare)
    print(f"bare `python -c pass`: {base * 1000:.1f} ms CPU (same run)")
    head = "".join(f"{f'served {s}':>14}{f'own {s}':>12}" for s in sizes)
    print(f"\n{'x bare (CPU, command + helper)':<36}{head}")
    for label, by_size in rows.items():
        cells = "".join(f"{by_size[s][0] / base:>14.1f}{by_size[s][1] / base:>12.1f}" for s in sizes)
        print(f"{label[:35]:<36}{cells}")
    head = "".join(f"{f'first {s}':>12}{f'start {s}':>12}{f'here {s}':>11}{f'next {s}':>11}" for s in sizes)
    print(f"\n{'none running (x bare; here: count)':<36}{head}")
    for label, by_size in starts.items():
        cells = "".join(f"{by_size[s].first / base:>12.1f}{by_size[s].helper / base:>12.1f}{by_size[s].here:>11d}"
                        f"{by_size[s].next / base:>11.1f}" for s in sizes)
        print(f"{label[:35]:<36}{cells}")
    return 0


class Start(NamedTuple):
    first: float    # CPU of the first command, in its own process (it starts the helper)
    helper: float   # the new helper's CPU from its start until it served a command
    here: int       # commands that ran in their own process, the first included, before one was served
    next: float     # median CPU of the --runs served commands after that (command + helper)


# `rose ARGV` as the launcher runs it, saying which way it went: exit 0 when the helper answered, 3 when it ran here
_WHICH_WAY = """
import sys
from rose.warm import client
if client.run_command(sys.argv[1:]) is not None:
    sys.exit(0)
from rose.cli import main
sys.argv[0] = "rose"
main()
sys.exit(3)
"""


def none_running(bench: scale.Bench, project: Path, sockets: Path, argv: list[str], runs: int) -> Start:
    """`rose ARGV` again and again, back to back, from no helper at all, helpers allowed (the module's docstring)."""
    sockets.mkdir()
    env = {**bench.env, "TMPDIR": str(sockets)}
    first, _wall, _out = bench.run([sys.executable, "-m", "rose", *argv], project, env)
    here, deadline = 1, time.time() + 900
    while subprocess.run([sys.executable, "-c", _WHICH_WAY, *argv], cwd=project, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL).returncode != 0:
        if time.time() > deadline or (here >= 3 and scale.helper_pid(env) is None):
            raise SystemExit(f"no helper started by `rose {' '.join(argv)}` served one (a checkout before they did?)")
        here += 1
    helper = scale.cpu_of(scale.helper_pid(env))
    later = statistics.median(bench.rose(argv, project, env)[0] for _ in range(runs))
    scale.stop_helper(env)
    return Start(first, helper, here, later)


if __name__ == "__main__":
    sys.exit(main())
