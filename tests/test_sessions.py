"""A session's scratch read as one typed record: a round trip, keys rose does not know kept, wrong-typed keys
defaulted with a logged skip, and the merge recall makes under the lock."""
from __future__ import annotations

import json

from rose.store import Layers
from rose.store.events import EventKind
from rose.store.sessions import (Exposure, Learned, Reflection, Reported, SessionState, clear_served, read_session,
                                 session_path, update_session)


def full_state() -> SessionState:
    return SessionState(
        turn=4, served={"n_aaaaaa": 3}, served_ever=["n_aaaaaa", "n_bbbbbb"], refs={"M1": "n_aaaaaa", "M2": "n_bbbbbb"},
        arms={"n_bbbbbb": "withheld"}, selections=[{"turn": 2, "chosen": ["n_aaaaaa"], "baseline": [], "rules": []}],
        compactions=1,
        reflection=Reflection(offset=812, tool_calls=2, failures=1, turns=3, last_reflection=1000.5,
                              empty_reflections=1, last_decision="not enough substance yet", extra={"later": 1}),
        learned_upto=17, empty_reflections=1, reflections=[Learned(kind="reflect", minted=0)], episode="e_abc123",
        compressed=True, routed=True, reported=Reported(used=["n_aaaaaa"], unused=["n_bbbbbb"], ts="2026-11-01T10:00:00Z"),
        evolution={"g_1": Exposure(arm="treatment", state="trial", kind="guardrail", scope="global", at="t")},
        extra={"from_a_newer_rose": {"x": [1, 2]}},
    )


def _skips(layers: Layers) -> list[dict]:
    path = layers.project.events_path
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e.get("kind") == EventKind.SKIP.value]


def test_a_full_state_round_trips_through_its_file(layers: Layers) -> None:
    store = layers.project
    state = full_state()
    assert SessionState.from_dict(json.loads(json.dumps(state.to_dict()))) == state
    update_session(store, "s1", lambda s: s.__dict__.update(full_state().__dict__))
    assert read_session(store, "s1") == state
    assert not _skips(layers)


def test_a_new_session_reads_as_defaults_and_writes_only_what_it_holds(layers: Layers) -> None:
    store = layers.project
    assert read_session(store, "never") == SessionState()
    clear_served(store, "s2")
    assert json.loads(session_path(store, "s2").read_text()) == {"compactions": 1}
    assert read_session(store, "s2").compactions == 1


def test_keys_rose_does_not_know_are_kept_verbatim(layers: Layers) -> None:
    store = layers.project
    written = {"turn": 2, "future_key": {"deep": [1, "two"]}, "reflection": {"offset": 5, "future_counter": 9},
               "evolution": {"s_1": {"arm": "control", "state": "trial", "kind": "skill", "scope": "project",
                                     "at": "t", "future": True}},
               "reflections": [{"kind": "reflect", "minted": 1, "took_s": 3.5}]}
    session_path(store, "s3").parent.mkdir(parents=True, exist_ok=True)
    session_path(store, "s3").write_text(json.dumps(written), encoding="utf-8")
    clear_served(store, "s3")   # any write: what this rose does not know goes back as it was
    back = json.loads(session_path(store, "s3").read_text())
    assert back["future_key"] == {"deep": [1, "two"]}
    assert back["reflection"]["future_counter"] == 9 and back["reflection"]["offset"] == 5
    assert back["evolution"]["s_1"]["future"] is True and back["reflections"][0]["took_s"] == 3.5
    assert back["turn"] == 2 and back["compactions"] == 1
    assert not _skips(layers)


def test_a_wrong_typed_key_is_its_default_and_a_logged_skip(layers: Layers) -> None:
    store = layers.project
    written = {"turn": "three", "served": {"n_aaaaaa": 2}, "refs": ["M1"], "learned_upto": 12,
               "routed": "yes", "reflection": {"offset": 40, "tool_calls": None}, "reported": 7,
               "evolution": {"g_1": "treatment"}}
    session_path(store, "s4").parent.mkdir(parents=True, exist_ok=True)
    session_path(store, "s4").write_text(json.dumps(written), encoding="utf-8")
    state = read_session(store, "s4")
    assert (state.turn, state.refs, state.routed, state.reported, state.evolution) == (0, {}, False, None, {})
    assert state.served == {"n_aaaaaa": 2} and state.learned_upto == 12       # the good keys are kept
    assert state.reflection.offset == 40 and state.reflection.tool_calls == 0
    [skip] = _skips(layers)
    assert skip["what"] == "session state" and skip["session"] == "s4"
    for key in ("turn", "refs", "routed", "reflection.tool_calls", "reported", "evolution"):
        assert key in skip["reason"]
    # the next write (whose own read says it once more) replaces the bad keys: read again, nothing more to skip
    update_session(store, "s4", lambda s: setattr(s, "turn", 5))
    assert len(_skips(layers)) == 2
    assert read_session(store, "s4").turn == 5 and len(_skips(layers)) == 2


def test_a_file_that_is_not_a_mapping_or_not_json_reads_as_a_new_session(layers: Layers) -> None:
    store = layers.project
    session_path(store, "s5").parent.mkdir(parents=True, exist_ok=True)
    session_path(store, "s5").write_text("[1, 2]", encoding="utf-8")
    assert read_session(store, "s5") == SessionState()
    assert "not a mapping" in _skips(layers)[0]["reason"]
    session_path(store, "s6").write_text('{"turn": 1', encoding="utf-8")   # torn: replaced on the next write
    assert read_session(store, "s6") == SessionState()


def test_recall_merges_its_part_under_the_lock(layers: Layers) -> None:
    store = layers.project
    first = SessionState.load(store, "s7")
    first.turn, first.served, first.arms = 1, {"n_aaaaaa": 1}, {"n_aaaaaa": "served"}
    assert first.ref("n_aaaaaa") == "M1" and first.ref("n_aaaaaa") == "M1"
    second = SessionState.load(store, "s7")   # a concurrent prompt, read before the first saved
    second.turn, second.arms = 1, {"n_aaaaaa": "withheld"}
    first.save_recall(store, "s7", {"turn": 1, "chosen": ["n_aaaaaa"]})
    second.save_recall(store, "s7", {"turn": 1, "chosen": ["n_bbbbbb"]})
    state = read_session(store, "s7")
    assert state.arms == {"n_aaaaaa": "served"}                           # the first decision stands
    assert [s["chosen"] for s in state.selections] == [["n_aaaaaa"], ["n_bbbbbb"]]   # appended, not replaced
    assert state.served_ever == ["n_aaaaaa"] and state.refs == {"M1": "n_aaaaaa"}
    assert state.served == {} and state.turn == 1   # the last prompt's served record is the file's
    third = SessionState.load(store, "s7")
    third.save_recall(store, "s7")   # a prompt with no selection appends nothing
    assert len(read_session(store, "s7").selections) == 2


def test_a_file_written_by_the_dict_based_writers_reads_and_writes_the_same_keys() -> None:
    """What the writers before the typed record put in a session's file (every key some part of rose wrote, in
    their shapes) comes back key for key, value for value."""
    old = {"turn": 3, "served": {"n_aaaaaa": 3}, "served_ever": ["n_aaaaaa"], "refs": {"M1": "n_aaaaaa"},
           "arms": {"n_aaaaaa": "served"}, "selections": [{"turn": 3, "chosen": ["n_aaaaaa"], "baseline": [],
                                                           "rules": ["r_1"]}],
           "compactions": 2,
           "reflection": {"empty_reflections": 0, "offset": 120, "tool_calls": 0, "failures": 0, "turns": 0,
                          "last_reflection": 1700000000.25, "last_decision": "3 tool calls"},
           "learned_upto": 9, "reflections": [{"kind": "session_end", "minted": 2}], "empty_reflections": 0,
           "episode": "e_abc123", "compressed": True, "routed": True,
           "reported": {"used": ["n_aaaaaa"], "unused": [], "ts": "2026-11-01T10:00:00Z"},
           "evolution": {"s_1": {"arm": "treatment", "state": "trial", "kind": "skill", "scope": "project",
                                 "at": "2026-11-01T10:00:00Z"}}}
    problems: list[str] = []
    state = SessionState.from_dict(old, problems)
    assert not problems
    expected = {k: v for k, v in old.items() if k != "empty_reflections"}   # 0 is the default: not written
    assert state.to_dict() == expected


def test_recall_on_a_damaged_session_file_serves_and_repairs_it(layers: Layers) -> None:
    from rose.config import EmbedProvider, Settings
    from rose.model import Node
    from rose.recall import recall

    store = layers.project
    store.save(Node(id="n_retry1", family="retry", title="Retrying flaky services",
                    body="Retry idempotent remote calls with exponential backoff."))
    session_path(store, "s8").parent.mkdir(parents=True, exist_ok=True)
    session_path(store, "s8").write_text(json.dumps({"turn": [], "served": "all", "refs": {"M1": 5}}), "utf-8")
    settings = Settings()
    settings.embed.provider = EmbedProvider.NONE
    result = recall(layers, "retry backoff for flaky remote calls", session_id="s8", settings=settings)
    assert "n_retry1" in result.block
    state = read_session(store, "s8")
    assert state.turn == 1 and state.served == {"n_retry1": 1} and state.refs == {"M1": "n_retry1"}
    assert {"turn", "served", "refs"} <= {p.split(":")[0] for p in _skips(layers)[0]["reason"].split("; ")}
