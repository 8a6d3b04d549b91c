#!/usr/bin/env python3
"""The warm prompt's CPU, the hook's own process and the helper's apart, for one or more checkouts, alternated.

    .venv/bin/python bench/bench_warm_split.py --store DIR [--src A/src,B/src] [--prompts 60] [--rounds 3]

`--store` is an indexed store's project folder (a copy of one bench_scale.py --stores keeps: p10000, p50000); each
round and side runs on a fresh copy of it, in a temporary folder of its own, with its own helper. After the helper
has loaded its model and vectors, the bench's sessions are answered twice (as bench_scale's warm prompts are by
then: most lessons already in context), then `--prompts` prompts are measured: the hook process's CPU (rusage via
wait4), and the helper's over all of them (/proc utime + stime, read before and after; clock ticks, which many
prompts resolve). Printed in milliseconds a prompt, and as ratios to a bare `python -c pass` measured in the same
round (its mean of 10; it moves with the machine, so compare the milliseconds of the sides).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import PROMPTS, TICK, helper_pid   # the same prompts, clock ticks and pid files

REPO = Path(__file__).resolve().parent.parent
SESSIONS = 7


class Side:
    def __init__(self, src: Path, store: Path, tmp: Path):
        self.project = tmp / "project"
        shutil.copytree(store, self.project, symlinks=True)
        (tmp / "home").mkdir()
        sock = tmp / "sock"
        sock.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.update(PYTHONPATH=os.pathsep.join([str(src), str(REPO)]), HOME=str(tmp / "home"),
                   ROSE_HOME=str(tmp / "home" / ".rose"), TMPDIR=str(sock))
        self.env = env
        self.sock = sock
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=env, stdout=subprocess.DEVNULL,
                       check=False)
        self.run([sys.executable, "-m", "rose", "index"], {**env, "ROSE_WARM_HELPER": "0"})   # the copy's sync

    def run(self, argv: list[str], env: dict[str, str] | None = None, stdin: bytes = b"") -> tuple[float, bytes]:
        proc = subprocess.Popen(argv, cwd=self.project, env=env or self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        return usage.ru_utime + usage.ru_stime, out

    def prompt(self, i: int) -> float:
        payload = json.dumps({"session_id": f"s{i % SESSIONS}", "cwd": str(self.project),
                              "hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[i % len(PROMPTS)],
                              "transcript_path": ""}).encode()
        return self.run([sys.executable, "-m", "rose", "hook", "claude", "UserPromptSubmit"], stdin=payload)[0]

    def helper(self) -> int | None:
        return helper_pid(self.env)

    def settle(self) -> int:
        """Until a ranking is served with dense results: the helper's pid."""
        self.prompt(0)
        deadline = time.time() + 900
        while time.time() < deadline:
            _, out = self.run([sys.executable, "-m", "rose", "trace", "--prompt", PROMPTS[1], "--json"])
            try:
                dense = json.loads(out).get("dense", "")
            except ValueError:
                dense = ""
            pid = self.helper()
            if dense not in ("warming", "") and pid is not None:
                return pid
            if pid is None:
                self.prompt(0)
            time.sleep(1)
        raise SystemExit("the helper never settled")


def helper_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def measure(src: Path, store: Path, prompts: int) -> tuple[float, float, float]:
    """(bare, hook process, helper) seconds of CPU a prompt."""
    with tempfile.TemporaryDirectory(prefix="rose-warm-split-") as tmp:
        side = Side(src, store, Path(tmp))
        pid = side.settle()
        try:
            for i in range(2 * SESSIONS):
                side.prompt(i)
            bare = statistics.fmean(side.run([sys.executable, "-c", "pass"])[0] for _ in range(10))
            before = helper_cpu(pid)
            hook = statistics.fmean(side.prompt(i) for i in range(prompts))
            time.sleep(0.05)   # a reply is written before its handler returns: let the last lines run
            helper = (helper_cpu(pid) - before) / prompts
        finally:
            os.kill(pid, 15)
        return bare, hook, helper


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="an indexed store's project folder, copied for each run")
    parser.add_argument("--src", default=str(REPO / "src"), help="comma-separated src/ folders, alternated")
    parser.add_argument("--prompts", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sources = [Path(s).resolve() for s in args.src.split(",")]
    store = Path(args.store).resolve()
    print(f"{'ms of CPU a prompt':40} {'bare':>6} {'hook':>6} {'helper':>7} {'total':>6} {'x bare':>7}")
    totals: dict[Path, list[tuple[float, float, float]]] = {s: [] for s in sources}
    for _round in range(args.rounds):
        for src in sources:
            bare, hook, helper = measure(src, store, args.prompts)
            totals[src].append((bare, hook, helper))
            print(f"{str(src)[-40:]:40} {bare * 1e3:6.1f} {hook * 1e3:6.1f} {helper * 1e3:7.1f}"
                  f" {(hook + helper) * 1e3:6.1f} {(hook + helper) / bare:7.2f}", flush=True)
    bare_all = statistics.fmean(b for runs in totals.values() for b, _, _ in runs)
    for src, runs in totals.items():
        hook = statistics.fmean(h for _, h, _ in runs)
        helper = statistics.fmean(h for _, _, h in runs)
        print(f"mean {str(src)[-35:]:35} {bare_all * 1e3:6.1f} {hook * 1e3:6.1f} {helper * 1e3:7.1f}"
              f" {(hook + helper) * 1e3:6.1f} {(hook + helper) / bare_all:7.2f}  (x the mean bare of every run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
