"""JSON nested too deeply to parse (`[[[[...` a hundred thousand deep: the parser raises RecursionError, which is no
ValueError) is malformed JSON like any other wherever rose reads JSON it did not just write: a skip, never a crash."""
from __future__ import annotations

import io
import json

import pytest

from rose.store import Layers

DEEP = "[" * 100_000 + "]" * 100_000


def test_json_nested_too_deeply_is_malformed_json() -> None:
    from rose.text import load_json

    with pytest.raises(RecursionError):
        json.loads(DEEP)                    # what the standard parser does with it
    with pytest.raises(ValueError, match="nested too deeply"):
        load_json(DEEP)
    with pytest.raises(ValueError, match="nested too deeply"):
        load_json(DEEP.encode())


def test_a_deep_job_in_the_learners_queue_is_skipped_and_the_rest_is_read(layers: Layers) -> None:
    from rose.learn.jobs import queued

    store = layers.project
    store.queue_dir.mkdir(parents=True, exist_ok=True)
    (store.queue_dir / "deep.json").write_text(DEEP, encoding="utf-8")
    assert queued(store) == []


def test_a_deep_judge_cache_is_an_empty_one(layers: Layers, tmp_path) -> None:
    from rose.judge.cache import JudgeCache

    path = tmp_path / "judge.json"
    path.write_text(DEEP, encoding="utf-8")
    assert JudgeCache(path).get("any") is None


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_deep_hook_payload_fails_open(layers: Layers, agent: str) -> None:
    from rose.hooks.entry import run as hook

    out = io.StringIO()
    hook([agent, "UserPromptSubmit"], io.BytesIO(DEEP.encode()), out)   # returns, raising nothing
    assert "payload is not JSON: JSON nested too deeply" in json.loads(out.getvalue())["systemMessage"]
