"""The backend registry seam, model-free mode, the probe, the public surface and the import cost of rose.judge."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import rose.judge
from rose.config import AgentSettings, BackendName
from rose.judge import FailureKind, JudgeFailure, Scripted, calls, make_backend, probe, register_backend, registered
from rose.judge.backends import base

REPO = Path(__file__).resolve().parents[2]


def test_public_api_is_pinned():
    assert sorted(rose.judge.__all__) == [
        "AnswerInvalid", "Backend", "BackendReply", "BackendRequest", "FailureKind", "Judge", "JudgeCache",
        "JudgeFailure", "ProbeResult", "Scripted", "Stage", "calls", "make_backend", "probe", "register_backend",
        "registered"]
    for name in rose.judge.__all__:
        assert getattr(rose.judge, name) is not None
    for name in calls.__all__:
        assert getattr(calls, name) is not None


def test_built_in_backends_are_registered():
    assert {"claude", "codex", "openai", "anthropic", "scripted"} <= set(registered())


def test_none_is_model_free_and_an_unregistered_backend_is_no_backend():
    assert make_backend(AgentSettings(backend=BackendName.NONE)) is None
    with pytest.raises(JudgeFailure) as err:
        make_backend(AgentSettings(backend=BackendName.SIM))
    assert err.value.kind is FailureKind.NO_BACKEND and "'sim'" in str(err.value)


def test_a_new_backend_plugs_in_without_touching_the_selector(monkeypatch):
    monkeypatch.setattr(base, "_FACTORIES", dict(base._FACTORIES))
    seen = []

    def factory(agent: AgentSettings) -> Scripted:
        seen.append(agent.model)
        backend = Scripted(handler=lambda name, request: {"echo": request.nonce}, model=agent.model)
        backend.name = "sim"
        return backend

    register_backend("sim", factory)
    backend = make_backend(AgentSettings(backend=BackendName.SIM, model="world-1"))
    assert backend is not None and backend.name == "sim" and seen == ["world-1"]
    assert probe(backend).ok


def test_scripted_from_settings_is_an_empty_script():
    backend = make_backend(AgentSettings(backend=BackendName.SCRIPTED))
    assert isinstance(backend, Scripted)
    result = probe(backend)
    assert not result.ok and result.failure == "script"


def test_probe_rejects_a_canned_answer():
    result = probe(Scripted({"echo": "rose-00000000"}, {"echo": "rose-00000000"}))
    assert not result.ok and result.failure == "schema" and "expected the token" in result.reason


def test_probe_is_accounted_when_asked(tmp_path: Path):
    from rose.store import events

    probe(Scripted(handler=lambda name, request: {"echo": request.nonce}), events_path=tmp_path / "events.jsonl")
    [event] = list(events.read(tmp_path / "events.jsonl", kind="judge"))
    assert event["call"] == "probe" and event["stage"] == "probe" and event["ok"] is True


def test_importing_rose_judge_stays_light():
    """Hooks import on every prompt: no jsonschema, subprocess, urllib.request or sqlite3 until they are needed,
    and only the calls that are used."""
    code = ("import sys, rose.judge\n"
            "from rose.judge import calls\n"
            "calls.RELEVANCE\n"
            "heavy = ['jsonschema', 'subprocess', 'urllib.request', 'http.client', 'sqlite3', 'yaml',\n"
            "         'rose.judge.calls.extraction', 'rose.judge.backends.claude_cli', 'rose.store']\n"
            "print(','.join(m for m in heavy if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
