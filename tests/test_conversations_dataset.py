"""The conversational sets in bench/recall_quality/authoring/ are well-formed (fast: no embedder, no store).

bench/bench_conversations.py ranks each set's turns for its questions; a label pointing at a turn that does not
exist, a session out of date order, or two sets sharing a turn id would silently skew every figure it prints.
"""
from __future__ import annotations

import hashlib
import importlib.util
from collections import Counter
from datetime import date
from pathlib import Path
from types import ModuleType

import pytest

DATA = Path(__file__).resolve().parent.parent / "bench" / "recall_quality" / "authoring"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"rose_conversations_{name}", DATA / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SETS = {"1": _load("conversations"), "2": _load("conversations2")}


def _turn_ids(module: ModuleType) -> list[str]:
    return [f"{sid}:{i}" for sid, _date, turns in module.SESSIONS for i in range(len(turns))]


@pytest.mark.parametrize("name", sorted(SETS))
def test_every_question_points_at_one_to_three_existing_turns(name: str) -> None:
    module = SETS[name]
    known = set(_turn_ids(module))
    for question, turns in module.QUESTIONS:
        assert question.strip(), name
        labels = turns.split()
        assert 1 <= len(labels) <= 3, (name, question)
        assert len(set(labels)) == len(labels), (name, question)
        assert set(labels) <= known, (name, question, set(labels) - known)


@pytest.mark.parametrize("name", sorted(SETS))
def test_sessions_are_in_date_order_with_unique_ids_and_real_turns(name: str) -> None:
    module = SETS[name]
    ids = [sid for sid, _date, _turns in module.SESSIONS]
    assert len(ids) == len(set(ids)), name
    dates = [date.fromisoformat(d) for _sid, d, _turns in module.SESSIONS]
    assert dates == sorted(dates) and len(set(dates)) == len(dates), name
    for sid, _date, turns in module.SESSIONS:
        assert 9 <= len(turns) <= 12, (name, sid)
        for speaker, text in turns:
            assert speaker.strip() and text.strip() and "\n" not in text, (name, sid)
    assert {speaker for _sid, _d, turns in module.SESSIONS for speaker, _t in turns} >= {"assistant"}


@pytest.mark.parametrize("name", sorted(SETS))
def test_no_question_is_asked_twice(name: str) -> None:
    counts = Counter(q.strip().lower() for q, _turns in SETS[name].QUESTIONS)
    assert not [q for q, n in counts.items() if n > 1], name


def _turn_id(turn: str) -> str:
    """The bench's turn id (bench_conversations.turn_id; the test below checks the bench still computes it so)."""
    return "n_" + hashlib.sha1(f"rose-conversations:{turn}".encode()).hexdigest()[:8]


def test_the_sets_share_no_session_turn_or_question() -> None:
    """Turn ids are hashed from "<session>:<index>" in the bench, so distinct session ids keep them apart."""
    source = (DATA.parent.parent / "bench_conversations.py").read_text(encoding="utf-8")
    assert 'return "n_" + hashlib.sha1(f"rose-conversations:{turn}".encode()).hexdigest()[:8]' in source
    sessions = [{sid for sid, _d, _t in m.SESSIONS} for m in SETS.values()]
    assert not sessions[0] & sessions[1]
    all_turns = [t for m in SETS.values() for t in _turn_ids(m)]
    assert len(set(all_turns)) == len(all_turns)
    hashed = [_turn_id(t) for t in all_turns]
    assert len(set(hashed)) == len(hashed)
    questions = [{q.strip().lower() for q, _t in m.QUESTIONS} for m in SETS.values()]
    assert not questions[0] & questions[1]


def test_the_second_set_has_the_shapes_it_was_written_for() -> None:
    """8 sessions, about 45 questions, some on two or three turns (updated facts, questions across sessions)."""
    module = SETS["2"]
    assert len(module.SESSIONS) == 8
    assert 40 <= len(module.QUESTIONS) <= 50
    multi = [turns for _q, turns in module.QUESTIONS if len(turns.split()) > 1]
    assert len(multi) >= 8
    across = [turns for turns in multi if len({t.split(":")[0] for t in turns.split()}) > 1]
    assert len(across) >= 5
