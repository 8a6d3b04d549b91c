"""Each decision rule of retention, directly: the pure functions in rose.retention.rules, with their constants."""
from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from rose.retention import rules
from rose.retention.rules import Unit, Watermarks

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


# -- 1. importance moves with evidence ------------------------------------------------------------------------
def test_success_raises_importance_by_a_share_of_the_headroom_never_past_the_ceiling() -> None:
    assert rules.next_importance(0.6, "success") == pytest.approx(0.7)
    value = 0.6
    for _ in range(200):
        value = rules.next_importance(value, "success")
    assert value <= rules.IMPORTANCE_CEIL and value > 0.99
    assert rules.next_importance(1.0, "success") == 1.0


def test_failure_lowers_importance_by_a_share_of_it_down_to_the_floor() -> None:
    assert rules.next_importance(0.6, "failure") == pytest.approx(0.45)
    assert rules.next_importance(0.12, "failure") == rules.IMPORTANCE_FLOOR
    steps, value = 0, 0.6
    while not rules.archive_now(value):
        value, steps = rules.next_importance(value, "failure"), steps + 1
    assert steps == 7                       # a medium mint: seven failures in a row
    steps, value = 0, 0.9
    while not rules.archive_now(value):
        value, steps = rules.next_importance(value, "failure"), steps + 1
    assert steps == 8                       # a high one: eight


@pytest.mark.parametrize("outcome", ["partial", "unknown", ""])
def test_an_outcome_that_is_not_success_or_failure_moves_nothing(outcome: str) -> None:
    assert rules.next_importance(0.6, outcome) == 0.6


def test_a_lesson_that_mostly_helps_stays_well_above_the_floor() -> None:
    value = 0.6
    for i in range(400):                    # four successes for every failure
        value = rules.next_importance(value, "failure" if i % 5 == 4 else "success")
    assert value > 0.5 and not rules.archive_now(value)


def test_a_lesson_whose_sessions_fail_half_the_time_for_other_reasons_is_never_archived_by_credit() -> None:
    value, lowest = 0.9, 1.0                # used on every session of a family whose tasks fail half the time
    for i in range(400):
        value = rules.next_importance(value, "failure" if i % 2 else "success")
        lowest = min(lowest, value)
    assert 0.35 < value < 0.65 and not rules.archive_now(lowest)
    value = 0.6                             # ... and runs of three failures do not take it to the floor either
    for i in range(400):
        value = rules.next_importance(value, "failure" if i % 6 >= 3 else "success")
        assert not rules.archive_now(value)


def test_effective_importance_is_the_learned_value_when_evidence_moved_it() -> None:
    assert rules.effective_importance(0.6, None) == 0.6
    assert rules.effective_importance(0.6, 0.3) == 0.3
    assert rules.effective_importance(0.6, 1.7) == 1.0


def test_archive_now_only_at_the_floor() -> None:
    assert rules.archive_now(0.1) and rules.archive_now(0.05)
    assert not rules.archive_now(0.1001)


# -- 2. utility -------------------------------------------------------------------------------------------------
def test_utility_is_the_seed_formula() -> None:
    got = rules.utility(0.8, 0.9, 4, 90.0)
    want = 0.55 * 0.8 + 0.15 * 1.0 + 0.15 * min(1, math.log(5) / math.log(11)) + 0.15 / (1 + 90 / 180)
    assert got == pytest.approx(want)
    assert rules.utility(0.8, 0.6, 4, 90.0) == pytest.approx(want - 0.15 * 0.5)   # C = 0.5 below high confidence
    assert rules.utility(1.0, 1.0, 10, 0) == pytest.approx(1.0)                    # every term full
    assert rules.utility(1.0, 1.0, 1000, 0) == pytest.approx(1.0)                  # uses saturate at 10


def test_utility_falls_with_age_and_rises_with_uses() -> None:
    assert rules.utility(0.6, 0.5, 0, 0) > rules.utility(0.6, 0.5, 0, 180) > rules.utility(0.6, 0.5, 0, 720)
    assert rules.utility(0.6, 0.5, 0, 180) == pytest.approx(rules.utility(0.6, 0.5, 0, 0) - 0.075)
    assert rules.utility(0.6, 0.5, 3, 30) > rules.utility(0.6, 0.5, 1, 30) > rules.utility(0.6, 0.5, 0, 30)


def test_age_counts_from_the_last_material_use_else_creation() -> None:
    used = (NOW - timedelta(days=10)).isoformat().replace("+00:00", "Z")
    made = (NOW - timedelta(days=100)).isoformat().replace("+00:00", "Z")
    assert rules.age_days(used, made, NOW) == pytest.approx(10)
    assert rules.age_days("", made, NOW) == pytest.approx(100)
    assert rules.age_days("", "not a time", NOW) == 0.0       # never aged out on a stamp it cannot read


def test_a_use_stamped_in_the_future_keeps_no_lesson_young() -> None:
    made = (NOW - timedelta(days=100)).isoformat().replace("+00:00", "Z")
    assert rules.age_days("9999-12-31T00:00:00Z", made, NOW) == pytest.approx(100)
    soon = (NOW + timedelta(hours=2)).isoformat().replace("+00:00", "Z")
    assert rules.age_days(soon, made, NOW) == 0.0             # a clock a little ahead is a clock, not an attack


# -- 3. watermarks and eviction ---------------------------------------------------------------------------------
def test_the_soft_watermark_is_80_percent_of_the_hard_one() -> None:
    marks = rules.watermarks("project", "lesson")
    assert marks.hard == rules.HARD_TOKENS[("project", "lesson")] and marks.soft == int(marks.hard * 0.8)
    assert rules.watermarks("global", "lesson", {("global", "lesson"): 100}) == Watermarks(100, 80)
    for key, hard in rules.HARD_TOKENS.items():
        assert rules.watermarks(*key).hard == hard


def _units(*specs: tuple[str, int, float, str]) -> list[Unit]:
    return [Unit(h, (h,), t, u, e) for h, t, u, e in specs]


def test_nothing_is_evicted_at_or_under_the_hard_mark() -> None:
    units = _units(("a", 50, 0.1, ""), ("b", 50, 0.2, ""))
    assert rules.eviction(units, 100, Watermarks(100, 80)) == []


def test_eviction_takes_the_lowest_utility_first_down_to_the_soft_mark() -> None:
    units = _units(("a", 30, 0.9, ""), ("b", 30, 0.2, ""), ("c", 30, 0.5, ""), ("d", 30, 0.3, ""))
    chosen = rules.eviction(units, 120, Watermarks(100, 80))
    assert [u.head for u in chosen] == ["b", "d"]          # 120 -> 90 -> 60 <= 80


def test_eviction_skips_exempt_units_and_breaks_ties_by_size_then_id() -> None:
    units = _units(("a", 10, 0.1, "disputed"), ("b", 20, 0.3, ""), ("c", 40, 0.3, ""), ("d", 40, 0.3, ""))
    chosen = rules.eviction(units, 110, Watermarks(100, 80))
    assert [u.head for u in chosen] == ["c"]                # 110 - 40 = 70 <= 80; exempt a never
    assert rules.eviction(_units(("a", 500, 0.0, "x")), 500, Watermarks(100, 80)) == []


# -- 3b. consolidation ------------------------------------------------------------------------------------------
def test_similarity_only_nominates_the_closest_pair_above_the_threshold() -> None:
    w = rules.words
    records = [("n_a", w("the test database is postgres on port 5433")),
               ("n_b", w("the test database is postgres on port 5433 seen in ci")),
               ("n_c", w("deploys go through argo rollouts"))]
    assert rules.nominate(records)[:2] == ("n_a", "n_b")
    assert rules.nominate(records, declined=[("n_b", "n_a")]) is None
    assert rules.nominate(records[1:]) is None
    assert rules.jaccard(w("ab cd ef"), w("ab cd ef")) == 1.0 and rules.jaccard(frozenset(), w("ab")) == 0.0
    assert rules.jaccard(w("ab cd"), w("ab ef")) == pytest.approx(1 / 3)


def test_a_replacement_takes_the_lower_importance_and_never_a_stronger_outcome() -> None:
    assert rules.consolidated_traits([0.7, 0.5], [0.9, 0.6], ["verified", "verified"]) == (0.5, 0.6, "verified")
    assert rules.consolidated_traits([0.7, 0.5], [0.9, 0.6], ["verified", "unknown"])[2] == "unknown"
    assert rules.consolidated_traits([0.7, 0.5], [0.9, 0.6], ["verified", "failed"])[2] == "unknown"
    assert set(rules.CONSOLIDATE_TYPES) == {"orientation", "experience"}      # never short user rules


# -- 4. cold paging ---------------------------------------------------------------------------------------------
def test_an_exact_match_needs_two_distinct_words_or_the_whole_title() -> None:
    text = "Redis db 2 The cache lives in Redis db 2; db 0 belongs to the job queue."
    assert rules.cold_match("flushing the redis cache wiped the queue", "Redis db 2", text) >= 2
    assert rules.cold_match("the cache is slow", "Redis db 2", text) == 0             # one generic word is not
    assert rules.cold_match("caches everywhere", "Redis db 2", text) == 0              # no stemming: exact words
    assert rules.cold_match("what about redis db 2 today", "Redis db 2", text) >= 10  # the title, verbatim
    assert rules.cold_match("ticket 12 and 13", "x", "ticket 12 13") == 0              # short tokens do not count


def test_preview_is_short() -> None:
    class N:
        gist = ""
        body = "word " * 200
    assert len(rules.preview(N())) <= rules.PREVIEW_CHARS


# -- 5. weak and stale ------------------------------------------------------------------------------------------
def test_weak_and_stale_needs_both_and_a_project_record() -> None:
    assert rules.weak_and_stale("project", 0.4, 90)
    assert not rules.weak_and_stale("project", 0.41, 400)
    assert not rules.weak_and_stale("project", 0.2, 89.9)
    assert not rules.weak_and_stale("global", 0.1, 400)


# -- 6. recurrence ----------------------------------------------------------------------------------------------
def test_recurrence_needs_three_distinct_projects() -> None:
    assert not rules.recurs(["a", "b", "b"])
    assert rules.recurs(["a", "b", "c"])


def test_the_highest_importance_instance_moves_then_the_best_evidenced_then_the_oldest() -> None:
    assert rules.promotion_choice([("n_a", 0.6, 5, "2026"), ("n_b", 0.9, 1, "2027")]) == "n_b"
    assert rules.promotion_choice([("n_a", 0.9, 1, "2026"), ("n_b", 0.9, 3, "2027")]) == "n_b"
    assert rules.promotion_choice([("n_a", 0.9, 3, "2027"), ("n_b", 0.9, 3, "2026")]) == "n_b"
