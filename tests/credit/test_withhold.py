"""Withholding on the prompt path, through recall: sticky per session, named on the notice, never twice in a row,
never a user's own rule unless they opt in, off when the rate is 0, and only on the hook path."""
from __future__ import annotations

from rose.config import EmbedProvider, Settings
from rose.credit.decide import CONFIRM_RATE
from rose.credit.withhold import LAST_FILE, SUSPECT, counter, draw
from rose.model import Node, Origin
from rose.recall import recall
from rose.store import Layers, events
from rose.store.sessions import SessionState


def settings(rate: float = 0.5, **credit) -> Settings:
    s = Settings()
    s.embed.provider = EmbedProvider.NONE
    s.credit.withhold_rate = rate
    for k, v in credit.items():
        setattr(s.credit, k, v)
    return s


def lesson(layers: Layers, title: str, origin: Origin = Origin.REFLECTION, **kw) -> Node:
    node = Node(id=layers.project.new_id(), family=title.split()[0].lower(), title=title,
                body=f"{title}: always check the deploy canary first.", origin=origin, **kw)
    layers.project.save(node)
    return node


def session_where(node_id: str, withheld: bool, rate: float = 0.5, skip: tuple[str, ...] = ()) -> str:
    for n in range(1000):
        sid = f"s{n}"
        if sid not in skip and (draw(sid, node_id) < rate) == withheld:
            return sid
    raise AssertionError("no such session")


def test_a_withheld_lesson_stays_withheld_all_session_and_the_notice_says_so(layers: Layers) -> None:
    a, b = lesson(layers, "Deploy canary"), lesson(layers, "Cache keys", Origin.MANUAL)
    sid = session_where(a.id, withheld=True)
    first = recall(layers, "deploy the web app", session_id=sid, settings=settings())
    assert a.id in first.trace["withheld"] and a.id not in first.block and b.id in first.block
    assert "1 withheld to measure it" in first.notice
    record = SessionState.load(layers.project, sid)
    assert record.arms == {a.id: "withheld"}          # the user's own rule (b) is not measured at all
    # later prompts of the same session: still withheld, never drawn again
    again = recall(layers, "and the caching", session_id=sid, settings=settings())
    assert a.id in again.trace["withheld"] and a.id not in again.block
    inject = [e for e in events.read(layers.project.events_path, kind="inject")]
    assert inject[-1]["withheld"] == [a.id] and a.id not in inject[-1]["served"]


def test_never_twice_in_a_row(layers: Layers) -> None:
    a = lesson(layers, "Deploy canary")
    one = session_where(a.id, withheld=True)
    two = session_where(a.id, withheld=True, skip=(one,))
    assert a.id in recall(layers, "deploy", session_id=one, settings=settings()).trace["withheld"]
    second = recall(layers, "deploy", session_id=two, settings=settings())
    assert second.trace["withheld"] == [] and a.id in second.block      # the draw said withhold; the rule said no
    assert SessionState.load(layers.project, two).arms == {a.id: "served"}
    three = session_where(a.id, withheld=True, skip=(one, two))
    assert a.id in recall(layers, "deploy", session_id=three, settings=settings()).trace["withheld"]
    assert (layers.project.cache_dir / LAST_FILE).exists()


def test_user_rules_only_when_the_user_opts_in(layers: Layers) -> None:
    quoted = lesson(layers, "Quoted rule", Origin.EXTRACTION, quotes={"session://x/message/1": "always do it"})
    taught = lesson(layers, "Taught rule", Origin.MANUAL)
    for node in (quoted, taught):
        sid = session_where(node.id, withheld=True)
        assert recall(layers, "rule", session_id=sid, settings=settings()).trace["withheld"] == []
    sid = "opt-in"
    opted = recall(layers, "rule", session_id=sid + "-opt", settings=settings(rate=0.5, withhold_user_rules=True))
    record = SessionState.load(layers.project, sid + "-opt")
    assert set(record.arms) == {quoted.id, taught.id}           # measured once the user opted in
    assert set(opted.trace["withheld"]) == {i for i, arm in record.arms.items() if arm == "withheld"}


def test_rate_zero_switches_it_off_and_commands_never_withhold(layers: Layers) -> None:
    a = lesson(layers, "Deploy canary")
    sid = session_where(a.id, withheld=True)
    off = recall(layers, "deploy", session_id=sid, settings=settings(rate=0.0))
    assert off.trace["withheld"] == [] and a.id in off.block and "withheld" not in off.notice
    assert SessionState.load(layers.project, sid).arms == {}
    looked = recall(layers, "deploy", session_id=sid + "x", settings=settings(), record_session=False)
    assert looked.trace["withheld"] == [] and a.id in looked.block


def test_a_final_verdict_ends_measuring_and_a_suspect_is_withheld_more(layers: Layers) -> None:
    done, suspect = lesson(layers, "Deploy canary"), lesson(layers, "Cache keys")
    store = layers.project
    store.log_counts(done.id, {counter("served", "n"): 40, counter("served", "pass"): 38,
                               counter("withheld", "n"): 12, counter("withheld", "pass"): 2}, rid="t1")   # helps
    store.log_counts(suspect.id, {counter("served", "n"): 100, counter("served", "pass"): 50,
                                  counter("withheld", "n"): 22, counter("withheld", "pass"): 21}, rid="t2",
                     registers={SUSPECT: 22})
    sid = next(f"s{n}" for n in range(1000) if 0.1 <= draw(f"s{n}", suspect.id) < CONFIRM_RATE)
    result = recall(layers, "deploy cache", session_id=sid, settings=settings(rate=0.1))
    assert SessionState.load(store, sid).arms == {suspect.id: "withheld"}   # 'done' is not measured any more
    assert result.trace["withheld"] == [suspect.id]
