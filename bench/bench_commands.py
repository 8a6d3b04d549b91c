"""Every read-only command, with the warm helper up and with it off, at the sizes given, in one run.

    .venv/bin/python bench/bench_commands.py [--sizes 10000,50000] [--runs 3] [--src DIR] [--stores DIR]

Each figure is CPU of the whole process tree (the command's own process and the helper's CPU over the same moments,
as bench_scale.py measures), median of --runs, divided by a bare `python -c pass` of the same interpreter measured in
the same run. "served" has a helper of the run's own up and settled (its model and vectors loaded); "own process"
runs with ROSE_WARM_HELPER=0. The stores are generated as bench_scale.py generates them (tests/support/gen_store.py),
or copied from --stores (a folder bench_scale.py --stores filled: p10000/, p50000/).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale as scale

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
    return 0


if __name__ == "__main__":
    sys.exit(main())
