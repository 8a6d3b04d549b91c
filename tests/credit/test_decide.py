"""The credit decisions as pure functions: posteriors, the floor, verdicts and their second look, withholding."""
from __future__ import annotations

import math
import random

import pytest

from rose.credit.decide import (CONFIRM_RATE, CONFIRM_WITHHELD, MAX_WITHHOLD_RATE, SERVED, WITHHELD, Arm, Credit,
                                Rules, Verdict, advance, difference, should_withhold, verdict)


def test_beta_posterior_of_an_arm() -> None:
    arm = Arm(n=8, passes=6)                      # Beta(7, 3)
    assert arm.mean == pytest.approx(0.7)
    assert arm.variance == pytest.approx(7 * 3 / (10 ** 2 * 11))
    assert Arm().mean == 0.5 and Arm().add(True) == Arm(1, 1) and Arm(1, 1).add(False) == Arm(2, 1)


def test_a_streak_in_a_small_arm_is_not_precision_it_has_earned() -> None:
    served, withheld = Arm(200, 120), Arm(8, 8)
    raw_sd = math.sqrt(served.variance + withheld.variance)
    effect, sd = difference(served, withheld)
    assert effect == pytest.approx(served.mean - withheld.mean)
    pooled = Arm(208, 128).mean
    assert sd == pytest.approx(math.sqrt(served.variance + pooled * (1 - pooled) / 11))
    assert sd > 1.5 * raw_sd             # the perfect withheld arm would read as proof without the floor
    assert effect < -2.5 * raw_sd and effect > -2.5 * sd


def test_no_verdict_before_the_minimum_samples() -> None:
    rules = Rules(min_samples=20, helps_min_samples=10)
    assert verdict(Credit(Arm(100, 10), Arm(9, 9)), rules).verdict is Verdict.MEASURING
    # enough for "helps" (10 each) but not for harm (20 each): a strong harm waits
    assert verdict(Credit(Arm(100, 10), Arm(12, 12)), rules).verdict is Verdict.MEASURING
    assert verdict(Credit(Arm(100, 95), Arm(12, 2)), rules).verdict is Verdict.HELPS


def test_harm_is_suspected_then_confirmed_by_a_second_look() -> None:
    rules = Rules(min_samples=20)
    bad = Credit(Arm(200, 100), Arm(25, 24))
    judged, since = advance(bad, rules, None)
    assert judged.verdict is Verdict.SUSPECT and since == 25
    # still confirming until CONFIRM_WITHHELD more withheld sessions
    later = Credit(Arm(220, 110), Arm(25 + CONFIRM_WITHHELD - 1, 24 + CONFIRM_WITHHELD - 1))
    assert advance(later, rules, since) == (verdict(later, rules, since), since)
    assert verdict(later, rules, since).verdict is Verdict.SUSPECT
    done = Credit(Arm(230, 115), Arm(25 + CONFIRM_WITHHELD, 24 + CONFIRM_WITHHELD))
    judged, _since_after = advance(done, rules, since)
    assert judged.verdict is Verdict.HARMFUL and judged.verdict.final and "twice" in judged.reason


def test_a_suspicion_that_does_not_hold_is_cleared() -> None:
    rules = Rules(min_samples=20)
    faded = Credit(Arm(230, 150), Arm(35, 23))      # the withheld arm fell back to the served rate
    judged, since = advance(faded, rules, 25)
    assert judged.verdict is Verdict.MEASURING and since is None


def test_no_effect_after_max_withheld() -> None:
    rules = Rules(min_samples=20, max_withheld=60)
    assert verdict(Credit(Arm(540, 400), Arm(60, 44)), rules).verdict is Verdict.NO_EFFECT
    assert verdict(Credit(Arm(540, 400), Arm(59, 44)), rules).verdict is Verdict.MEASURING


def test_withholding_never_twice_in_a_row_capped_and_never_once_final() -> None:
    assert should_withhold(0.05, 0.1, SERVED, Verdict.MEASURING)
    assert not should_withhold(0.15, 0.1, SERVED, Verdict.MEASURING)
    assert not should_withhold(0.0, 0.1, WITHHELD, Verdict.MEASURING)          # never twice in a row
    assert not should_withhold(0.0, 0.1, None, Verdict.HELPS)                  # a final verdict ends it
    assert not should_withhold(0.0, 0.0, None, Verdict.MEASURING)              # switched off
    assert not should_withhold(MAX_WITHHOLD_RATE + 0.01, 1.0, None, Verdict.MEASURING)   # a config cannot go past
    assert should_withhold(CONFIRM_RATE - 0.01, 0.1, SERVED, Verdict.SUSPECT)            # a suspect: more often
    assert not should_withhold(CONFIRM_RATE - 0.01, 0.0, SERVED, Verdict.SUSPECT)        # ...unless switched off


def test_over_many_sessions_the_rate_is_about_what_was_asked() -> None:
    rng, last, withheld = random.Random(3), None, 0
    for _ in range(20000):
        w = should_withhold(rng.random(), 0.1, last, Verdict.MEASURING)
        withheld += w
        assert not (w and last == WITHHELD)
        last = WITHHELD if w else SERVED
    assert 0.085 < withheld / 20000 < 0.095     # 0.1 of the sessions that follow a served one
