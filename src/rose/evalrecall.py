"""`rose eval-recall`: replay the store's own episodes through every selector arm, against the apex walk.

An episode is a labelled example the store made itself: the prompt a session started with, and the lessons the
work actually used. Each arm selects for that prompt as recall would today (the same candidate search, the same
rules, the same fallbacks, none of the budget gates: the selector always runs), and is scored against that set:

    apex     the baseline (seed 002): the judge walks the whole top level, abstract to concrete, with no search
    hybrid   no model: search alone, the cut on real scores
    judge    the walk over the search's candidates
    fork     a fork of the episode's own session searches the store (only where the backend can fork one)

Reported per arm: precision (needed served / served), recall (needed served / needed), tokens served and model
calls, each a mean per episode, and how often the arm fell back to another. Nothing is written: no session record,
no episode, no usage (the judge's cache may answer a question it was asked before, as it would at recall).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rose.config import Selector

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge
    from rose.store import Layers, Store

ARMS = ("apex", "hybrid", "judge", "fork")
APEX_MAX = 200   # the apex walk's first question holds at most this many lines (the most used, most important)


@dataclass
class ArmResult:
    arm: str
    episodes: int = 0
    skipped: str = ""              # why the arm did not run at all
    precision_sum: float = 0.0
    recall_sum: float = 0.0
    served: int = 0
    needed_served: int = 0
    tokens: int = 0
    calls: int = 0
    fell_back: int = 0             # episodes where another selector ran instead
    failures: int = 0              # episodes where the arm's model call failed (served by the fallback)

    @property
    def precision(self) -> float:
        """Micro: needed served over served, as `rose status` counts precision."""
        return self.needed_served / self.served if self.served else 0.0

    @property
    def recall(self) -> float:
        return self.recall_sum / self.episodes if self.episodes else 0.0

    def mean(self, total: int) -> float:
        return total / self.episodes if self.episodes else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"arm": self.arm, "episodes": self.episodes, "skipped": self.skipped or None,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "served_per_episode": round(self.mean(self.served), 3),
                "tokens_per_episode": round(self.mean(self.tokens), 1),
                "model_calls_per_episode": round(self.mean(self.calls), 3),
                "fell_back": self.fell_back, "failures": self.failures}


@dataclass
class EvalReport:
    episodes: int
    lessons: int
    arms: list[ArmResult] = field(default_factory=list)
    skipped_episodes: int = 0      # no prompt, or nothing used: no label to score against

    def to_dict(self) -> dict[str, Any]:
        return {"episodes": self.episodes, "skipped_episodes": self.skipped_episodes, "lessons": self.lessons,
                "baseline": "apex", "arms": [a.to_dict() for a in self.arms]}


class _Counting:
    """The judge, counting the questions asked of it (a cached answer counts too: recall would have asked)."""

    def __init__(self, judge: Judge):
        self._judge = judge
        self.calls = 0

    def ask(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self._judge.ask(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)


def evaluate(layers: Layers, judge: Judge | None, settings: Settings | None = None, arms: tuple[str, ...] = ARMS,
             limit: int = 0) -> EvalReport:
    stores = layers.require_any()
    for store in stores:
        store.sync()
    settings = settings or layers.settings()
    episodes = [ep for s in stores for ep in s.episodes()[0]]
    episodes.sort(key=lambda e: (e.created, e.id), reverse=True)   # the newest first: what the store is like now
    labelled = [ep for ep in episodes if ep.prompt.strip() and ep.used]
    if limit:
        labelled = labelled[:limit]
    report = EvalReport(len(labelled), sum(s.index.servable_totals()[0] for s in stores),
                        skipped_episodes=len(episodes) - len(labelled) if not limit else 0)
    counting = _Counting(judge) if judge is not None else None
    for arm in arms:
        result = ArmResult(arm)
        report.arms.append(result)
        why = _cannot_run(arm, counting)
        if why:
            result.skipped = why
            continue
        for ep in labelled:
            before = counting.calls if counting else 0
            chosen, ran, failed = _run_arm(arm, stores, ep, settings, counting)
            needed = _as_served(stores, ep.used)
            hits = len(set(chosen) & needed)
            result.episodes += 1
            result.served += len(chosen)
            result.needed_served += hits
            result.precision_sum += hits / len(chosen) if chosen else 0.0
            result.recall_sum += hits / len(needed)
            result.tokens += _tokens(stores, chosen)
            result.calls += (counting.calls - before) if counting else 0
            result.fell_back += ran != arm
            result.failures += failed
    return report


def _cannot_run(arm: str, judge: Any) -> str:
    if arm == "hybrid":
        return ""
    if judge is None or not judge.available:
        return "no model backend"
    if arm == "fork" and not getattr(judge.backend, "can_fork", False):
        return f"backend {judge.backend.name} cannot fork a session"
    return ""


def _run_arm(arm: str, stores: list[Store], ep: Any, settings: Settings, judge: Any) -> tuple[list[str], str, bool]:
    """(ids chosen, the arm that really ran, whether the arm's own call failed)."""
    from rose.deadline import Deadline
    from rose.recall import pipeline, selectors

    if arm == "apex":
        from rose.judge import JudgeFailure

        try:
            walk = selectors.judge_walk(ep.prompt, _apexes(stores), stores, judge, settings.recall,
                                        [r.text() for r in pipeline._rules(stores, settings)],
                                        Deadline(settings.recall.deadline_s))
            return _servable(stores, [ch.id for ch in walk.chosen]), "apex", False
        except (selectors.SelectorFailed, JudgeFailure):
            return [], "none", True
    arm_settings = replace(settings, recall=replace(settings.recall, selector=Selector(arm)))
    trace: dict[str, Any] = {}
    chosen, notes = pipeline._select(stores, ep.prompt[:pipeline.MAX_PROMPT_CHARS], arm_settings, trace, judge,
                                     ep.session if arm == "fork" else None, None, False,
                                     getattr(judge.backend, "name", None) if judge is not None else None,
                                     Deadline(settings.recall.deadline_s))
    ran = trace.get("selector_ran", arm)
    failed = any("failed" in f for f in trace.get("fallbacks", []))
    return [r.id for _s, r, _why in chosen], ran, failed


def _apexes(stores: list[Store]) -> list[Any]:
    """Every servable lesson with no servable parent, as candidates: the top level the apex walk starts from."""
    from rose.recall.candidates import Candidate

    out = []
    for store in stores:
        rows = store.index.rows("status IN ('active', 'disputed')")
        servable = {r.id for r in rows}
        out += [Candidate(r.id, store, r) for r in rows if not any(p in servable for p in r.parents)]
    out.sort(key=lambda c: (-c.row.use_count, -c.row.importance, c.id))
    return out[:APEX_MAX]


def _servable(stores: list[Store], ids: list[str]) -> list[str]:
    out = []
    for store in stores:
        rows = store.index.rows_by_id(ids)
        out += [i for i in ids if i in rows and rows[i].status not in ("archived", "demoted") and i not in out]
    return out


def _as_served(stores: list[Store], ids: list[str]) -> set[str]:
    """What recall would serve for each used lesson today: itself, or the lesson a compression or merge put above
    it (a lesson used before it was compressed is served as its short form now)."""
    from rose.recall.candidates import _servable

    out = set()
    for node_id in ids:
        for store in stores:
            rows = store.index.rows_by_id([node_id])
            if node_id in rows:
                target = _servable(store, rows[node_id], dict(rows))
                out.add(target.id if target is not None else node_id)
                break
        else:
            out.add(node_id)   # deleted since: still needed, never served
    return out


def _tokens(stores: list[Store], ids: list[str]) -> int:
    return sum(r.tokens for s in stores for r in s.index.rows_by_id(ids).values())


def render(report: EvalReport) -> str:
    lines = [f"replayed {report.episodes} episode(s) (prompt -> the lessons actually used) over {report.lessons} "
             f"lessons" + (f"; {report.skipped_episodes} without a prompt or a used lesson skipped"
                           if report.skipped_episodes else ""),
             f"{'arm':<8}{'precision':>10}{'recall':>8}{'served':>8}{'tokens':>8}{'calls':>7}   vs apex walk"]
    base = next((a for a in report.arms if a.arm == "apex" and not a.skipped), None)
    for a in report.arms:
        if a.skipped:
            lines.append(f"{a.arm:<8}  not run: {a.skipped}")
            continue
        vs = ""
        if base is not None and a is not base and base.episodes:
            vs = f"   precision {a.precision - base.precision:+.2f}, recall {a.recall - base.recall:+.2f}"
        elif a is base:
            vs = "   (baseline)"
        extra = f"; fell back {a.fell_back}x" if a.fell_back else ""
        extra += f"; {a.failures} call(s) failed" if a.failures else ""
        lines.append(f"{a.arm:<8}{a.precision:>10.2f}{a.recall:>8.2f}{a.mean(a.served):>8.1f}{a.mean(a.tokens):>8.0f}"
                     f"{a.mean(a.calls):>7.1f}{vs}{extra}")
    if not report.episodes:
        lines.append("no episode to replay yet: episodes are recorded when sessions end")
    return "\n".join(lines)
