"""Evolution's decisions in plain code: when a generated skill or guardrail is promoted, pruned or retired.

Promotion is measured against a concurrent counterfactual (seed 003). While a candidate is in shadow its trigger is
evaluated but nothing is applied; `min_samples` matched sessions with an outcome open a trial (the shadow proves
only that the trigger fires). In the trial every matched session is randomized, half to treatment (behaviour
applied) and half to control (trigger observed, behaviour not applied), exposure sticky within the session. Each
arm's pass rate is a Beta(1, 1) posterior (rose.credit.decide.Arm, the same code lessons are credited with) and the
trial is judged after every treatment sample once both arms hold `min_samples`:

    PROMOTE       treatment beats control by more than `noise_margin` and by more than SD_BAR posterior sd, with
                  relative extra calls within cost_allowance + cost_per_gain x gain; or the pass rate is no worse
                  than -noise_margin at that confidence while calls drop by more than cost_allowance, that drop
                  significant (SD_BAR) on per-session log calls
    REGRESS       treatment below control by more than SD_BAR sd: retired
    INCONCLUSIVE  `max_trial_uses` treatment samples without either: retired

Crossing the promotion bar once is not enough: it must still hold CONFIRM_TREATMENT treatment samples later
(`advance_trial`). Checked after every sample, a 2.5 sd bar alone promoted about 5% of behaviours with no effect at a
0.5 pass rate in the simulation; the second look brings that under 3% and costs a useful behaviour about 20 more
sessions in trial.

An active artifact keeps a control arm (`active_control_rate` of its matched sessions) and must keep beating it: the
promotion rule on all its samples since the trial opened, with the margin relaxed to zero (`judge_active`). A
shadow, trial or active artifact with no match for STALE_DAYS retires as stale.

bench/bench_credit.py runs `judge_trial` over seeded simulated trials with these defaults and prints how often an
artifact with no effect is promoted and how often a harmful one is caught.
"""
from __future__ import annotations

import math
from enum import Enum

from rose.credit.decide import SD_BAR, Arm, difference
from rose.typedrecord import Record

STALE_DAYS = 90.0
CONFIRM_TREATMENT = 10   # treatment samples after a first crossing of the promotion bar before the second look


class ArmStats(Record, frozen=True):
    """One arm of a trial: samples, passes, and the API calls each sample's session made (sums, for means and the
    log-calls test)."""

    n: int = 0
    passes: int = 0
    calls: float = 0.0
    log_calls: float = 0.0
    log_calls_sq: float = 0.0

    def add(self, passed: bool, calls: int) -> ArmStats:
        lg = math.log(max(calls, 0) + 1)
        return ArmStats(self.n + 1, self.passes + int(passed), self.calls + calls, self.log_calls + lg,
                        self.log_calls_sq + lg * lg)

    def plus(self, other: ArmStats) -> ArmStats:
        return ArmStats(self.n + other.n, self.passes + other.passes, self.calls + other.calls,
                        self.log_calls + other.log_calls, self.log_calls_sq + other.log_calls_sq)

    @property
    def arm(self) -> Arm:
        return Arm(self.n, self.passes)

    @property
    def mean_calls(self) -> float:
        return self.calls / self.n if self.n else 0.0

    @property
    def mean_log(self) -> float:
        return self.log_calls / self.n if self.n else 0.0

    @property
    def var_log(self) -> float:
        if self.n < 2:
            return 0.0
        return max(0.0, (self.log_calls_sq - self.n * self.mean_log ** 2) / (self.n - 1))

    def to_dict(self) -> dict[str, float]:
        return {"n": self.n, "passes": self.passes, "calls": self.calls, "log_calls": self.log_calls,
                "log_calls_sq": self.log_calls_sq}

    @classmethod
    def from_dict(cls, data: object) -> ArmStats:
        d = data if isinstance(data, dict) else {}
        try:
            return cls(int(d.get("n", 0)), int(d.get("passes", 0)), float(d.get("calls", 0.0)),
                       float(d.get("log_calls", 0.0)), float(d.get("log_calls_sq", 0.0)))
        except (TypeError, ValueError):
            return cls()


class TrialRules(Record, frozen=True):
    min_samples: int = 30          # matched sessions in shadow to open a trial; samples per arm before judging
    max_trial_uses: int = 250      # treatment samples without a decision: retired as inconclusive
    noise_margin: float = 0.05     # pass-rate gain a promotion must exceed (and the non-inferiority bound)
    cost_allowance: float = 0.10   # relative extra API calls allowed at no gain; a saving must exceed it
    cost_per_gain: float = 1.0     # relative extra calls each unit of pass-rate gain buys
    sd_bar: float = SD_BAR


class Decision(str, Enum):
    CONTINUE = "continue"
    CONFIRMING = "confirming"   # crossed the promotion bar: judged again CONFIRM_TREATMENT samples later
    PROMOTE = "promote"
    REGRESS = "regress"
    INCONCLUSIVE = "inconclusive"
    KEEP = "keep"        # active: still beats its control
    PRUNE = "prune"      # active: no longer does


class Judged(Record, frozen=True):
    decision: Decision
    reason: str


def extra_calls(t: ArmStats, c: ArmStats) -> float:
    """Relative extra API calls per session of treatment over control (negative: a saving)."""
    if c.mean_calls <= 0:
        return 0.0 if t.mean_calls <= 0 else math.inf
    return t.mean_calls / c.mean_calls - 1.0


def calls_saving_z(t: ArmStats, c: ArmStats, allowance: float = 0.0) -> float:
    """How many standard errors treatment's mean log calls per session lie below control's by more than
    log(1 + allowance): a saving must be shown to exceed the allowance, not merely to exist (checked after every
    sample, a test against zero promoted 1-2% of behaviours that change nothing, on calls noise alone)."""
    se = math.sqrt(t.var_log / max(t.n, 1) + c.var_log / max(c.n, 1))
    diff = c.mean_log - t.mean_log - math.log1p(max(allowance, 0.0))
    if se == 0:
        return math.inf if diff > 0 else 0.0
    return diff / se


def _beats(t: ArmStats, c: ArmStats, rules: TrialRules, margin: float) -> str | None:
    """Why treatment earns its place (None: it does not), by the promotion rule with `margin`."""
    gain, sd = difference(t.arm, c.arm)
    extra = extra_calls(t, c)
    if gain > margin and gain > rules.sd_bar * sd and extra <= rules.cost_allowance + rules.cost_per_gain * gain:
        return f"pass rate {gain:+.2f} ± {sd:.2f} with {extra:+.0%} calls"
    if gain - rules.sd_bar * sd > -rules.noise_margin and -extra > rules.cost_allowance \
            and calls_saving_z(t, c, rules.cost_allowance) > rules.sd_bar:
        return f"pass rate {gain:+.2f} ± {sd:.2f} (no worse) with {extra:+.0%} calls, a significant saving"
    return None


def judge_trial(t: ArmStats, c: ArmStats, rules: TrialRules) -> Judged:
    """Call after every treatment sample (`t` already holds it)."""
    shown = f"treatment {t.passes}/{t.n}, control {c.passes}/{c.n}"
    if t.n < rules.min_samples or c.n < rules.min_samples:
        if t.n >= rules.max_trial_uses:
            return Judged(Decision.INCONCLUSIVE, f"{shown}: {rules.max_trial_uses} uses and the control arm never "
                                                 f"reached {rules.min_samples} samples")
        return Judged(Decision.CONTINUE, f"{shown}: {rules.min_samples} per arm are needed before judging")
    why = _beats(t, c, rules, rules.noise_margin)
    if why:
        return Judged(Decision.PROMOTE, f"{shown}: {why}")
    gain, sd = difference(t.arm, c.arm)
    if gain < -rules.sd_bar * sd:
        return Judged(Decision.REGRESS, f"{shown}: pass rate {gain:+.2f} ± {sd:.2f}, worse by more than "
                                        f"{rules.sd_bar:g} sd")
    if t.n >= rules.max_trial_uses:
        return Judged(Decision.INCONCLUSIVE, f"{shown}: no decision after {rules.max_trial_uses} uses "
                                             f"(pass rate {gain:+.2f} ± {sd:.2f})")
    return Judged(Decision.CONTINUE, f"{shown}: pass rate {gain:+.2f} ± {sd:.2f}")


def advance_trial(t: ArmStats, c: ArmStats, rules: TrialRules, pending: int | None) -> tuple[Judged, int | None]:
    """The trial's decision after a treatment sample, and the promotion to keep pending: `pending` is the
    treatment arm's size when the promotion bar was first crossed (None: not crossed, or it fell back)."""
    judged = judge_trial(t, c, rules)
    if judged.decision is Decision.PROMOTE:
        if pending is None:
            return Judged(Decision.CONFIRMING, f"{judged.reason}; confirming over {CONFIRM_TREATMENT} more uses"), \
                t.n
        if t.n < pending + CONFIRM_TREATMENT:
            return Judged(Decision.CONFIRMING, f"{judged.reason}; confirming ({t.n - pending}/{CONFIRM_TREATMENT})"), \
                pending
        return judged, None
    if pending is not None and judged.decision is Decision.CONTINUE and t.n < pending + CONFIRM_TREATMENT:
        return Judged(Decision.CONFIRMING, f"{judged.reason}; the bar no longer holds, confirming "
                                           f"({t.n - pending}/{CONFIRM_TREATMENT})"), pending
    return judged, None


def judge_active(t: ArmStats, c: ArmStats, rules: TrialRules) -> Judged:
    """An active artifact, on every sample since its trial opened: kept while it still beats its control by the
    promotion rule with the margin relaxed to zero, so one unlucky verdict near the promotion edge does not remove
    it."""
    shown = f"treatment {t.passes}/{t.n}, control {c.passes}/{c.n}"
    if c.n < rules.min_samples:
        return Judged(Decision.KEEP, f"{shown}: the control arm needs {rules.min_samples} samples")
    why = _beats(t, c, rules, 0.0)
    if why:
        return Judged(Decision.KEEP, f"{shown}: {why}")
    gain, sd = difference(t.arm, c.arm)
    return Judged(Decision.PRUNE, f"{shown}: no longer beats its control (pass rate {gain:+.2f} ± {sd:.2f})")


def shadow_ready(matches: int, rules: TrialRules) -> bool:
    """The shadow screen: the trigger fired on `min_samples` sessions that ended with an outcome."""
    return matches >= rules.min_samples


def stale(days_since_match: float, days: float = STALE_DAYS) -> bool:
    return days_since_match >= days


def assign_arm(draw: float, active: bool, active_control_rate: float) -> str:
    """Treatment or control for one session: half and half in a trial; mostly treatment once active."""
    control_share = active_control_rate if active else 0.5
    return CONTROL if draw < control_share else TREATMENT


TREATMENT = "treatment"
CONTROL = "control"
