"""Evolution's decision code (rose.evolve.decide) and its trigger screen (rose.evolve.screen): pure functions."""
from __future__ import annotations

import random

from rose.evolve.decide import (CONFIRM_TREATMENT, CONTROL, TREATMENT, ArmStats, Decision, TrialRules, advance_trial,
                                assign_arm, judge_active, judge_trial, shadow_ready, stale)
from rose.evolve.screen import Proposal, command_fires, screen, skill_fires

RULES = TrialRules(min_samples=30, max_trial_uses=250)


def arm(n: int, passes: int, calls: int = 8) -> ArmStats:
    out = ArmStats()
    for i in range(n):
        out = out.add(i < passes, calls)
    return out


def test_nothing_is_judged_before_both_arms_hold_min_samples() -> None:
    assert judge_trial(arm(29, 29), arm(40, 0), RULES).decision is Decision.CONTINUE
    assert judge_trial(arm(40, 40), arm(29, 0), RULES).decision is Decision.CONTINUE


def test_a_clear_gain_is_promoted_only_after_the_second_look() -> None:
    t, c = arm(60, 57), arm(60, 30)
    assert judge_trial(t, c, RULES).decision is Decision.PROMOTE
    judged, pending = advance_trial(t, c, RULES, None)
    assert judged.decision is Decision.CONFIRMING and pending == 60
    judged, pending = advance_trial(arm(60 + CONFIRM_TREATMENT - 1, 66), c, RULES, pending)
    assert judged.decision is Decision.CONFIRMING
    judged, pending = advance_trial(arm(60 + CONFIRM_TREATMENT, 67), c, RULES, pending)
    assert judged.decision is Decision.PROMOTE and pending is None


def test_a_gain_that_costs_too_many_calls_is_not_promoted() -> None:
    # +0.2 pass rate buys 0.1 + 1.0 x 0.2 = 30% more calls; treatment makes 60% more
    assert judge_trial(arm(100, 90, calls=16), arm(100, 70, calls=10), RULES).decision is Decision.CONTINUE
    assert judge_trial(arm(100, 90, calls=12), arm(100, 70, calls=10), RULES).decision is Decision.PROMOTE


def test_an_equal_pass_rate_with_significantly_fewer_calls_is_promoted() -> None:
    # "no worse" must hold at 2.5 sd within noise_margin: it takes a few hundred samples at a 0.95 pass rate
    rules = TrialRules(min_samples=30, max_trial_uses=1000)
    rng = random.Random(3)
    t, c = ArmStats(), ArmStats()
    for i in range(300):
        t = t.add(i % 20 != 0, rng.randint(3, 5))
        c = c.add(i % 20 != 0, rng.randint(8, 10))
    judged = judge_trial(t, c, rules)
    assert judged.decision is Decision.PROMOTE and "saving" in judged.reason
    assert judge_trial(c, c, rules).decision is Decision.CONTINUE          # same calls: nothing to promote
    few_t, few_c = arm(60, 57, calls=4), arm(60, 57, calls=9)              # a saving, but "no worse" not yet shown
    assert judge_trial(few_t, few_c, rules).decision is Decision.CONTINUE


def test_regression_and_no_decision_retire() -> None:
    assert judge_trial(arm(60, 30), arm(60, 57), RULES).decision is Decision.REGRESS
    assert judge_trial(arm(250, 200), arm(250, 200), RULES).decision is Decision.INCONCLUSIVE
    assert judge_trial(arm(250, 200), arm(5, 4), RULES).decision is Decision.INCONCLUSIVE


def test_an_active_artifact_must_keep_beating_its_control() -> None:
    assert judge_active(arm(200, 180), arm(40, 20), RULES).decision is Decision.KEEP
    assert judge_active(arm(200, 150), arm(40, 30), RULES).decision is Decision.PRUNE
    assert judge_active(arm(200, 100), arm(10, 10), RULES).decision is Decision.KEEP   # control too small to judge


def test_arms_shadow_and_staleness() -> None:
    draws = [i / 1000 for i in range(1000)]
    assert sum(assign_arm(d, False, 0.1) == CONTROL for d in draws) == 500
    assert sum(assign_arm(d, True, 0.1) == CONTROL for d in draws) == 100
    assert assign_arm(0.99, True, 0.1) == TREATMENT
    assert not shadow_ready(29, RULES) and shadow_ready(30, RULES)
    assert not stale(89.9) and stale(90.0)


def test_arm_stats_round_trip_and_bad_input() -> None:
    a = arm(7, 3, calls=5)
    assert ArmStats.from_dict(a.to_dict()) == a
    assert ArmStats.from_dict({"n": "x"}) == ArmStats() and ArmStats.from_dict(None) == ArmStats()


def test_triggers() -> None:
    assert skill_fires(["release notes"], "Write the RELEASE notes, please")
    assert not skill_fires(["release notes"], "write the notes")
    assert command_fires("git push --force", "cd app && git push origin main --force")
    assert command_fires("git push --force", "FOO=1 sudo git push --force")
    assert not command_fires("git push --force", "git push origin main")
    assert not command_fires("git push --force", "echo git push --force-with-lease")
    assert command_fires("rm -rf *", "rm -rf build")


def guardrail(**kw) -> Proposal:
    base = dict(kind="guardrail", name="no-force-push", description="Warn before force-pushing.", phrases=(),
                command="git push --force", action="warn", body="Push a new branch instead.",
                cases=(("git push --force origin main", True), ("git push origin main", False)))
    return Proposal(**{**base, **kw})


def test_the_screen_rejects_in_code_before_any_verifier_call() -> None:
    assert screen(guardrail(), set()) is None
    assert "taken" in screen(guardrail(), {"no-force-push"})
    assert "lowercase" in screen(guardrail(name="No Force"), set())
    assert "quoted" in screen(guardrail(command="git commit -m 'x'"), set())
    assert "operators" in screen(guardrail(command="git push && rm"), set())
    assert "one-word" in screen(guardrail(command="git"), set())
    assert "neither warn nor block" in screen(guardrail(action="ask"), set())
    assert "one that fires and one that does not" in screen(guardrail(cases=(("git push --force", True),)), set())
    assert "should not fire" in screen(guardrail(cases=(("git push --force", True), ("git push -f --force", False))),
                                       set())
    assert "evidence handles" in screen(guardrail(body="as in session://abc/12"), set())
    assert "machine-local path" in screen(guardrail(body="see /home/ann/notes.txt"), set())
    skill = Proposal("skill", "release-notes", "Write release notes", ("release notes",), "", "none",
                     "1. Read the changelog.\n2. Group by kind.", (("write the release notes", True),
                                                                     ("fix the build", False)))
    assert screen(skill, set()) is None
    assert "plain words" in screen(Proposal(**{**skill.__dict__, "phrases": ("one two three four five",)}), set())
    assert "quotes or shell operators" in screen(Proposal(**{**skill.__dict__, "phrases": ("a && b",)}), set())
