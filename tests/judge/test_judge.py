"""Judge.ask: typed answers, fail closed on every failure kind, one retry on a schema violation, accounting events."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.judge import (BackendReply, FailureKind, Judge, JudgeCache, JudgeFailure, Scripted, Stage, calls)
from rose.store import events

from .samples import by_name

S = by_name()


def judge_events(rose_dir: Path) -> list[dict]:
    return list(events.read(rose_dir / "events.jsonl", kind="judge"))


def test_ask_returns_the_typed_answer_and_sends_prompt_schema_and_request(judge: Judge, scripted: Scripted):
    s = S["assess"]
    scripted.enqueue(s.good)
    answer = judge.ask(calls.ASSESS, s.request, stage=Stage.ATTRIBUTION)
    assert isinstance(answer, calls.AssessAnswer) and answer.used == ["n_aa01"]
    [sent] = scripted.history
    assert sent.call == "assess" and sent.schema == calls.ASSESS.schema and sent.payload is s.request
    assert sent.prompt == calls.ASSESS.render(s.request) and sent.timeout_s == 5


def test_handler_receives_the_call_name_and_the_typed_request(judge: Judge, scripted: Scripted):
    seen = []
    scripted.handler = lambda name, request: seen.append((name, request)) or {"scope": "global", "reason": "r"}
    judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert seen == [("scope", S["scope"].request)]


def test_a_request_of_the_wrong_type_is_a_programming_error(judge: Judge):
    with pytest.raises(TypeError, match="ScopeRequest"):
        judge.ask(calls.SCOPE, S["assess"].request, stage="consolidation")


FAILURES = [FailureKind.TIMEOUT, FailureKind.EXIT, FailureKind.MISSING_BINARY, FailureKind.HTTP,
            FailureKind.UNREACHABLE, FailureKind.MODEL_ERROR, FailureKind.REFUSED, FailureKind.CONFIG]


@pytest.mark.parametrize("kind", FAILURES, ids=[k.value for k in FAILURES])
def test_backend_failures_surface_at_once_without_retry_or_default(judge: Judge, scripted: Scripted, rose_dir, kind):
    scripted.enqueue(JudgeFailure(kind, "simulated"), S["scope"].good)
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is kind and err.value.call == "scope" and err.value.backend == "scripted"
    assert len(scripted.history) == 1 and scripted.pending == 1  # not retried
    assert len(JudgeCache(rose_dir / "judge-cache.json")) == 0    # failures are never cached
    [event] = judge_events(rose_dir)
    assert event["ok"] is False and event["failure"] == kind.value


def test_a_schema_violation_is_retried_once_with_the_problems_quoted(judge: Judge, scripted: Scripted, rose_dir):
    s = S["relevance"]
    scripted.enqueue(s.bad["wrong enum"], s.good)
    answer = judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
    assert answer.ids(calls.Verdict.RELEVANT) == ["n_aa01"]
    first, second = scripted.history
    assert "rejected" not in first.prompt
    assert "Your previous answer was rejected" in second.prompt and "'yes' is not one of" in second.prompt
    assert [(e["ok"], e["failure"], e["attempt"]) for e in judge_events(rose_dir)] == [
        (False, "schema", 1), (True, None, 2)]


def test_a_second_schema_violation_fails_closed(judge: Judge, scripted: Scripted, rose_dir):
    s = S["relevance"]
    scripted.enqueue(s.bad["wrong enum"], s.bad_checks["id not among candidates"], s.good)
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.RELEVANCE, s.request, stage=Stage.RECALL)
    assert err.value.kind is FailureKind.SCHEMA
    assert any("n_zz99" in p for p in err.value.problems)
    assert len(scripted.history) == 2 and scripted.pending == 1  # at most one retry
    assert len(JudgeCache(rose_dir / "judge-cache.json")) == 0


def test_an_unparseable_reply_is_retried_once_too(judge: Judge, scripted: Scripted):
    scripted.enqueue(JudgeFailure(FailureKind.UNPARSEABLE, "not json"), JudgeFailure(FailureKind.UNPARSEABLE, "x"))
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.UNPARSEABLE and len(scripted.history) == 2


@pytest.mark.parametrize("reply", [None, [], "relevant", 1, {}], ids=["null", "list", "string", "number", "empty"])
def test_a_non_object_or_empty_answer_is_never_taken_as_nothing_applied(judge: Judge, scripted: Scripted, reply):
    scripted.enqueue(reply, reply)
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.RELEVANCE, S["relevance"].request, stage=Stage.RECALL)
    assert err.value.kind is FailureKind.SCHEMA


def test_an_empty_script_fails_as_script_not_as_an_answer(judge: Judge):
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.SCRIPT


def test_model_free_mode_fails_as_no_backend_and_is_accounted(rose_dir: Path):
    judge = Judge(None, events_path=rose_dir / "events.jsonl")
    assert not judge.available
    with pytest.raises(JudgeFailure) as err:
        judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.NO_BACKEND
    [event] = judge_events(rose_dir)
    assert event["failure"] == "no_backend" and event["backend"] is None


def test_every_call_and_cache_hit_is_an_event_with_the_accounting_fields(judge: Judge, scripted: Scripted, rose_dir):
    s = S["assess"]
    scripted.enqueue(BackendReply(data=s.good, raw="{}", input_tokens=1200, output_tokens=80, cost_usd=0.0031))
    judge.ask(calls.ASSESS, s.request, stage=Stage.ATTRIBUTION)
    judge.ask(calls.ASSESS, s.request, stage=Stage.ATTRIBUTION)
    fresh, hit = judge_events(rose_dir)
    fields = {"ts", "kind", "call", "version", "stage", "backend", "model", "ms", "cached", "ok", "failure",
              "detail", "attempt", "input_tokens", "output_tokens", "cost_usd"}
    assert set(fresh) == fields and set(hit) == fields
    assert fresh["kind"] == "judge" and fresh["call"] == "assess" and fresh["stage"] == "attribution"
    assert (fresh["backend"], fresh["model"], fresh["version"]) == ("scripted", "script", 1)
    assert (fresh["cached"], fresh["ok"], fresh["failure"]) == (False, True, None)
    assert (fresh["input_tokens"], fresh["output_tokens"], fresh["cost_usd"]) == (1200, 80, 0.0031)
    assert isinstance(fresh["ms"], int)
    assert (hit["cached"], hit["ok"], hit["input_tokens"], hit["cost_usd"]) == (True, True, None, None)
    assert len(scripted.history) == 1


def test_stage_totals_in_rose_status_count_judge_events(layers, scripted: Scripted):
    """`rose status` sums judge events per stage (report._stage_costs); the judge's events feed it as they are."""
    from rose.config import Settings
    from rose.report import _stage_costs

    store = layers.project
    judge = Judge.for_store(store, Settings())
    judge.backend = scripted
    scripted.enqueue(BackendReply(S["scope"].good, "{}", cost_usd=0.5), JudgeFailure(FailureKind.TIMEOUT, "slow"))
    judge.ask(calls.SCOPE, S["scope"].request, stage=Stage.CONSOLIDATION)
    judge.ask(calls.SCOPE, S["scope"].request, stage=Stage.CONSOLIDATION)  # cache hit
    with pytest.raises(JudgeFailure):
        judge.ask(calls.VERIFY, S["verify"].request, stage=Stage.EXTRACTION)
    costs = _stage_costs([store])
    assert (costs["consolidation"].calls, costs["consolidation"].cached, costs["consolidation"].cost_usd) == (2, 1, 0.5)
    assert (costs["extraction"].calls, costs["extraction"].failures) == (1, 1)
    assert store.judge_cache_path.exists()


def test_a_caller_can_switch_the_cache_off_for_one_call(judge: Judge, scripted: Scripted):
    s = S["scope"]
    scripted.enqueue(s.good, s.good)
    judge.ask(calls.SCOPE, s.request, stage="consolidation", use_cache=False)
    judge.ask(calls.SCOPE, s.request, stage="consolidation", use_cache=False)
    assert len(scripted.history) == 2


def test_fork_options_reach_the_backend(judge: Judge, scripted: Scripted, tmp_path: Path):
    s = S["select"]
    scripted.enqueue(s.good)
    judge.ask(calls.SELECT, s.request, stage=Stage.RECALL, session_id="abc-123", cwd=tmp_path, timeout_s=9,
              max_turns=4)
    [sent] = scripted.history
    assert (sent.session_id, sent.cwd, sent.timeout_s, sent.max_turns) == ("abc-123", str(tmp_path), 9, 4)
    assert sent.tools == ("Read", "Grep", "Glob")


def test_an_unwritable_cache_or_event_log_does_not_unmake_a_valid_answer(tmp_path: Path, scripted: Scripted):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    judge = Judge(scripted, cache=JudgeCache(blocker / "judge-cache.json"), events_path=blocker / "events.jsonl")
    scripted.enqueue(S["scope"].good)
    assert judge.ask(calls.SCOPE, S["scope"].request, stage="consolidation").scope.value == "global"
