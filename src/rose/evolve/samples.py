"""The learner's side of a trial: a session's exposures become samples, and the decisions are taken.

    note = record_session(layers, owner, session_id, episode, calls, settings)

A sample is one session that was exposed (rose.evolve.runtime) and ended with a verdict: a pass only when the
outcome is execution-verified (a check that ran after the last change passed, rose.transcripts.outcome; a pass
resting on the `assess` reading alone is not a sample), a fail when it failed, however that was read. `calls` is the
session's API-call count (the agent's responses), which the cost rule weighs.

    shadow    a sample counts toward the shadow screen; at `min_samples` a trial opens, unless another live trial
              can bind in the same session (at most one), and the control arm restarts with it
    trial     the sample joins its arm; after a treatment sample the trial is judged (rose.evolve.decide), a
              promotion confirmed by a second look (advance_trial)
    active    the sample joins its arm (counted from the trial's opening); after a treatment sample it is judged
              again with the margin relaxed to zero, and pruned when it no longer beats its control

Every record that matched gets its `last_match`; `retire_stale` retires what has not matched for `stale_days`.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

from rose.evolve.decide import (CONTROL, TREATMENT, Decision, TrialRules, advance_trial, judge_active, shadow_ready,
                                stale)
from rose.evolve.registry import RegistryUnreadable, State, editing, read
from rose.evolve.runtime import SHADOW, exposures
from rose.model import EpisodeOutcome, now_iso
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.model import Episode
    from rose.store import Layers, Store
    from rose.store.sessions import Exposure


def rules_of(settings: Settings) -> TrialRules:
    es = settings.evolution
    return TrialRules(min_samples=max(1, es.min_samples), max_trial_uses=max(1, es.max_trial_uses),
                      noise_margin=es.noise_margin, cost_allowance=es.cost_allowance, cost_per_gain=es.cost_per_gain)


def verdict_of(episode: Episode) -> bool | None:
    """True pass, False fail, None no sample."""
    if episode.outcome is EpisodeOutcome.FAILURE:
        return False
    if episode.outcome is EpisodeOutcome.SUCCESS and episode.extra.get("outcome_from") == "execution":
        return True
    return None


def _store_for(layers: Layers, owner: Store, scope: str) -> Store | None:
    from rose.model import Scope

    if scope == "global":
        return layers.writable(Scope.GLOBAL)
    return owner


def record_session(layers: Layers, owner: Store, session_id: str, episode: Episode, calls: int,
                   settings: Settings) -> str:
    held = exposures(owner, session_id)
    if not held:
        return ""
    passed = verdict_of(episode)
    rules = rules_of(settings)
    notes: list[str] = []
    when = now_iso()
    by_store: dict[str, list[tuple[str, Exposure]]] = {}
    for artifact_id, exp in held.items():
        by_store.setdefault(exp.scope, []).append((artifact_id, exp))
    for scope, items in by_store.items():
        store = _store_for(layers, owner, scope)
        if store is None:
            continue
        try:
            with editing(store) as artifacts:
                index = {a.id: a for a in artifacts}
                for artifact_id, exp in items:
                    a = index.get(artifact_id)
                    if a is None or not a.state.live:
                        continue
                    a.last_match = when
                    if passed is None:
                        continue
                    notes += _sample(a, exp.arm, exp.state, passed, calls, rules,
                                     _other_trial(layers, owner, a), when)
        except RegistryUnreadable as exc:
            notes.append(str(exc))
    for note in notes:
        owner.event(EventKind.UPDATE, stage="evolution", detail=note, session=session_id)
    return "; ".join(notes)


def _other_trial(layers: Layers, owner: Store, a) -> bool:  # noqa: ANN001 - an Artifact
    """Is another record in trial where it could bind in the same session as `a`?"""
    stores = [owner] + [s for s in layers.stores() if s is not owner]
    return any(b.state is State.TRIAL and b.id != a.id for s in stores for b in read(s))


def _sample(a, arm: str, state_then: str, passed: bool, calls: int, rules: TrialRules, other_trial: bool,
            when: str) -> list[str]:
    if a.state is State.SHADOW:
        if arm != SHADOW:
            return []
        a.shadow_matches += 1
        if shadow_ready(a.shadow_matches, rules):
            if other_trial:
                return [f"{a.name}: shadow screen passed ({a.shadow_matches} matches); waits, another trial binds here"]
            open_trial(a, f"the trigger fired on {a.shadow_matches} sessions with an outcome", when)
            return [f"{a.name}: trial opened"]
        return []
    if state_then != a.state.value or arm not in (TREATMENT, CONTROL):
        return []   # exposed under an earlier state (or as a bystander): not a sample of this one
    if arm == CONTROL:
        a.control = a.control.add(passed, calls)
        return []
    a.treatment = a.treatment.add(passed, calls)
    if a.state is State.TRIAL:
        a.trial_uses += 1
        judged, a.pending = advance_trial(a.treatment, a.control, rules, a.pending)
        if judged.decision is Decision.PROMOTE:
            a.move(State.ACTIVE, f"promoted: {judged.reason}", when)
        elif judged.decision is Decision.REGRESS:
            a.move(State.RETIRED, f"regressed: {judged.reason}", when)
        elif judged.decision is Decision.INCONCLUSIVE:
            a.move(State.RETIRED, f"inconclusive: {judged.reason}", when)
        else:
            return []
        return [f"{a.name}: {a.reason}"]
    judged = judge_active(a.treatment, a.control, rules)
    if judged.decision is Decision.PRUNE:
        a.move(State.RETIRED, f"pruned: {judged.reason}", when)
        return [f"{a.name}: {a.reason}"]
    return []


def open_trial(a, reason: str, when: str) -> None:  # noqa: ANN001
    from rose.evolve.decide import ArmStats

    a.treatment, a.control, a.trial_uses, a.trial_opened, a.pending = ArmStats(), ArmStats(), 0, when, None
    a.move(State.TRIAL, reason, when)


def retire_stale(store: Store, settings: Settings, now: datetime | None = None) -> list[str]:
    """Retire every live record of `store` with no trigger match for `evolution.stale_days`."""
    now = now or datetime.now(timezone.utc)
    out = []
    try:
        with editing(store) as artifacts:
            for a in artifacts:
                if not a.state.live:
                    continue
                since = _days(a.last_match or a.created, now)
                if since is not None and stale(since, settings.evolution.stale_days):
                    a.move(State.RETIRED, f"stale: no trigger match for {since:.0f} days", now_iso())
                    out.append(f"{a.name}: {a.reason}")
    except RegistryUnreadable:
        return []
    return out


def _days(stamp: str, now: datetime) -> float | None:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return (now - when).total_seconds() / 86400
