"""rose.routing, directly: which `when` is a kind of task, a rule's files (saved redacted, loaded, forgotten), and
the cap that leaves out the rules with the worst record first."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import RoseError, RuleRefused
from rose.routing import Rule, folders_named, forget, load_rules, save_rule, unconditioned, within_cap
from rose.tokens import estimate


@pytest.mark.parametrize("when", ["always", "any task", "In general.", "every prompt", "short",
                                  "the lesson n_ab12cd applies", "the testing lesson is rarely used"])
def test_a_when_that_is_not_a_kind_of_task_is_named(when: str) -> None:
    assert unconditioned(when) is not None


@pytest.mark.parametrize("when", ["the task touches the integration tests", "a deploy to staging fails"])
def test_a_kind_of_task_passes(when: str) -> None:
    assert unconditioned(when) is None


def test_a_rule_is_saved_redacted_loaded_and_forgotten(tmp_path: Path) -> None:
    folder = tmp_path / "routing"
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    rule = save_rule(folder, "the task touches   the integration tests", f"read nodes/testing/ (token {secret})",
                     look_in=["testing"], source="manual")
    assert rule.when == "the task touches the integration tests"     # whitespace folded
    text = (folder / f"{rule.id}.yaml").read_text(encoding="utf-8")
    assert secret not in text and "[REDACTED" in text
    (folder / "r_broken.yaml").write_text("id: [\n", encoding="utf-8")
    rules, problems = load_rules([folder, tmp_path / "absent"])
    assert [r.id for r in rules] == [rule.id] and rules[0].look_in == ["testing"] and rules[0].source == "manual"
    assert [p.name for p, _why in problems] == ["r_broken.yaml"]
    assert forget([folder], rule.id) == folder / f"{rule.id}.yaml" and not (folder / f"{rule.id}.yaml").exists()
    with pytest.raises(RoseError, match="no rule"):
        forget([folder], rule.id)
    with pytest.raises(RoseError, match="not a rule id"):
        forget([folder], "../etc")


def test_a_refused_rule_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "routing"
    with pytest.raises(RuleRefused):
        save_rule(folder, "always", "read everything")
    with pytest.raises(RuleRefused, match="nothing about where to look"):
        save_rule(folder, "the task touches the tests", "   ")
    assert not folder.exists()


def test_the_cap_keeps_the_best_record_first() -> None:
    good = Rule("r_000001", "the task touches billing", "read nodes/billing/", tried=8, helped=7)
    new = Rule("r_000002", "the task touches search", "read nodes/search/")
    bad = Rule("r_000003", "the task touches the cache", "read nodes/cache/", tried=8, helped=0)
    assert (good.record, new.record) == (0.8, 0.5) and new.precision is None
    room = estimate(good.text()) + estimate(new.text())
    assert [r.id for r in within_cap([bad, new, good], room)] == ["r_000001", "r_000002"]
    assert within_cap([good], 0) == []
    assert Rule.from_dict(good.to_dict()) == good


def test_the_folders_a_then_names() -> None:
    assert folders_named("read nodes/testing/ then nodes/ci and nodes/testing") == ["testing", "ci"]
