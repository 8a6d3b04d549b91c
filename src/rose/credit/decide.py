"""Per-lesson causal credit, decided in plain code: Beta posteriors per arm and the verdict they support.

    c = Credit(served=Arm(n=40, passes=31), withheld=Arm(n=6, passes=6))
    verdict(c, Rules())          # -> Judged(Verdict.MEASURING | HARMFUL | HELPS | NO_EFFECT, reason)

A lesson that would be served is sometimes withheld (rose.credit.withhold); every session that put it in an arm and
ended with a success or failure is one sample of that arm. Each arm's success rate is a Beta(1, 1) posterior, and
the verdict is read from the difference of the two posterior means against its posterior standard deviation:

    SUSPECT     served worse than withheld by more than SD_BAR (2.5) posterior sd: it is now withheld more often
                (CONFIRM_RATE) until its withheld arm holds CONFIRM_WITHHELD more sessions, then judged again
    HARMFUL     still worse by more than SD_BAR sd at that second look: withdrawn, the user told once; otherwise
                the suspicion is cleared and measuring goes on
    HELPS       served better by more than HELPS_BAR (2.0) sd, after HELPS_MIN_SAMPLES per arm: it has shown it
                helps, so withholding it (which costs a session each time) stops. A lower bar than harm's, because
                a wrong "helps" only ends a measurement, while a late one keeps costing: in the simulation it halves
                the withheld sessions a useful lesson costs and changes how often harm is caught by nothing
    NO_EFFECT   `max_withheld` withheld samples and neither: no effect this test can see; withholding stops
    MEASURING   otherwise (including fewer than `min_samples` in either arm)

The verdict is re-read after every sample, so the bar is high (2.5 sd, not 2), and crossing it once is not enough:
a random walk that touches the bar by chance usually falls back within ten more withheld sessions, a real harm does
not. In the simulation the second look cuts lessons with no effect flagged harmful from about 4% to under 2% and
costs a harmful one about 30 more sessions, during which it is withheld a third of the time instead of a tenth.
One more guard keeps it honest: an arm's
posterior is never taken as narrower than the pooled success rate of both arms would make it at that arm's size
(`difference`). Without it, a rarely sampled arm that happens to show no failure (8 of 8 withheld sessions
succeeded) has a tiny Beta variance and reads as proof: in the simulation that alone flagged 6-10% of lessons with
no effect at all. bench/bench_credit.py runs these same functions over seeded simulated sessions and reports how
often a lesson with no effect is flagged, and how soon one that lowers the pass rate is caught. These are pure
functions of counts: the prompt hook, the learner, `rose credit` and the benchmark all call them, and none of them
imports anything heavy.
"""
from __future__ import annotations

import math
from enum import Enum

from rose.typedrecord import Record

PRIOR_PASSES = 1.0     # Beta(1, 1): every rate equally likely before the first sample
PRIOR_FAILURES = 1.0
SD_BAR = 2.5           # posterior standard deviations a difference must exceed (checked after every sample)
HELPS_BAR = 2.0        # ... for "helps", which only ends withholding (see the module docstring)
HELPS_MIN_SAMPLES = 10
CONFIRM_WITHHELD = 10  # more withheld sessions a suspect lesson must gather before the second look
CONFIRM_RATE = 0.5     # a suspect lesson's withholding chance (never twice in a row still holds: about 1 in 3)
MAX_WITHHOLD_RATE = 0.5   # whatever a config says, a lesson is served at least every other session (never twice)


class Verdict(str, Enum):
    MEASURING = "measuring"
    SUSPECT = "suspect"
    HARMFUL = "harmful"
    HELPS = "helps"
    NO_EFFECT = "no effect"

    @property
    def final(self) -> bool:
        """A final verdict ends withholding: nothing more is learned by measuring it."""
        return self not in (Verdict.MEASURING, Verdict.SUSPECT)


class Arm(Record, frozen=True):
    """One arm's samples: sessions with an outcome, and how many succeeded."""
    n: int = 0          # sessions in this arm that ended in a success or a failure
    passes: int = 0     # of which succeeded

    @property
    def a(self) -> float:
        return PRIOR_PASSES + self.passes

    @property
    def b(self) -> float:
        return PRIOR_FAILURES + (self.n - self.passes)

    @property
    def mean(self) -> float:
        return self.a / (self.a + self.b)

    @property
    def variance(self) -> float:
        s = self.a + self.b
        return self.a * self.b / (s * s * (s + 1))

    def add(self, success: bool) -> Arm:
        return Arm(self.n + 1, self.passes + int(success))


def difference(a: Arm, b: Arm) -> tuple[float, float]:
    """(posterior mean of a minus b, its posterior sd), each arm's variance floored at what the pooled rate of both
    arms gives a Beta of that arm's size: a streak of passes in a small arm is not precision it has earned."""
    pooled = Arm(a.n + b.n, a.passes + b.passes).mean
    floor = pooled * (1 - pooled)
    va = max(a.variance, floor / (a.n + PRIOR_PASSES + PRIOR_FAILURES + 1))
    vb = max(b.variance, floor / (b.n + PRIOR_PASSES + PRIOR_FAILURES + 1))
    return a.mean - b.mean, math.sqrt(va + vb)


class Credit(Record, frozen=True):
    """A lesson's samples in the served and the withheld arm."""
    served: Arm = Arm()
    withheld: Arm = Arm()

    @property
    def effect(self) -> float:
        """Posterior mean success rate served minus withheld: what serving the lesson does to a session."""
        return self.served.mean - self.withheld.mean

    @property
    def sd(self) -> float:
        return difference(self.served, self.withheld)[1]

    @property
    def samples(self) -> int:
        return self.served.n + self.withheld.n


class Rules(Record, frozen=True):
    """The thresholds a credit verdict is decided by."""
    min_samples: int = 20      # samples each arm needs before a harmful verdict
    max_withheld: int = 150    # withheld samples after which no verdict means no detectable effect
    sd_bar: float = SD_BAR
    helps_bar: float = HELPS_BAR
    helps_min_samples: int = HELPS_MIN_SAMPLES


class Judged(Record, frozen=True):
    """A credit verdict and its reason."""
    verdict: Verdict
    reason: str


def verdict(credit: Credit, rules: Rules, suspect_since: int | None = None) -> Judged:
    """`suspect_since`: the withheld arm's size when the lesson first crossed the harm bar (None: not suspect)."""
    s, w = credit.served, credit.withheld
    if suspect_since is not None:
        effect, sd = difference(s, w)
        shown = f"served {s.passes}/{s.n}, withheld {w.passes}/{w.n}: effect {effect:+.2f} ± {sd:.2f}"
        if w.n < suspect_since + CONFIRM_WITHHELD:
            return Judged(Verdict.SUSPECT, f"{shown}; worse when served, confirming "
                                           f"({w.n - suspect_since}/{CONFIRM_WITHHELD} more withheld sessions)")
        if effect < -rules.sd_bar * sd:
            return Judged(Verdict.HARMFUL, f"{shown}, worse when served by more than {rules.sd_bar:g} sd, twice "
                                           f"{CONFIRM_WITHHELD} withheld sessions apart")
        return Judged(Verdict.MEASURING, f"{shown}; the suspicion did not hold")
    least = min(s.n, w.n)
    if least < min(rules.min_samples, rules.helps_min_samples):
        return Judged(Verdict.MEASURING, f"{s.n} served and {w.n} withheld samples; "
                                         f"{min(rules.min_samples, rules.helps_min_samples)} each are needed first")
    effect, sd = difference(s, w)
    shown = f"served {s.passes}/{s.n}, withheld {w.passes}/{w.n}: effect {effect:+.2f} ± {sd:.2f}"
    if least >= rules.min_samples and effect < -rules.sd_bar * sd:
        return Judged(Verdict.SUSPECT, f"{shown}, worse when served by more than {rules.sd_bar:g} sd: confirming")
    if least >= rules.helps_min_samples and effect > rules.helps_bar * sd:
        return Judged(Verdict.HELPS, f"{shown}, better when served by more than {rules.helps_bar:g} sd")
    if w.n >= rules.max_withheld:
        return Judged(Verdict.NO_EFFECT, f"{shown}; no difference beyond {rules.sd_bar:g} sd after "
                                         f"{rules.max_withheld} withheld sessions")
    return Judged(Verdict.MEASURING, shown)


def advance(credit: Credit, rules: Rules, suspect_since: int | None) -> tuple[Judged, int | None]:
    """The verdict after a sample and the suspicion to keep: a first crossing of the harm bar starts one (at the
    withheld arm's size), a second look that does not hold clears it."""
    judged = verdict(credit, rules, suspect_since)
    if judged.verdict is Verdict.SUSPECT and suspect_since is None:
        return judged, credit.withheld.n
    if judged.verdict is Verdict.MEASURING:
        return judged, None
    return judged, suspect_since


def should_withhold(draw: float, rate: float, last_arm: str | None, judged: Verdict) -> bool:
    """Withhold this session? `draw` is uniform in [0, 1) and fixed per (session, lesson); never twice in a row,
    never once the verdict is final, never more often than MAX_WITHHOLD_RATE whatever `rate` says. A suspect lesson
    is withheld at CONFIRM_RATE (when withholding is on at all)."""
    if judged.final or last_arm == WITHHELD or rate <= 0:
        return False
    if judged is Verdict.SUSPECT:
        rate = CONFIRM_RATE
    return draw < min(rate, MAX_WITHHOLD_RATE)


SERVED = "served"
WITHHELD = "withheld"
ARMS = (SERVED, WITHHELD)
