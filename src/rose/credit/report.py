"""What credit tells the user: the one-time notice of a withdrawn lesson, `rose credit`, and `rose status`'s lines.

A withdrawal is announced once (rose.credit.announce, re-exported here: the learner appends it to the session
store's `cache/credit-announce.json`, and the next prompt's notice line takes it). `rose status` and `rose credit`
show every withdrawn lesson for as long as it is withdrawn.
"""
from __future__ import annotations

from rose.credit.announce import ANNOUNCE_FILE as ANNOUNCE_FILE
from rose.credit.announce import announce as announce
from rose.credit.announce import take_announcements as take_announcements
from rose.credit.decide import Credit, Verdict, verdict
from rose.credit.withhold import credit_of, rules_of, suspect_of
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.config import Settings
    from rose.store import Layers

class LessonCredit(Record):
    """One lesson's line in `rose credit`."""
    id: str
    title: str
    status: str
    scope: str
    credit: Credit
    verdict: Verdict
    reason: str

    def to_dict(self) -> dict[str, Any]:
        c = self.credit
        return {"id": self.id, "title": self.title, "status": self.status, "scope": self.scope,
                "served": {"n": c.served.n, "passes": c.served.passes},
                "withheld": {"n": c.withheld.n, "passes": c.withheld.passes},
                "effect": round(c.effect, 4), "sd": round(c.sd, 4), "verdict": self.verdict.value,
                "reason": self.reason}


def lessons(layers: Layers, settings: Settings | None = None, *, synced: bool = False) -> list[LessonCredit]:
    """Every lesson with at least one credit sample, most harmful first. `synced`: the caller has just synced the
    stores (`rose status`), so they are not scanned again. Only the rows of measured lessons are read."""
    settings = settings or layers.settings()
    rules = rules_of(settings)
    out = []
    for store in layers.require_any():
        if not synced:
            store.sync()
        # a fold without a credit counter's name in it has no sample: those are not decoded at all
        states = store.index.usage_states(containing='"credit:')
        measured = {node_id: (c, state) for node_id, state in states.items() if (c := credit_of(state)).samples}
        rows = store.index.rows_by_id(measured)
        for node_id, (c, state) in measured.items():
            if node_id not in rows:
                continue
            r = rows[node_id]
            judged = verdict(c, rules, suspect_of(state))
            out.append(LessonCredit(node_id, r.title, r.status, store.scope.value, c, judged.verdict, judged.reason))
    out.sort(key=lambda x: (x.verdict not in (Verdict.HARMFUL, Verdict.SUSPECT), x.credit.effect))
    return out


class CreditSummary(Record):
    """The credit lines of `rose status`."""

    withhold_rate: float = 0.0
    measured: int = 0            # lessons with a sample
    measuring: int = 0
    suspect: int = 0             # worse when served once: being confirmed
    helps: int = 0
    no_effect: int = 0
    harmful: list[dict[str, str]] = field(default_factory=list)   # id, title, status (withdrawn or still served)
    served_samples: int = 0
    withheld_samples: int = 0


def summary(layers: Layers, settings: Settings, *, synced: bool = False) -> CreditSummary:
    out = CreditSummary(withhold_rate=settings.credit.withhold_rate)
    for item in lessons(layers, settings, synced=synced):
        out.measured += 1
        out.served_samples += item.credit.served.n
        out.withheld_samples += item.credit.withheld.n
        if item.verdict is Verdict.HARMFUL:
            out.harmful.append({"id": item.id, "title": item.title, "status": item.status})
        elif item.verdict is Verdict.SUSPECT:
            out.suspect += 1
        elif item.verdict is Verdict.HELPS:
            out.helps += 1
        elif item.verdict is Verdict.NO_EFFECT:
            out.no_effect += 1
        else:
            out.measuring += 1
    return out
