#!/usr/bin/env python3
"""Recall hook latency, end to end, and what a selector call costs as the store grows.

    .venv/bin/python bench/bench_hook.py [--sizes 0,100,1000,10000] [--runs 15]

1. Latency: the UserPromptSubmit hook exactly as Claude Code runs it (a fresh `rose hook claude UserPromptSubmit`
   process, the payload on stdin, until its JSON is out), with the hybrid selector and dense retrieval on (the warm
   helper started and loaded first), beside a bare `python -c pass` measured in the same run. The target: the
   median at 10,000 lessons at most 5x the bare interpreter. A second row per size shows the first prompt of a
   machine with no warm helper yet (lexical only, the helper being started in the background).
2. Tokens a selector call sends, at 50 and at 5,000 lessons: the fork selector's prompt (the index is searched by
   the fork, never sent) and the judge walk's (one line per candidate, bounded by recall.candidates).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.support.gen_store import populate  # noqa: E402
from tests.support.processes import stop_warm_helpers  # noqa: E402

PROMPTS = ["the staging deploy with argo rollout is stuck", "pytest fixture flaky on the integration db",
           "why is the redis cache ttl ignored", "add retries with backoff to the http client"]


def rose_command() -> list[str]:
    script = Path(sys.executable).with_name("rose")
    return [str(script)] if script.exists() else [sys.executable, "-m", "rose"]


def time_once(argv: list[str], stdin: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    out = subprocess.run(argv, input=stdin, cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - start, out.stdout


def median_of(argv, stdin, cwd, env, runs) -> float:
    return statistics.median(time_once(argv, stdin, cwd, env)[0] for _ in range(runs))


def payload(project: Path, session: str, prompt: str) -> bytes:
    return json.dumps({"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                       "prompt": prompt, "transcript_path": ""}).encode()


def latency(sizes: list[int], runs: int, tmp: Path) -> list[tuple[str, float]]:
    env = {**os.environ}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure an installed package: bytecode compiled, as pip does
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "src")], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    env["HOME"] = str(tmp / "home")
    env["ROSE_HOME"] = str(tmp / "home" / ".rose")
    rows = [("python -c pass", median_of([sys.executable, "-c", "pass"], b"", tmp, env, runs))]
    for size in sizes:
        project = tmp / f"p{size}"
        project.mkdir()
        store = populate(project / ".rose", size) if size else None
        if store is None:
            subprocess.run([*rose_command(), "init"], cwd=project, env=env, check=True, capture_output=True)
        else:
            subprocess.run([*rose_command(), "config", "set", "recall.selector", "hybrid"], cwd=project, env=env,
                           check=True, capture_output=True)
            subprocess.run([*rose_command(), "index"], cwd=project, env=env, check=True, capture_output=True)
        cold_env = {**env, "TMPDIR": str(tmp / f"sock-cold-{size}")}
        (tmp / f"sock-cold-{size}").mkdir()
        cold, _ = time_once([*rose_command(), "hook", "claude", "UserPromptSubmit"],
                            payload(project, "cold", PROMPTS[0]), project, cold_env)
        # warm the helper, then wait until dense answers (first load embeds every lesson once)
        warm_env = {**env, "TMPDIR": str(tmp / "sock-warm")}
        (tmp / "sock-warm").mkdir(exist_ok=True)
        deadline = time.time() + 300
        status = ""
        while time.time() < deadline:
            _, out = time_once([*rose_command(), "trace", "--prompt", PROMPTS[1], "--json"], b"", project, warm_env)
            status = json.loads(out).get("dense", "")
            probe = subprocess.run([*rose_command(), "hook", "claude", "UserPromptSubmit"],
                                   input=payload(project, "probe", PROMPTS[2]), cwd=project, env=warm_env,
                                   capture_output=True)
            if size == 0 or b"warming" not in probe.stdout:
                break
            time.sleep(1)
        samples = []
        for i in range(runs):
            t, out = time_once([*rose_command(), "hook", "claude", "UserPromptSubmit"],
                               payload(project, f"s{i}", PROMPTS[i % len(PROMPTS)]), project, warm_env)
            json.loads(out or b"{}")   # nothing to say is an empty stdout
            samples.append(t)
        rows.append((f"hook, {size} lessons (dense {status or 'n/a'})", statistics.median(samples)))
        rows.append((f"hook, {size} lessons, no warm helper yet", cold))
    return rows


def selector_tokens(tmp: Path) -> list[tuple[str, int, int]]:
    from rose.config import EmbedProvider, Selector, Settings
    from rose.judge import Judge, Scripted
    from rose.recall import recall
    from rose.store import Layers
    from rose.tokens import estimate

    out = []
    for size in (50, 500, 5000):
        project = tmp / f"sel{size}"
        project.mkdir()
        populate(project / ".rose", size)
        layers = Layers.discover(project)
        sent = {}
        for selector in (Selector.FORK, Selector.JUDGE):
            backend = Scripted(handler=lambda call, req: {"nodes": []} if call == "select" else {"judgements": [
                {"id": c.id, "verdict": "unrelated", "reason": "bench"} for c in req.candidates]})
            backend.can_fork = True
            s = Settings()
            s.recall.selector = selector
            s.recall.max_pack_tokens = 500
            s.recall.disclosure = False
            s.embed.provider = EmbedProvider.NONE
            recall(layers, PROMPTS[0], session_id="bench", settings=s, judge=Judge(backend), record_session=False)
            sent[selector.value] = max(estimate(r.prompt) for r in backend.history)
        out.append((f"{size} lessons", sent["fork"], sent["judge"]))
        layers.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="0,100,1000,10000")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tokens-only", action="store_true", help="only the selector-token table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rose-bench-hook-") as tmp:
        if not args.tokens_only:
            try:
                rows = latency([int(s) for s in args.sizes.split(",")], args.runs, Path(tmp))
            finally:
                stop_warm_helpers(Path(tmp))
            base = rows[0][1]
            print(f"{'UserPromptSubmit hook, end to end':<52} {'median':>9} {'x bare':>7}")
            for label, seconds in rows:
                print(f"{label:<52} {seconds * 1000:>7.0f}ms {seconds / base:>7.1f}")
            print()
        print(f"{'tokens one selector call sends':<52} {'fork':>9} {'judge':>7}")
        for label, fork, judge in selector_tokens(Path(tmp)):
            print(f"{label:<52} {fork:>9} {judge:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
