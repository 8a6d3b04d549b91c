#!/usr/bin/env python3
"""Faults and load: does every hook finish, does learning survive kill -9, do processes settle?

    .venv/bin/python bench/bench_faults.py [--payloads 1200] [--sessions 100] [--settle 120] [--parts fuzz,kill,load]

1. fuzz   real `rose hook <agent> <event>` processes over fuzzed payloads: malformed, truncated, binary, deeply
          nested, huge prompts, lone surrogates, wrong types, and transcript paths that are FIFOs, directories,
          devices, missing, huge or binary, against healthy and broken stores (nodes/ a file, index.db a folder,
          a corrupt config, corrupt lessons). A run fails unless it exits 0 with one JSON object (or nothing) on
          stdout and no traceback, inside the timeout rose installs for its event. Prints failures (target 0)
          and the maximum wall time per event against that timeout.
2. kill   the detached learner over six sessions, killed with SIGKILL at every atomic write of a clean run (after
          the temp file, before the rename: the worst moment), then run again to completion. Prints kill points,
          torn files, duplicated lessons or episodes, and leftover temp files (target 0 each).
3. load   N sessions (prompt, Stop, SessionEnd hooks as real processes, with warm helpers on) against a slow model
          that fails every call, from several shells' worth of environments. Samples the learners per store, model
          CLIs and warm helpers alive throughout; prints the peaks (target: 1 learner per store) and what is still
          running `--settle` seconds after the last session (target: at most one helper, no learner).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from rose.hooks import BUDGET_S  # noqa: E402
from rose.install.hooks import HOOKS  # noqa: E402

STANDIN = REPO / "tests" / "support" / "standin_model.py"
KILL_SESSIONS = 6
FIXTURES = REPO / "tests" / "fixtures"
EVENTS = ("UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")
TIMEOUT = {(a.value, s.event.value): s.timeout_s for a, specs in HOOKS.items() for s in specs}


# -- a sandbox like a user's machine ------------------------------------------------------------------------------
def sandbox(tmp: Path, *, helpers: bool = False) -> dict[str, str]:
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSE_")}
    env.update(HOME=str(home), ROSE_HOME=str(home / ".rose"), ROSE_WARM_HELPER="1" if helpers else "0",
               TMPDIR=str(tmp), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    env.pop("XDG_RUNTIME_DIR", None)
    return env


def model_cli(tmp: Path, env: dict[str, str], **knobs: str) -> Path:
    script = tmp / "model-cli"
    exports = "".join(f"export {k}={json.dumps(v)}\n" for k, v in knobs.items())
    script.write_text(f"#!/bin/sh\n{exports}exec {sys.executable} {STANDIN} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    own = Path(env["ROSE_HOME"])
    (own / "nodes").mkdir(parents=True, exist_ok=True)
    (own / "config.yaml").write_text(f"agent:\n  backend: claude\n  claude_command: {script}\n  timeout_s: 30\n"
                                     "embed:\n  provider: none\n", encoding="utf-8")
    return script


def rose(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes = b"", timeout: float = 120):
    return subprocess.run([sys.executable, "-m", "rose", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, timeout=timeout)


def project(tmp: Path, env: dict[str, str], name: str = "repo", lessons: int = 12) -> Path:
    folder = tmp / name
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    rose(["init"], folder, env)
    for i in range(lessons):
        rose(["add", f"Lesson {i}: before deploying service {i}, run check {i} and tag the release.",
              "--title", f"Deploy service {i}", "--scope", "project"], folder, env)
    return folder


def claude_transcript(path: Path, session: str, cwd: Path, turns: int = 3) -> Path:
    base = {"sessionId": session, "cwd": str(cwd), "version": "2.1.332", "isSidechain": False,
            "userType": "external", "timestamp": "2026-12-01T10:00:00.000Z"}
    lines = []
    for t in range(turns):
        lines += [
            {**base, "type": "user", "uuid": f"u{t}", "message": {"role": "user",
             "content": f"Turn {t}: always run the linter before committing. Fix deploy {t}."}},
            {**base, "type": "assistant", "uuid": f"a{t}", "message": {"id": f"m{t}", "role": "assistant",
             "model": "x", "content": [{"type": "tool_use", "id": f"t{t}", "name": "Bash",
                                        "input": {"command": f"make deploy-{t}"}}]}},
            {**base, "type": "user", "uuid": f"r{t}", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{t}", "is_error": t == 0, "content": "exit 1" if t == 0
                 else "ok"}]}},
        ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


# -- 1. fuzzed payloads -------------------------------------------------------------------------------------------
def transcript_paths(tmp: Path, cwd: Path) -> list[str]:
    odd = tmp / "odd"
    odd.mkdir(exist_ok=True)
    fifo = odd / "fifo.jsonl"
    if not fifo.exists():
        os.mkfifo(fifo)
    (odd / "dir.jsonl").mkdir(exist_ok=True)
    huge = odd / "huge.jsonl"
    if not huge.exists():
        with open(huge, "w", encoding="utf-8") as handle:   # ~40 MB: far past what a Stop hook reads at once
            line = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 4000}}) + "\n"
            for _ in range(10_000):
                handle.write(line)
    (odd / "binary.jsonl").write_bytes(os.urandom(200_000))
    good = claude_transcript(odd / "good.jsonl", "fuzz", cwd)
    return [str(fifo), str(odd / "dir.jsonl"), str(huge), str(odd / "binary.jsonl"), str(odd / "missing.jsonl"),
            "/dev/zero", "/dev/null", str(good), "", "relative/path.jsonl", "\x00bad"]


def mutate(rng: random.Random, base: dict, paths: list[str], cwd: Path) -> bytes:
    data = json.loads(json.dumps(base))
    data["cwd"] = str(cwd)
    kind = rng.randrange(16)
    if kind == 0:
        return b""
    if kind == 1:
        return os.urandom(rng.randrange(1, 4000))
    if kind == 2:
        raw = json.dumps(data).encode()
        return raw[: rng.randrange(len(raw))]
    if kind == 3:
        return b"[" * 100_000 + b"]" * 100_000   # nested past any recursion limit
    if kind == 4:
        data["prompt"] = "deploy " * rng.randrange(100_000, 600_000)   # a pasted log, up to ~4 MB
    if kind == 5:
        return json.dumps(data).replace('"cwd"', '"prompt": "\\ud800\\udfff\\ud83d", "cwd"').encode()
    if kind == 6:
        key = rng.choice(list(data) or ["x"])
        data[key] = rng.choice([None, 7, [], {}, True, "x" * 10, {"nested": [1, 2]}])
    if kind == 7:
        data.pop(rng.choice(list(data) or ["x"]), None)
    if kind == 8:
        data["hook_event_name"] = rng.choice(["Stop", "Nope", "", "UserPromptSubmit"])
    if kind in (9, 10, 11):
        data["transcript_path"] = rng.choice(paths)
    if kind == 12:
        data["cwd"] = rng.choice(["/nonexistent/dir", "/", str(cwd / "README.md"), "", "relative"])
    if kind == 13:
        data["session_id"] = rng.choice(["../../etc/passwd", "a" * 5000, "s\nnew", "", "💥"])
    if kind == 14:
        return (json.dumps(data) + "\n" + json.dumps(data)).encode()   # two objects
    return json.dumps(data, ensure_ascii=rng.random() < 0.5).encode()


def break_store(rng: random.Random, folder: Path, env: dict[str, str]) -> str:
    from rose import environment
    from rose.store.paths import local_root

    store = folder / ".rose"
    with environment.using(env, str(folder)):   # the hook's ROSE_HOME: where it keeps this store's index
        index = local_root(store) / "index.db"
    how = rng.choice(["healthy", "healthy", "nodes-is-file", "index-is-dir", "bad-config", "corrupt-lessons",
                      "no-store", "locked-index"])
    if how == "nodes-is-file":
        shutil.rmtree(store / "nodes", ignore_errors=True)
        (store / "nodes").write_text("not a folder")
    elif how == "index-is-dir":
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(index) + suffix)
            if p.is_file():
                p.unlink()
        index.mkdir(parents=True, exist_ok=True)
    elif how == "bad-config":
        (store / "config.yaml").write_bytes(rng.choice([b"recall: [1, 2", b"\xff\xfe", b"- a\n- b\n",
                                                        b"recall: {max_pack_tokens: lots, future: 1}\n"]))
    elif how == "corrupt-lessons":
        (store / "nodes" / "bad").mkdir(parents=True, exist_ok=True)
        (store / "nodes" / "bad" / "n_bad01.md").write_text("---\nid: ../../x\ntitle: [\n---\nbody\n")
        (store / "nodes" / "bad" / "n_bad02.md").write_bytes(b"\x00\xff binary")
    elif how == "no-store":
        shutil.rmtree(store, ignore_errors=True)
    return how


def fuzz(tmp: Path, count: int, workers: int) -> dict:
    env = sandbox(tmp / "fuzz")
    model_cli(tmp / "fuzz", env, STANDIN_DELAY_S="0.2")
    pristine = project(tmp / "fuzz", env, "pristine")
    paths = transcript_paths(tmp / "fuzz", pristine)
    payloads = {f"{a}_{e}": json.loads((FIXTURES / "payloads" / f"{a}_{e}.json").read_text())
                for a in ("claude", "codex") for e in EVENTS}
    rng = random.Random(20261201)
    cases = []
    for i in range(count):
        agent, event = rng.choice(["claude", "codex"]), rng.choice(EVENTS)
        cases.append((i, agent, event, mutate(rng, payloads[f"{agent}_{event}"], paths, pristine),
                      rng.random()))

    def one(case):
        i, agent, event, stdin, breakage = case
        folder = tmp / "fuzz" / f"case{i % (workers * 4)}-{threading.get_ident()}"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(pristine, folder, symlinks=True)
        how = break_store(random.Random(i), folder, env) if breakage < 0.5 else "healthy"
        payload = stdin.replace(str(pristine).encode(), str(folder).encode())
        start = time.monotonic()
        try:
            out = subprocess.run([sys.executable, "-m", "rose", "hook", agent, event], cwd=folder, env=env,
                                 input=payload, capture_output=True, timeout=TIMEOUT[(agent, event)] * 3)
        except subprocess.TimeoutExpired:
            return (event, how, time.monotonic() - start, "no answer within 3x the installed timeout")
        took = time.monotonic() - start
        problem = ""
        text = out.stdout.decode("utf-8", "replace").strip()
        if out.returncode != 0:
            problem = f"exit {out.returncode}"
        elif b"Traceback" in out.stderr:
            problem = "traceback on stderr"
        elif text:
            try:
                if not isinstance(json.loads(text), dict):
                    problem = "stdout is JSON but not an object"
            except ValueError:
                problem = f"stdout is not one JSON object: {text[:80]!r}"
        if not problem and took > TIMEOUT[(agent, event)]:
            problem = f"took {took:.1f}s, past the installed {TIMEOUT[(agent, event)]}s"
        return (event, how, took, problem)

    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(one, cases))
    failures = [r for r in results if r[3]]
    worst = {e: max((r[2] for r in results if r[0] == e), default=0.0) for e in EVENTS}
    return {"runs": len(results), "failures": failures, "max_s": worst,
            "broken_store_runs": sum(1 for r in results if r[1] != "healthy")}


# -- 2. kill -9 at every write ------------------------------------------------------------------------------------
KILLER = """
import os, signal
_n = [0]
_at = int(os.environ.get("ROSE_BENCH_KILL_AT", "0"))
_count = os.environ.get("ROSE_BENCH_COUNT")
_real = os.replace
def _replace(a, b, *args, **kwargs):
    _n[0] += 1
    if _n[0] == _at:
        os.kill(os.getpid(), signal.SIGKILL)
    done = _real(a, b, *args, **kwargs)
    if _count:   # written as it goes: the learner leaves by os._exit, so atexit would never run
        with open(_count, "w") as handle:
            handle.write(str(_n[0]))
    return done
os.replace = _replace
"""


def kill(tmp: Path) -> dict:
    root = tmp / "kill"
    env = sandbox(root)
    model_cli(root, env)
    folder = project(root, env, "repo", lessons=3)
    for s in range(KILL_SESSIONS):
        t = claude_transcript(root / f"s{s}.jsonl", f"k{s}", folder)
        rose(["hook", "claude", "SessionEnd"], folder, {**env, "ROSE_CHILD": "1"})  # (no-op) warm the bytecode
        from_payload = json.dumps({"session_id": f"k{s}", "transcript_path": str(t), "cwd": str(folder),
                                   "hook_event_name": "SessionEnd", "reason": "other"})
        # queue the job as the hook does, without starting the learner (the bench runs it itself)
        code = ("import sys, json; from pathlib import Path; from rose.learn.jobs import Job, JobKind, enqueue;"
                "from rose.store import Layers; d = json.loads(sys.argv[1]); l = Layers.discover(Path(d['cwd']));"
                "enqueue(l.project, Job(JobKind.SESSION_END, d['session_id'], d['transcript_path'], 'claude',"
                " d['cwd']))")
        subprocess.run([sys.executable, "-c", code, from_payload], env=env, check=True)
    hooks = root / "killer"
    hooks.mkdir(exist_ok=True)
    (hooks / "sitecustomize.py").write_text(KILLER, encoding="utf-8")
    home = Path(env["ROSE_HOME"])
    snapshot = root / "snapshot"
    shutil.copytree(folder, snapshot / "repo", symlinks=True)
    shutil.copytree(home, snapshot / "home", symlinks=True)
    counter = root / "count"

    def learner(at: int) -> int:
        e = {**env, "PYTHONPATH": f"{hooks}{os.pathsep}{REPO / 'src'}", "ROSE_BENCH_KILL_AT": str(at),
             "ROSE_BENCH_COUNT": str(counter)}
        return subprocess.run([sys.executable, "-m", "rose.learn.run", str(folder / ".rose")], env=e,
                              capture_output=True, timeout=300).returncode

    def restore() -> None:
        shutil.rmtree(folder)
        shutil.rmtree(home)
        shutil.copytree(snapshot / "repo", folder, symlinks=True)
        shutil.copytree(snapshot / "home", home, symlinks=True)

    learner(0)
    points = int(counter.read_text())
    clean = outcome(folder, env)
    torn = duplicated = leftover = different = killed = 0
    for at in range(1, points + 1):
        restore()
        killed += learner(at) == -signal.SIGKILL
        learner(0)
        got = outcome(folder, env)
        torn += got["torn"]
        duplicated += got["duplicated"]
        leftover += got["temps"]
        different += got != clean
    return {"kill_points": points, "killed": killed, "torn": torn, "duplicated": duplicated,
            "leftover_temps": leftover, "runs_differing_from_a_clean_run": different, "clean": clean}


def outcome(folder: Path, env: dict[str, str]) -> dict:
    code = r"""
import json, sys
from pathlib import Path
from rose.store import Layers
from rose.learn.jobs import queued
l = Layers.discover(Path(sys.argv[1]))
p = l.project
p.sync()
nodes = list(p.iter_nodes())
eps, bad = p.episodes()
keys = [(n.title, n.body) for n in nodes]
sessions = [e.session for e in eps]
print(json.dumps({"lessons": len(nodes), "episodes": len(eps), "torn": len(bad) + len(p.index.problems()),
                  "duplicated": (len(keys) - len(set(keys))) + (len(sessions) - len(set(sessions))),
                  "queued": len(queued(p))}))
"""
    out = subprocess.run([sys.executable, "-c", code, str(folder)], env=env, capture_output=True, text=True,
                         check=True)
    data = json.loads(out.stdout)
    data["temps"] = sum(1 for base in (folder, Path(env["ROSE_HOME"])) for _ in base.rglob("*.tmp"))
    return data


# -- 3. many sessions, a slow failing model ------------------------------------------------------------------------
def processes(rose_home: str | None = None) -> dict[str, list[tuple[int, int]]]:
    """(pid, parent pid) of every learner, warm helper and model CLI alive now, of the sandbox whose ROSE_HOME is
    given (other rose processes on the machine, a test run's say, are not this benchmark's)."""
    found: dict[str, list[tuple[int, int]]] = {"learner": [], "helper": [], "model": []}
    mine = f"ROSE_HOME={rose_home}".encode() if rose_home else None
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            fields = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()
            if mine is not None and mine not in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                continue
        except OSError:
            continue
        if fields[0] == "Z":
            continue
        entry = (int(pid), int(fields[1]))
        if b"rose.learn.run" in cmd:
            found["learner"].append(entry)
        elif b"rose.warm.server" in cmd:
            found["helper"].append(entry)
        elif any(str(STANDIN).encode() in c for c in cmd):
            found["model"].append(entry)
    for kind in ("learner", "helper"):   # a child between fork and exec still shows its parent's command line
        pids = {pid for pid, _ppid in found[kind]}
        found[kind] = [(pid, ppid) for pid, ppid in found[kind] if ppid not in pids]
    return found


def sustained(samples: list[tuple[float, int]], for_s: float) -> int:
    """The most processes alive together for at least `for_s` seconds on end."""
    best = 0
    for level in sorted({n for _t, n in samples}):
        start = None
        for t, n in samples:
            if n >= level:
                start = t if start is None else start
                if t - start >= for_s:
                    best = max(best, level)
                    break
            else:
                start = None
    return best


def concurrency(spans: dict[int, list[float]], at_least_s: float = 0.0) -> int:
    """The most processes alive at once, counting only those seen alive for at least `at_least_s`."""
    edges = []
    for first, last in spans.values():
        if last - first >= at_least_s:
            edges += [(first, 1), (last, -1)]
    best = now = 0
    for _t, step in sorted(edges, key=lambda e: (e[0], -e[1])):
        now += step
        best = max(best, now)
    return best


def load(tmp: Path, sessions: int, settle: float, workers: int) -> dict:
    root = tmp / "load"
    env = sandbox(root, helpers=True)
    model_cli(root, env, STANDIN_DELAY_S="0.5", STANDIN_FAIL_EVERY="1", STANDIN_LOG=str(root / "calls.log"))
    repos = [project(root, env, f"repo{r}", lessons=40) for r in range(3)]
    for repo in repos:   # past the pack budget, so a selector (and its model call) is asked on every prompt
        rose(["config", "set", "recall.max_pack_tokens", "300"], repo, env)
        rose(["config", "set", "recall.selector", "judge"], repo, env)
    shells = [dict(env, PATH=f"/opt/shell{i}/bin{os.pathsep}{env['PATH']}", ANTHROPIC_API_KEY=f"key-{i}")
              for i in range(5)]   # different environments of one user: one helper must serve them all
    spans: dict[str, dict[int, list[float]]] = {"learner": {}, "helper": {}, "model": {}, "learner_model": {}}
    counts: dict[str, list[tuple[float, int]]] = {"learner": [], "helper": []}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            now, t = processes(env["ROSE_HOME"]), time.monotonic()
            for kind in counts:
                counts[kind].append((t, len(now[kind])))
            learners = {pid for pid, _ppid in now["learner"]}
            for kind in ("learner", "helper", "model"):
                for pid, ppid in now[kind]:
                    spans[kind].setdefault(pid, [t, t])[1] = t
                    if kind == "model" and ppid in learners:
                        spans["learner_model"].setdefault(pid, [t, t])[1] = t
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    def session(i: int) -> int:
        repo = repos[i % len(repos)]
        shell = shells[i % len(shells)]
        sid = f"load-{i}"
        t = claude_transcript(root / f"{sid}.jsonl", sid, repo)
        failures = 0
        for event, extra in (("UserPromptSubmit", {"prompt": f"how do I deploy service {i % 40}?"}),
                             ("Stop", {"stop_hook_active": False}), ("SessionEnd", {"reason": "other"})):
            data = {"session_id": sid, "cwd": str(repo), "transcript_path": str(t), "hook_event_name": event, **extra}
            out = rose(["hook", "claude", event], repo, shell, json.dumps(data).encode())
            failures += out.returncode != 0
        return failures

    with ThreadPoolExecutor(workers) as pool:
        failed = sum(pool.map(session, range(sessions)))
    end = time.monotonic()
    stop_at = end + settle
    while time.monotonic() < stop_at:
        time.sleep(1)
    stop.set()
    sampler.join()
    left = processes(env["ROSE_HOME"])
    calls = len((root / "calls.log").read_text().splitlines()) if (root / "calls.log").exists() else 0
    for pid, _cwd in left["helper"] + left["learner"] + left["model"]:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    peak = {k: concurrency(v) for k, v in spans.items()}
    lasting = {k: sustained(v, 0.5) for k, v in counts.items()}   # a second one that exits at once is not counted
    return {"sessions": sessions, "hook_failures": failed, "peak": peak, "lasting": lasting, "model_calls": calls,
            "left_after_settle": {k: len(v) for k, v in left.items()}, "settle_s": settle,
            "learners_started": len(spans["learner"])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--payloads", type=int, default=1200)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--settle", type=float, default=120.0)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--parts", default="fuzz,kill,load")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="rose-faults-", dir="/tmp"))
    try:
        if "fuzz" in parts:
            r = fuzz(tmp, args.payloads, args.workers)
            print(f"fuzz: {r['runs']} hook runs ({r['broken_store_runs']} against broken stores), "
                  f"{len(r['failures'])} failures (target 0)")
            for event in EVENTS:
                limit = min(t for (a, e), t in TIMEOUT.items() if e == event)
                print(f"  {event:<17} max {r['max_s'][event]:5.2f}s  (installed timeout {limit}s, "
                      f"budget {BUDGET_S[event]}s)")
            for f in r["failures"][:10]:
                print(f"  FAILED {f[0]} on a {f[1]} store after {f[2]:.2f}s: {f[3]}")
        if "kill" in parts:
            r = kill(tmp)
            print(f"kill: {r['kill_points']} kill points ({r['killed']} reached), torn {r['torn']}, duplicated "
                  f"{r['duplicated']}, leftover temp files {r['leftover_temps']} (target 0 each); runs that ended "
                  f"differently from a clean run: {r['runs_differing_from_a_clean_run']}; clean run: {r['clean']}")
        if "load" in parts:
            r = load(tmp, args.sessions, args.settle, args.workers)
            p, lasting = r["peak"], r["lasting"]
            print(f"load: {r['sessions']} sessions, {r['hook_failures']} hook failures, {r['model_calls']} model calls "
                  f"(all failing, 0.5 s each), {r['learners_started']} learner run(s) in all")
            print(f"  peak at any instant: {p['learner']} learner(s) (one learner serves every store: target 1), "
                  f"{p['learner_model']} model CLI(s) under learners, {p['model']} model CLI(s) in all (prompt "
                  f"selectors included), {p['helper']} warm helper(s)")
            print(f"  peak sustained for 0.5 s or more: {lasting['learner']} learner(s), {lasting['helper']} warm "
                  f"helper(s) (one started at the same moment as another finds the lock and exits)")
            left = r["left_after_settle"]
            print(f"  {r['settle_s']:.0f}s after the last session: {left['helper']} helper(s), {left['learner']} "
                  f"learner(s), {left['model']} model CLI(s) (target: at most 1 helper, no learner)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
