"""Stage 7, selection lessons, with a scripted judge: a session whose needed lesson sat where the selector did not
look leads to a rule; the next selection is given it, looks where it says, and credits it; the commands."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.config import EmbedProvider, Selector, Settings
from rose.judge import Judge
from rose.learn.jobs import Job, JobKind, enqueue
from rose.learn.learner import run_queue
from rose.model import Node
from rose.recall import recall
from rose.routing import RuleRefused, load_rules, save_rule, unconditioned, within_cap
from rose.store import Layers
from tests.learn.test_learning import Script

FILLER = "Details that make the store outgrow the pack budget."
LESSONS = [
    ("testing", "n_test0001", "Bring the compose stack up first",
     "Before pytest -m slow, bring docker compose -f compose.test.yml up -d; Postgres listens on 5434."),
    ("testing", "n_test0002", "Snapshot updates need a reason", "A PR that updates many snapshots explains why."),
    ("deploy", "n_depl0001", "Integration of the payments provider", "The payments integration calls the sandbox."),
    ("deploy", "n_depl0002", "Rolling back a release", "Revert the deploy PR; never kubectl rollout undo."),
    ("docs", "n_docs0001", "Docs are built with mkdocs", "Run mkdocs serve to preview the docs."),
]


def _settings() -> Settings:
    s = Settings()
    s.embed.provider = EmbedProvider.NONE
    s.recall.selector = Selector.JUDGE
    s.recall.max_pack_tokens = 200   # the store (about 330) outgrows it: selection runs
    s.recall.disclosure = False
    return s


@pytest.fixture
def store(layers: Layers) -> Layers:
    layers.project.config_path.write_text("embed: {provider: none}\nrecall: {selector: judge, max_pack_tokens: 200, "
                                          "disclosure: false}\n", encoding="utf-8")
    for family, node_id, title, body in LESSONS:
        layers.project.save(Node(id=node_id, family=family, title=title, body=body + " " + FILLER,
                                 gist=body.split(";")[0], tags=[family]))
    return layers


def _transcript(path: Path, prompt: str, tool_calls: list[tuple[str, dict]], final: str) -> Path:
    """A minimal Claude Code transcript: the prompt, tool calls with their results, the agent's last words."""
    lines = [{"type": "user", "message": {"role": "user", "content": prompt}, "uuid": "u0",
              "timestamp": "2026-11-29T10:00:00Z", "sessionId": "s"}]
    for n, (name, args) in enumerate(tool_calls, 1):
        lines.append({"type": "assistant", "uuid": f"a{n}", "timestamp": "2026-11-29T10:00:01Z", "sessionId": "s",
                      "message": {"role": "assistant", "id": f"m{n}", "content": [
                          {"type": "tool_use", "id": f"t{n}", "name": name, "input": args}]}})
        lines.append({"type": "user", "uuid": f"r{n}", "timestamp": "2026-11-29T10:00:02Z", "sessionId": "s",
                      "message": {"role": "user", "content": [
                          {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}]}})
    lines.append({"type": "assistant", "uuid": "z", "timestamp": "2026-11-29T10:00:03Z", "sessionId": "s",
                  "message": {"role": "assistant", "id": "mz", "content": [{"type": "text", "text": final}]}})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def _end(layers: Layers, session: str, transcript: Path) -> None:
    enqueue(layers.project, Job(kind=JobKind.SESSION_END, session_id=session, transcript_path=str(transcript),
                                cwd=str(layers.cwd), agent="claude"))


def _relevant_if(*wanted: str):
    def answer(request):
        return {"judgements": [{"id": c.id, "verdict": "relevant" if c.id in wanted else "unrelated",
                                "reason": "r"} for c in request.candidates]}
    return answer


def test_a_missed_lesson_teaches_a_rule_the_next_selection_uses_and_credits(store: Layers, tmp_path: Path) -> None:
    layers = store
    needed = "n_test0001"
    prompt1 = "run the integration suite for the payments service"
    # session 1: search finds only the deploy lesson that shares the word; the judge rejects it; nothing served
    judge1 = Script(relevance=_relevant_if())
    first = recall(layers, prompt1, session_id="s1", settings=_settings(), judge=Judge(judge1.backend))
    assert needed not in [c["id"] for c in first.trace["candidates"]]   # it sat where the search did not look
    assert first.injected == []
    t1 = _transcript(tmp_path / "s1.jsonl", prompt1, [
        ("Bash", {"command": "grep -ril integration .rose/nodes/"}),
        ("Read", {"file_path": str(layers.project.root / "nodes" / "testing" / f"{needed}.md")}),
        ("Bash", {"command": "docker compose -f compose.test.yml up -d && pytest -m integration"})],
        "The suite passes once the compose stack is up.")
    _end(layers, "s1", t1)
    learner = Script(
        assess={"outcome": "success", "accepted_summary": "ran the suite", "lessons": []},
        extract={"decision": "NONE", "lessons": [], "orientation": [], "experience": None},
        route=lambda r: {"decision": "rule", "when": "the task runs the integration tests",
                         "then": "read nodes/testing/ before running pytest", "look_in": ["testing"], "skip": [],
                         "reason": "the agent had to find the compose lesson itself"})
    [result] = run_queue(layers.project, judge_factory=learner.judge)
    assert result.done, result.detail
    assert "route" in learner.names(), (learner.names(), result.detail)
    [(_, route_request)] = [c for c in learner.calls if c[0] == "route"]
    assert [c.id for c in route_request.looked_up] == [needed]          # what the agent found by itself
    assert "grep -ril integration" in route_request.searches and "testing" in route_request.families
    rules, problems = load_rules([layers.project.routing_dir])
    assert problems == [] and len(rules) == 1
    rule = rules[0]
    assert (rule.when, rule.look_in, rule.tried, rule.helped) == ("the task runs the integration tests",
                                                                   ["testing"], 0, 0)
    assert "selection rule" in result.detail

    # session 2: the rule is given to the selector, and puts the testing folder in front of it
    prompt2 = "the integration suite fails for the payments service"
    judge2 = Script(relevance=_relevant_if(needed))
    second = recall(layers, prompt2, session_id="s2", settings=_settings(), judge=Judge(judge2.backend))
    [(_, rel)] = [c for c in judge2.calls if c[0] == "relevance"]
    assert rule.text() in rel.rules
    assert needed in [c.id for c in rel.candidates]
    assert [i.id for i in second.injected] == [needed], (second.trace.get("pack"), second.trace.get("verdicts"),
                                                         second.trace.get("gate"), second.trace.get("left_out"))
    added = next(c for c in second.trace["candidates"] if c["id"] == needed)
    assert added["rule"] == rule.id
    t2 = _transcript(tmp_path / "s2.jsonl", prompt2, [("Bash", {"command": "pytest -m integration"})],
                     "Fixed. rose-used: M1")
    _end(layers, "s2", t2)
    learner2 = Script(assess={"outcome": "success", "accepted_summary": "fixed", "lessons": [
                          {"id": needed, "used": True, "reason": "r"}]},
                      extract={"decision": "NONE", "lessons": [], "orientation": [], "experience": None})
    [result2] = run_queue(layers.project, judge_factory=learner2.judge)
    assert result2.done, result2.detail
    assert "route" not in learner2.names()          # served what was needed: nothing new to learn, no call
    [after] = load_rules([layers.project.routing_dir])[0]
    assert (after.tried, after.helped) == (1, 1)      # engaged (chose from nodes/testing/), beat search alone
    assert after.precision == 1.0 and after.recall == 1.0
    # the learner run again credits nothing twice
    _end(layers, "s2", t2)
    run_queue(layers.project, judge_factory=learner2.judge)
    assert load_rules([layers.project.routing_dir])[0][0].tried == 1


def test_a_rule_not_conditioned_on_a_kind_of_task_is_refused_in_code(store: Layers, tmp_path: Path) -> None:
    for when in ("always", "any task", "every prompt", "n_test0001 is rarely useful", "the retry lesson is rarely used"):
        assert unconditioned(when), when
        with pytest.raises(RuleRefused):
            save_rule(store.project.routing_dir, when, "read nodes/testing/")
    assert unconditioned("the task touches the integration tests") is None
    # a route answer the call's checks let through is still checked when stored: nothing is written
    assert load_rules([store.project.routing_dir]) == ([], [])


def test_the_worst_record_drops_first_when_the_cap_binds(store: Layers) -> None:
    from rose.routing import update_rule

    d = store.project.routing_dir
    good = save_rule(d, "the task touches the integration tests", "read nodes/testing/", look_in=["testing"])
    bad = save_rule(d, "the task is a docs change", "nothing in nodes/deploy/ applies", skip=["deploy"])
    fresh = save_rule(d, "the task edits the docs site", "read nodes/docs/", look_in=["docs"])
    update_rule(d, good.id, lambda r: setattr(r, "tried", 4) or setattr(r, "helped", 4))
    update_rule(d, bad.id, lambda r: setattr(r, "tried", 4) or setattr(r, "helped", 0))
    rules, _ = load_rules([d])
    cost = max(len(r.text()) for r in rules) // 4 + 1
    kept = within_cap(rules, 2 * cost)
    assert [r.id for r in kept] == [good.id, fresh.id]   # records 5/6, 1/2 (new), 1/6: the worst is left out


def test_route_commands_teach_list_and_forget_with_json(store: Layers, rose_cli) -> None:
    cwd = store.cwd
    out = rose_cli("route", "--when", "the task touches the integration tests", "--then", "read nodes/testing/",
                   "--json", cwd=cwd)
    assert out.returncode == 0, out.stderr
    taught = json.loads(out.stdout)
    assert taught["look_in"] == ["testing"] and taught["source"] == "manual"
    refused = rose_cli("route", "--when", "always", "--then", "read nodes/testing/", cwd=cwd)
    assert refused.returncode == 1 and "refused" in refused.stderr
    listing = json.loads(rose_cli("route", "--json", cwd=cwd).stdout)
    assert [r["id"] for r in listing["rules"]] == [taught["id"]]
    assert listing["growth"] == {"rules": 1, "lessons": len(LESSONS), "ratio": round(1 / len(LESSONS), 4)}
    text = rose_cli("route", cwd=cwd).stdout
    assert f"1 selection rule over {len(LESSONS)} lessons (ratio 0.20, should fall as the store grows)" in text
    status = rose_cli("status", cwd=cwd).stdout
    assert "routing  1 selection rule over" in status
    gone = rose_cli("route", "--forget", taught["id"], cwd=cwd)
    assert gone.returncode == 0 and json.loads(rose_cli("route", "--json", cwd=cwd).stdout)["rules"] == []
    assert rose_cli("route", "--forget", "r_ffffff", cwd=cwd).returncode == 1


@pytest.mark.parametrize("whole", [True, False])
def test_nothing_used_asks_for_a_rule_only_when_a_selection_was_made(store: Layers, tmp_path: Path,
                                                                    whole: bool) -> None:
    """A session served the whole store (it fit the budget) chose nothing: that none of it was used says nothing
    about where to look, and no selector would act on a rule yet, so the route call is not paid for."""
    layers = store
    settings = _settings()
    if whole:
        settings.recall.max_pack_tokens = 6000
        layers.project.config_path.write_text("embed: {provider: none}\nrecall: {selector: judge, max_pack_tokens: "
                                              "6000, disclosure: false}\n", encoding="utf-8")
    prompt = "update the snapshot tests and preview the docs"
    served = recall(layers, prompt, session_id="s9", settings=settings,
                    judge=Judge(Script(relevance=_relevant_if("n_test0002", "n_docs0001")).backend))
    assert len(served.injected) >= 2, served.trace.get("gate")
    assert served.trace["gate"].startswith("whole store fits" if whole else "store outgrows")
    _end(layers, "s9", _transcript(tmp_path / "s9.jsonl", prompt, [("Bash", {"command": "make docs"})], "Done."))
    learner = Script(
        assess=lambda r: {"outcome": "success", "accepted_summary": "done",
                          "lessons": [{"id": x.id, "used": False, "reason": "r"} for x in r.served]},
        extract={"decision": "NONE", "lessons": [], "orientation": [], "experience": None},
        route={"decision": "refuse", "when": None, "then": None, "look_in": [], "skip": [], "reason": "r"})
    [result] = run_queue(layers.project, judge_factory=learner.judge)
    assert result.done, result.detail
    assert ("route" in learner.names()) is not whole
