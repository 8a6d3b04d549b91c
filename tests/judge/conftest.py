"""Fixtures for the judge's tests: a scripted backend, a judge with a cache and an event log in tmp_path, a mock
model server."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.judge import Judge, JudgeCache, Scripted


@pytest.fixture
def rose_dir(tmp_path: Path) -> Path:
    root = tmp_path / ".rose"
    (root / "locks").mkdir(parents=True)
    return root


@pytest.fixture
def scripted() -> Scripted:
    return Scripted()


@pytest.fixture
def judge(scripted: Scripted, rose_dir: Path) -> Judge:
    return Judge(scripted, cache=JudgeCache(rose_dir / "judge-cache.json", 100), events_path=rose_dir / "events.jsonl",
                 timeout_s=5)


@pytest.fixture
def mock():
    from tests.support.mock_model_server import MockModelServer

    with MockModelServer() as server:
        yield server
