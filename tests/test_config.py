"""Settings: typed, defaulted, explained; bad values name the key and the type; the docs are generated."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose import config
from rose.errors import ConfigError

REPO = Path(__file__).resolve().parent.parent


def test_every_knob_has_a_reason_and_a_typed_default() -> None:
    for k in config.knobs():
        assert k.reason.strip(), k.key
        assert config.coerce(k, config.display(k.default)) == k.default, k.key


def test_spec_knobs_exist_with_spec_defaults() -> None:
    s = config.Settings()
    assert s.recall.stays_fresh_turns == 8
    assert (s.reflection.nudge_after_tool_calls, s.reflection.nudge_after_turns, s.reflection.min_surprises) == (12, 3, 2)
    assert (s.compression.max_level, s.compression.min_successes, s.compression.replay_k) == (6, 2, 5)
    assert s.compression.max_token_ratio == 0.75
    assert (s.descent.w_judge, s.descent.w_prior, s.descent.w_cost) == (0.60, 0.28, 0.12)
    assert s.recall.strategy is config.DescentStrategy.DELTA_PATCH


@pytest.mark.parametrize("key,value,expected", [
    ("recall.max_pack_tokens", "2500", 2500), ("recall.enabled", "off", False), ("recall.enabled", True, True),
    ("recall.selector", "HYBRID", config.Selector.HYBRID), ("descent.w_judge", "0.5", 0.5),
    ("agent.model", "sonnet", "sonnet"), ("agent", "codex", config.Backend.CODEX),
])
def test_coercion(key: str, value: object, expected: object) -> None:
    assert config.coerce(config._knob(key), value) == expected


@pytest.mark.parametrize("key,value,message", [
    ("recall.max_pack_tokens", "1.5", "expected integer"), ("recall.max_pack_tokens", True, "expected integer"),
    ("recall.enabled", "maybe", "expected true/false"), ("recall.selector", "x", "one of fork | judge | hybrid"),
    ("descent.w_judge", "heavy", "expected number"), ("agent.model", ["a"], "expected text"),
])
def test_bad_values_name_key_and_type(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        config.coerce(config._knob(key), value)
    assert key in str(err.value) and message in str(err.value)


def test_files_layer_project_over_global(tmp_path: Path) -> None:
    glob, proj = tmp_path / "g.yaml", tmp_path / "p.yaml"
    glob.write_text("recall:\n  max_pack_tokens: 1000\n  judge_calls: 5\n", encoding="utf-8")
    proj.write_text("recall:\n  max_pack_tokens: 3000\n", encoding="utf-8")
    s = config.load([glob, proj])
    assert (s.recall.max_pack_tokens, s.recall.judge_calls) == (3000, 5)


def test_unknown_keys_in_files_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("recal:\n  x: 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown setting 'recal.x'"):
        config.load([path])


def test_set_in_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    config.set_in_file(path, "recall.selector", "judge")
    config.set_in_file(path, "recall.max_pack_tokens", "1234")
    s = config.load([path])
    assert s.recall.selector is config.Selector.JUDGE and s.recall.max_pack_tokens == 1234


def test_docs_config_reference_is_generated_from_code() -> None:
    checked_in = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    assert checked_in == config.reference_markdown(), "regenerate: python -m rose.config > docs/config.md"
