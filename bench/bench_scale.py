#!/usr/bin/env python3
"""Speed at scale: every figure of issue 15 at 1,000, 10,000 and 50,000 generated lessons, in one run.

    .venv/bin/python bench/bench_scale.py [--sizes 1000,10000,50000] [--runs 5] [--src DIR]
                                          [--only all|prompts|commands] [--stores DIR]

Every figure is CPU time of the whole process tree that does the work: the command's own process (its rusage, read
with wait4) AND the warm helper's CPU over the same moments (utime + stime from /proc/<pid>/stat, read before and
after), divided by the CPU of a bare `python -c pass` of the same interpreter measured in the same run. Wall ratios
are printed beside them (a prompt that blocks on a socket costs wall time, not CPU). Per size:

  prompt (warm)       UserPromptSubmit hook, the helper up and its vectors loaded: median of --runs prompts
  first prompt        the first prompt with no helper running (it starts one), hook plus whatever helper ran
  helper off          ROSE_WARM_HELPER=0: every prompt in-process
  settle              the helper's own CPU (and the prompts' median wall) over the first 8 prompts after it starts
  fresh clone         the first prompt on a copy of the store without index.db (a clone of a committed store)
  status/search/tree/recall/list   the inspection commands (list when the CLI has it)
  add                 `rose add` of one lesson (50k/1k printed: the target is size-independent)
  rebuild             `rose index --rebuild`, CPU seconds of the process
  bulk import         lessons per second written by Store.save_many in batches of 500 (tests/support/gen_store.py)
  peak RSS            the largest of any command's and of the helper's (VmHWM)

and the growth exponent of each figure over the sizes (least-squares slope of log figure on log size: 0 is flat,
1 is linear). `--src DIR` measures another checkout's src/ (a "before" run from `git archive`). `--only commands`
measures the store and the commands alone (bulk import, index build and rebuild, the inspection commands, add),
skipping the prompt figures (helper off, first prompt, settle, fresh clone).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPTS = ["the staging deploy with argo rollout is stuck", "pytest fixture flaky on the integration db",
           "why is the redis cache ttl ignored", "add retries with backoff to the http client",
           "postgres migration deadlock on the connection pool", "vite bundle size grew after the react upgrade"]
TICK = os.sysconf("SC_CLK_TCK")
GENERATE = """
import sys, time
from pathlib import Path
from tests.support.gen_store import populate
start = time.perf_counter(); populate(Path(sys.argv[1]), int(sys.argv[2])); print(time.perf_counter() - start)
"""


class Bench:
    def __init__(self, src: Path, tmp: Path, runs: int):
        self.tmp = tmp
        self.runs = runs
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)   # an installed package: bytecode compiled, as pip does
        env["PYTHONPATH"] = os.pathsep.join([str(src), str(REPO)])
        env["HOME"] = str(tmp / "home")
        env["ROSE_HOME"] = str(tmp / "home" / ".rose")
        env["TMPDIR"] = str(tmp / "sock-base")   # never the machine's own helper folder
        (tmp / "home").mkdir()
        (tmp / "sock-base").mkdir()
        self.env = env
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=env, stdout=subprocess.DEVNULL,
                       check=False)
        self.rss_kb = 0

    # -- one process, measured ---------------------------------------------------------------------------------
    def run(self, argv: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"") -> tuple[float, float, bytes]:
        """(CPU seconds of the process and its waited children, wall seconds, stdout)."""
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        out, _ = _talk(proc, stdin)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        self.rss_kb = max(self.rss_kb, usage.ru_maxrss)
        return usage.ru_utime + usage.ru_stime, wall, out

    def rose(self, args: list[str], cwd: Path, env: dict[str, str] | None = None,
             stdin: bytes = b"") -> tuple[float, float, bytes]:
        """A rose command plus the helper's CPU over the same moments."""
        env = env or self.env
        helper = helper_pid(env)
        before = cpu_of(helper)
        cpu, wall, out = self.run([sys.executable, "-m", "rose", *args], cwd, env, stdin)
        if helper is not None:
            time.sleep(0.02)   # a reply is written before the handler returns: let its last lines run
            cpu += max(0.0, cpu_of(helper) - before)
            self.rss_kb = max(self.rss_kb, hwm_of(helper))
        return cpu, wall, out

    def prompt(self, project: Path, env: dict[str, str], i: int) -> tuple[float, float, bytes]:
        return self.rose(["hook", "claude", "UserPromptSubmit"], project, env, payload(project, f"s{i}", i))

    def median(self, fn, n: int | None = None) -> tuple[float, float]:
        """(mean CPU, median wall): the helper's CPU is read in clock ticks, so a mean over runs resolves it."""
        samples = [fn(i) for i in range(n or self.runs)]
        return statistics.fmean(s[0] for s in samples), statistics.median(s[1] for s in samples)


def _talk(proc: subprocess.Popen, stdin: bytes) -> tuple[bytes, bytes]:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(stdin)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    return proc.stdout.read(), b""


def payload(project: Path, session: str, i: int) -> bytes:
    return json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                       "prompt": PROMPTS[i % len(PROMPTS)], "transcript_path": ""}).encode()


def helper_pid(env: dict[str, str]) -> int | None:
    folder = Path(env.get("TMPDIR", "/nonexistent")) / f"rose-{os.getuid()}"
    for pid_file in folder.glob("warm-*.pid"):
        try:
            pid = int(pid_file.read_text())
            os.kill(pid, 0)
            return pid
        except (OSError, ValueError):
            continue
    return None


def cpu_of(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK   # utime, stime (the helper's threads included)


def hwm_of(pid: int | None) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def stop_helper(env: dict[str, str]) -> None:
    pid = helper_pid(env)
    if pid is None:
        return
    os.kill(pid, 15)
    for _ in range(200):
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.05)


def wait_settled(bench: Bench, project: Path, env: dict[str, str]) -> None:
    """Until a prompt is served with dense results (the helper has loaded its model and vectors)."""
    deadline = time.time() + 900
    while time.time() < deadline:
        _, _, out = bench.rose(["trace", "--prompt", PROMPTS[1], "--json"], project, env)
        try:
            dense = json.loads(out).get("dense", "")
        except ValueError:
            dense = ""
        if dense not in ("warming", "") and helper_pid(env) is not None:
            return
        if helper_pid(env) is None:
            bench.prompt(project, env, 0)   # starts one
        time.sleep(1)


def measure(bench: Bench, size: int, only: str = "all", stores: Path | None = None) -> dict[str, float]:
    fig: dict[str, float] = {}
    project = bench.tmp / f"p{size}"
    bench.rss_kb = 0
    kept = stores / f"p{size}" if stores is not None else None
    if kept is not None and (kept / ".rose").is_dir():
        # a store generated and indexed by an earlier run (--stores): the prompt figures without the build ones
        shutil.copytree(kept, project, symlinks=True)
        # the copy's folders have new mtimes: one sync now, as the build left it (else the first prompt measured
        # would pay the full scan of every file that a fresh build had just done)
        bench.rose(["index"], project)
        print(f"  {size}: copied from {kept}", file=sys.stderr, flush=True)
        if only in ("all", "commands"):
            # the first rebuild re-redacts every file whose clean_files digest an older rose's code made (the
            # digest covers the parser's source); the second is what a repeated rebuild costs under this code
            fig["index rebuild (first on the copy) s"], _, _ = bench.rose(["index", "--rebuild"], project)
            fig["index rebuild s"], _, _ = bench.rose(["index", "--rebuild"], project)
            print(f"  {size}: rebuilt", file=sys.stderr, flush=True)
    else:
        project.mkdir()
        build(bench, project, size, fig)
        if kept is not None:
            shutil.copytree(project, kept, symlinks=True)

    warm = {**bench.env, "TMPDIR": str(bench.tmp / f"sock{size}")}
    Path(warm["TMPDIR"]).mkdir()
    prompts = only in ("all", "prompts")
    if prompts:
        off = {**bench.env, "ROSE_WARM_HELPER": "0"}
        fig["helper off"], fig["helper off (wall)"] = bench.median(lambda i: bench.prompt(project, off, i))

        # the first prompt of a session with no helper running, then the 8 prompts after the helper it started
        fig["first prompt"], fig["first prompt (wall)"], _ = bench.prompt(project, warm, 0)
        for _ in range(100):
            if helper_pid(warm) is not None:
                break
            time.sleep(0.05)
        helper = helper_pid(warm)
        walls = [bench.prompt(project, warm, i)[1] for i in range(1, 9)]
        fig["settle: helper CPU over 8 prompts s"] = cpu_of(helper)
        fig["settle: median prompt (wall)"] = statistics.median(walls)
    wait_settled(bench, project, warm)
    if prompts:
        fig["prompt (warm)"], fig["prompt (warm, wall)"] = bench.median(lambda i: bench.prompt(project, warm, i))
    if only == "prompts":
        stop_helper(warm)
        fig["peak RSS MB"] = bench.rss_kb / 1024
        return fig

    for name, args in (("status", ["status"]), ("search", ["search", "redis cache ttl"]),
                       ("tree", ["tree"]), ("recall", ["recall", "--prompt", PROMPTS[0]]), ("list", ["list"])):
        if name == "list" and not has_command(bench, project, "list"):
            continue
        fig[name], fig[f"{name} (wall)"] = bench.median(lambda i, a=args: bench.rose(a, project, warm))
    fig["add"], fig["add (wall)"] = bench.median(
        lambda i: bench.rose(["add", f"Always pin the bench tool version {i} when the nightly job runs.",
                              "--scope", "project", "--family", "bench"], project, warm))
    stop_helper(warm)
    fig["peak RSS MB"] = bench.rss_kb / 1024
    if not prompts:
        return fig

    # a fresh clone of a repository that commits its store: the lessons; its index and the rest of this machine's
    # record of a store live outside it (rose.store.paths.local_root), so the clone at a new path has none
    clone = bench.tmp / f"clone{size}"
    shutil.copytree(project / ".rose", clone / ".rose")
    fresh = {**bench.env, "TMPDIR": str(bench.tmp / f"sockc{size}")}
    Path(fresh["TMPDIR"]).mkdir()
    fig["fresh clone first prompt"], fig["fresh clone first prompt (wall)"], out = bench.prompt(clone, fresh, 0)
    fig["_notice"] = notice_of(out)   # type: ignore[assignment]
    stop_helper(fresh)
    fig["peak RSS MB"] = bench.rss_kb / 1024
    return fig


def build(bench: Bench, project: Path, size: int, fig: dict[str, float]) -> None:
    """Generate `size` lessons (bulk import), pick the hybrid selector, index them (first build, then a rebuild)."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", GENERATE, str(project / ".rose"), str(size)], env=bench.env,
                         capture_output=True, check=True, cwd=REPO)
    fig["bulk import lessons/s"] = size / float(out.stdout.decode().strip().splitlines()[-1])
    print(f"  {size}: generated in {time.perf_counter() - start:.1f}s", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "rose", "config", "set", "recall.selector", "hybrid"], cwd=project,
                   env=bench.env, check=True, capture_output=True)
    cpu, _wall, _ = bench.rose(["index"], project)   # the first build, with the vectors embedded
    fig["index build (first) s"] = cpu
    cpu, _, _ = bench.rose(["index", "--rebuild"], project)
    fig["index rebuild s"] = cpu
    print(f"  {size}: indexed", file=sys.stderr, flush=True)


def notice_of(out: bytes) -> str:
    try:
        return str(json.loads(out or b"{}").get("systemMessage", ""))
    except ValueError:
        return out.decode(errors="replace")[:200]


def has_command(bench: Bench, project: Path, name: str) -> bool:
    out = subprocess.run([sys.executable, "-m", "rose", name, "--help"], cwd=project, env=bench.env,
                         capture_output=True)
    return out.returncode == 0


def slope(sizes: list[int], values: list[float]) -> float | None:
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values) if v > 0]
    if len(points) < 2:
        return None
    mx = statistics.fmean(p[0] for p in points)
    my = statistics.fmean(p[1] for p in points)
    den = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / den


RATIOS = ["prompt (warm)", "first prompt", "helper off", "fresh clone first prompt", "status", "search", "tree",
          "recall", "list", "add"]
WALL_RATIOS = ["prompt (warm, wall)", "first prompt (wall)", "helper off (wall)", "fresh clone first prompt (wall)",
               "settle: median prompt (wall)"]
ABSOLUTE = ["index build (first) s", "index rebuild (first on the copy) s", "index rebuild s", "bulk import lessons/s",
            "settle: helper CPU over 8 prompts s",
            "peak RSS MB"]


def report(sizes: list[int], figs: dict[int, dict[str, float]], bare_cpu: float, bare_wall: float) -> None:
    print(f"bare `python -c pass`: {bare_cpu * 1000:.1f} ms CPU, {bare_wall * 1000:.1f} ms wall (same run)")
    head = "".join(f"{s:>10}" for s in sizes)
    print(f"\n{'CPU, hook/command + helper, x bare':<40}{head}{'exponent':>10}")
    rows = [(k, bare_cpu) for k in RATIOS] + [(k, bare_wall) for k in WALL_RATIOS] + [(k, 1.0) for k in ABSOLUTE]
    for key, base in rows:
        values = [figs[s].get(key) for s in sizes]
        if all(v is None for v in values):
            continue
        cells = "".join(f"{v / base:>10.1f}" if v is not None else f"{'-':>10}" for v in values)
        k = slope(sizes, [v for v in values if v is not None]) if None not in values else None
        print(f"{key:<40}{cells}{(f'{k:+.2f}' if k is not None else '-'):>10}")
    if len(sizes) > 1 and figs[sizes[0]].get("add"):
        print(f"\nrose add, {sizes[-1]} / {sizes[0]} lessons: {figs[sizes[-1]]['add'] / figs[sizes[0]]['add']:.2f}")
    for s in sizes:
        if "_notice" in figs[s]:
            print(f"fresh clone notice at {s}: {figs[s].get('_notice') or '(none)'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--src", default=str(REPO / "src"), help="the src/ folder of the rose to measure")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--only", choices=["all", "prompts", "commands"], default="all",
                        help="prompts: only the prompt figures (helper off, first prompt, settle, warm prompt); "
                             "commands: the store and command figures alone")
    parser.add_argument("--stores", help="keep each generated, indexed store in this folder and copy it from there "
                                         "on the next run (the build figures are then not measured, but for two "
                                         "rebuilds of the copy)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="rose-bench-scale-") as name:
        tmp = Path(name)
        bench = Bench(Path(args.src).resolve(), tmp, args.runs)
        figs = {}
        bare = [bench.run([sys.executable, "-c", "pass"], tmp, bench.env)[:2] for _ in range(max(9, args.runs))]
        try:
            for size in sizes:
                figs[size] = measure(bench, size, args.only,
                                     Path(args.stores).resolve() if args.stores else None)
                print(f"  {size}: done", file=sys.stderr, flush=True)
        finally:
            for folder in tmp.glob("sock*"):
                stop_helper({"TMPDIR": str(folder)})
        bare += [bench.run([sys.executable, "-c", "pass"], tmp, bench.env)[:2] for _ in range(max(9, args.runs))]
        bare_cpu = statistics.median(b[0] for b in bare)
        bare_wall = statistics.median(b[1] for b in bare)
        report(sizes, figs, bare_cpu, bare_wall)
        if args.json:
            Path(args.json).write_text(json.dumps({"bare_cpu": bare_cpu, "bare_wall": bare_wall,
                                                   "figures": {str(k): v for k, v in figs.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
