"""The prompt's inject event: rose's own notes (enums and counts) are written without the redactor; a note that
quotes a backend's failure reason is outside text, and the event is redacted before it reaches disk."""
from __future__ import annotations

import json

from rose.config import Selector
from rose.judge import FailureKind, JudgeFailure, Scripted
from rose.recall import pipeline, recall
from rose.store import Layers
from tests.test_recall import fill, judge_with, settings

SECRET = "ghp_" + "Zq8xW2mN4vB6cR1tY7uI9oP3aS5dF0gH2jK4"


def _events(layers: Layers) -> list[dict]:
    return [json.loads(line) for line in layers.project.events_path.read_text().splitlines()]


def test_a_backend_reason_in_a_note_is_redacted_in_the_event(layers: Layers) -> None:
    fill(layers)
    backend = Scripted(JudgeFailure(FailureKind.TIMEOUT, f"backend said: token {SECRET} rejected"))
    result = recall(layers, "retry backoff flaky", session_id="s1", judge=judge_with(backend),
                    settings=settings(Selector.JUDGE))
    assert "judge selector failed" in result.notice
    text = layers.project.events_path.read_text()
    assert SECRET not in text and "judge selector failed" in text


def test_rose_own_notes_skip_the_redactor(layers: Layers, monkeypatch) -> None:
    fill(layers)
    import rose.redact

    def refuse(obj):
        raise AssertionError("the redactor ran on an event of rose's own notes")

    monkeypatch.setattr(rose.redact, "redact_data", refuse)
    monkeypatch.setattr(pipeline, "_parse_until", lambda deadline: 0.0)
    layers.project.index.conn.execute("DELETE FROM files")   # every lesson looks new: the index is rebuilt
    layers.project.index.conn.commit()
    monkeypatch.setattr("rose.store.build.start", lambda root, scope: True)
    result = recall(layers, "retry backoff flaky", session_id="s2", settings=settings(), hot=True)
    assert "index building in the background" in result.notice
    [inject] = [e for e in _events(layers) if e["kind"] == "inject"]
    assert any("index building" in n for n in inject["notes"])
