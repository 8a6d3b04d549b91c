"""The learner's conversation is redacted once, as it is read; the digest then only budgets it."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from rose.transcripts import digest, final_summary, read_claude, redacted, task_prompt

from .build import ClaudeWriter

KEY = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def _session(tmp_path: Path) -> Path:
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt(f"deploy with token {KEY} please")
    w.tool("Bash", {"command": f"curl -H 'Authorization: Bearer {KEY}' https://api.example.com"},
           "x" * 30_000 + f" {KEY} " + "y" * 30_000, error=True)
    w.say(f"done; I used {KEY}")
    return w.close()


def test_every_text_is_redacted_once_and_the_digest_redacts_nothing_again(tmp_path: Path, monkeypatch) -> None:
    raw = read_claude(_session(tmp_path))
    conv = redacted(raw)
    assert conv.redacted and not raw.redacted and redacted(conv) is conv
    assert all(KEY not in m.text for m in conv.messages) and any(KEY in m.text for m in raw.messages)
    calls: list[str] = []
    digest_module = importlib.import_module("rose.transcripts.digest")   # the package's `digest` is the function
    monkeypatch.setattr(digest_module, "redact", lambda text: calls.append(text) or text)
    d = digest(conv, 400)
    assert calls == [] and KEY not in d.text and d.trimmed + d.omitted > 0     # budgeted, and nothing redacted again
    assert KEY not in (task_prompt(conv) or "") and KEY not in (final_summary(conv) or "")


def test_a_raw_conversation_is_still_redacted_piece_by_piece(tmp_path: Path) -> None:
    raw = read_claude(_session(tmp_path))
    text = digest(raw, 400).text
    assert KEY not in text and "[REDACTED:" in text
    assert KEY not in (task_prompt(raw) or "")


@pytest.mark.parametrize("budget", [200, 3000])
def test_both_paths_show_the_same_entries(tmp_path: Path, budget: int) -> None:
    raw = read_claude(_session(tmp_path))
    assert digest(redacted(raw), budget).shown == digest(raw, budget).shown
