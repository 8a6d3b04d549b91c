"""The judge cache: a hit costs no call (also across processes), the key covers call/version/backend/model/input,
eviction is oldest-first at the bound, concurrent writers keep it valid, bad entries are misses, secrets are
redacted."""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rose.judge import Judge, JudgeCache, Scripted, Stage, calls
from rose.judge.cache import cache_key
from rose.judge.calls.base import Call

from .samples import by_name

S = by_name()
REPO = Path(__file__).resolve().parents[2]


def test_a_hit_costs_no_backend_call(judge: Judge, scripted: Scripted):
    s = S["relevance"]
    scripted.enqueue(s.good)
    first = judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
    second = judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
    assert first == second and len(scripted.history) == 1


def test_the_key_covers_call_version_backend_model_session_and_input():
    base = cache_key("scope", 1, "claude", "", '{"a":1}')
    assert base.startswith("scope/v1/claude/default/")
    others = [cache_key("related", 1, "claude", "", '{"a":1}'), cache_key("scope", 2, "claude", "", '{"a":1}'),
              cache_key("scope", 1, "codex", "", '{"a":1}'), cache_key("scope", 1, "claude", "opus", '{"a":1}'),
              cache_key("scope", 1, "claude", "", '{"a":2}'), cache_key("scope", 1, "claude", "", '{"a":1}', "s1")]
    assert len({base, *others}) == 7


def test_a_different_input_or_model_is_a_miss(judge: Judge, scripted: Scripted):
    s = S["scope"]
    scripted.handler = lambda name, request: s.good
    judge.ask(calls.SCOPE, s.request, stage="consolidation")
    changed = dataclasses.replace(s.request, project="another project")
    judge.ask(calls.SCOPE, changed, stage="consolidation")
    assert len(scripted.history) == 2
    scripted.model = "other-model"
    judge.ask(calls.SCOPE, s.request, stage="consolidation")
    assert len(scripted.history) == 3


def test_the_request_hash_is_canonical(judge: Judge, scripted: Scripted):
    """Equal requests built in a different order hash the same (sorted-keys JSON of the dataclass)."""
    assert calls.canonical(S["scope"].request) == calls.canonical(dataclasses.replace(S["scope"].request))
    assert json.loads(calls.canonical(S["scope"].request))["lesson"]["title"] == "Retry S3 uploads"


def test_a_new_call_version_stops_serving_old_answers(judge: Judge, scripted: Scripted):
    s = S["scope"]
    scripted.handler = lambda name, request: s.good
    judge.ask(calls.SCOPE, s.request, stage="consolidation")
    bumped: Call = dataclasses.replace(calls.SCOPE, version=calls.SCOPE.version + 1)
    judge.ask(bumped, s.request, stage="consolidation")
    assert len(scripted.history) == 2


def test_a_stale_or_garbled_entry_is_a_miss_not_a_crash(judge: Judge, scripted: Scripted, rose_dir: Path):
    s = S["relevance"]
    scripted.enqueue(s.good, s.good)
    judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
    path = rose_dir / "judge-cache.json"
    data = json.loads(path.read_text())
    [key] = data["entries"]
    data["entries"][key]["answer"] = {"judgements": [{"id": "n_gone", "verdict": "relevant", "reason": "x"}]}
    path.write_text(json.dumps(data))
    assert judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL).ids(calls.Verdict.RELEVANT) == ["n_aa01"]
    assert len(scripted.history) == 2  # re-asked, and the fresh answer replaced the bad one
    assert json.loads(path.read_text())["entries"][key]["answer"] == s.good

    for garbage in ("{not json", "[]", json.dumps({"format": 99, "entries": {}}), ""):
        path.write_text(garbage)
        scripted.enqueue(s.good)
        judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
        assert json.loads(path.read_text())["format"] == 1


def test_eviction_is_oldest_first_at_the_bound(tmp_path: Path):
    cache = JudgeCache(tmp_path / "judge-cache.json", max_entries=3)
    for i in range(5):
        cache.put(f"k{i}", {"i": i})
    assert cache.keys() == ["k2", "k3", "k4"]
    assert cache.get("k0") is None and cache.get("k4") == {"i": 4}
    cache.put("k2", {"i": 22})  # rewriting an entry makes it the newest
    cache.put("k5", {"i": 5})
    assert cache.keys() == ["k4", "k2", "k5"]


def test_the_bound_comes_from_settings(tmp_path: Path):
    from rose.config import AgentSettings, BackendName

    judge = Judge.from_settings(AgentSettings(backend=BackendName.SCRIPTED, cache_max_entries=2),
                                cache_path=tmp_path / "c.json")
    assert judge.cache is not None and judge.cache.max_entries == 2
    backend = judge.backend
    assert isinstance(backend, Scripted)
    backend.handler = lambda name, request: {"echo": request.nonce}
    for n in range(4):
        judge.ask(calls.PROBE, calls.ProbeRequest(f"t{n}"), stage="probe")
    assert len(judge.cache) == 2


def test_answers_are_redacted_before_they_reach_disk(judge: Judge, scripted: Scripted, rose_dir: Path):
    secret = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 4
    scripted.enqueue({"approach": f"export ANTHROPIC_API_KEY={secret} then retry"})
    answer = judge.ask(calls.REPLAY_PROBE, S["replay_probe"].request, stage=Stage.PROBE)
    assert secret in answer.approach  # the caller gets the live answer
    on_disk = (rose_dir / "judge-cache.json").read_text()
    assert secret not in on_disk and "REDACTED" in on_disk


# -- across processes ----------------------------------------------------------------------------------------------

WORKER = textwrap.dedent('''
    import json, os, sys
    from pathlib import Path
    from rose.judge import Judge, JudgeCache, Scripted, calls

    class Counting(Scripted):
        """Counts every backend call in a file shared by the processes."""
        def complete(self, request):
            with open(os.environ["COUNT_FILE"], "a") as f:
                f.write(request.call + "\\n")
            return super().complete(request)

    backend = Counting(handler=lambda name, req: {"scope": "global", "reason": "shared"})
    judge = Judge(backend, cache=JudgeCache(Path(os.environ["CACHE"]), 50))
    request = calls.ScopeRequest(calls.Lesson("", "Retry S3", "parse the body"), "rose")
    answer = judge.ask(calls.SCOPE, request, stage="consolidation")
    print(json.dumps({"scope": answer.scope.value}))
''')

WRITER = textwrap.dedent('''
    import os, sys
    from pathlib import Path
    from rose.judge import JudgeCache
    cache = JudgeCache(Path(os.environ["CACHE"]), int(os.environ["BOUND"]))
    me = sys.argv[1]
    for i in range(int(os.environ["PUTS"])):
        cache.put(f"{me}-{i}", {"writer": me, "i": i, "pad": "x" * 200})
        assert cache.get(f"{me}-{i}") is not None or int(os.environ["BOUND"]) < 100
''')


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), **extra}


def test_a_cached_call_makes_no_second_backend_call_across_processes(tmp_path: Path):
    env = _env(CACHE=str(tmp_path / ".rose" / "judge-cache.json"), COUNT_FILE=str(tmp_path / "calls.txt"))
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", WORKER], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"scope": "global"}
    assert (tmp_path / "calls.txt").read_text().splitlines() == ["scope"]


@pytest.mark.parametrize("bound", [1000, 25])
def test_concurrent_writers_keep_the_cache_valid_and_lose_nothing(tmp_path: Path, bound: int):
    cache_path = tmp_path / ".rose" / "judge-cache.json"
    writers, puts = 4, 15
    env = _env(CACHE=str(cache_path), BOUND=str(bound), PUTS=str(puts))
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{n}"], env=env, stderr=subprocess.PIPE, text=True)
             for n in range(writers)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    data = json.loads(cache_path.read_text())  # valid JSON
    entries = data["entries"]
    assert len(entries) == min(bound, writers * puts)
    seqs = [e["seq"] for e in entries.values()]
    assert len(set(seqs)) == len(seqs) and data["seq"] == max(seqs) == writers * puts
    if bound >= writers * puts:
        assert set(entries) == {f"w{n}-{i}" for n in range(writers) for i in range(puts)}
    else:  # the survivors are exactly the newest writes
        assert sorted(seqs) == list(range(writers * puts - bound + 1, writers * puts + 1))


def test_the_file_is_one_json_document_with_one_entry_per_line(tmp_path: Path):
    path = tmp_path / "judge-cache.json"
    cache = JudgeCache(path, 10)
    odd = 'scope/v1/openai/my "quoted" model é/abc'
    cache.put("a", {"x": "line one\nline two"})
    cache.put(odd, {"y": 1})
    text = path.read_text()
    assert text.count("\n") == 4 and json.loads(text)["entries"][odd]["answer"] == {"y": 1}
    assert cache.get(odd) == {"y": 1} and cache.get("a") == {"x": "line one\nline two"}
    assert cache.get("missing") is None


def test_a_file_in_another_layout_is_read_and_rewritten(tmp_path: Path):
    path = tmp_path / "judge-cache.json"
    path.write_text(json.dumps({"format": 1, "seq": 7, "entries": {
        "old": {"seq": 7, "at": "x", "answer": {"v": 1}}, "bad": "not an entry"}}, indent=2))
    cache = JudgeCache(path, 10)
    assert cache.get("old") == {"v": 1} and cache.get("bad") is None
    cache.put("new", {"v": 2})
    data = json.loads(path.read_text())
    assert list(data["entries"]) == ["old", "new"] and data["entries"]["new"]["seq"] == 8
    assert cache.get("old") == {"v": 1}


def test_a_hand_damaged_line_is_dropped_on_the_next_write(tmp_path: Path):
    path = tmp_path / "judge-cache.json"
    cache = JudgeCache(path, 10)
    for k in ("a", "b", "c"):
        cache.put(k, {"k": k})
    lines = path.read_text().split("\n")
    lines[2] = "garbage that is not an entry,"
    path.write_text("\n".join(lines))
    assert cache.get("a") == {"k": "a"} and cache.get("b") is None
    cache.put("d", {"k": "d"})
    assert cache.keys() == ["a", "c", "d"]
    json.loads(path.read_text())
