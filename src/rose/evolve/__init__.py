"""Evolution (seed 003's, off by default): grounded memories compiled into candidate skills and guardrails, promoted
only by a randomized trial against a concurrent control. See docs/credit.md.

    decide.py    the trial's decisions as pure functions (shared with bench/bench_credit.py)
    screen.py    triggers, and the deterministic screen every proposal passes before a verifier call
    registry.py  the machine-local registry (<store>/evolution/)
    placed.py    each live skill as .claude/skills/<name>/SKILL.md, machine-local, never over an authored one
    synth.py     session mode (after an extraction) and store mode (a daily distill across projects)
    runtime.py   the prompt path: skills a prompt activates, per arm; guard.py: the PreToolUse hook, guardrails
    samples.py   the learner: exposures and outcomes become samples; trials are judged
    wiring.py    the project-local PreToolUse hook a guardrail needs, added and removed with it
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.config import Settings
    from rose.judge import Judge
    from rose.model import Episode
    from rose.store import Layers, Store


def after_job(layers: Layers, owner: Store, session_id: str, settings: Settings, judge: Judge, *,
              episode: Episode | None = None, calls: int = 0, stored: list[Any] | None = None) -> str:
    """The learner's evolution step for one job: samples and decisions, then (evolution on) one candidate from what
    was just stored, the daily distill, stale records retired, and the guardrail hook kept in step."""
    from rose.evolve import placed, samples, synth, wiring
    from rose.evolve.registry import State, read

    notes = []
    if episode is not None:
        notes.append(samples.record_session(layers, owner, session_id, episode, calls, settings))
    if settings.evolution.enabled:
        if stored:
            notes.append(synth.after_mint(layers, owner, stored, judge, settings))
        notes.append(synth.distill(layers, judge, settings))
        for store in layers.stores():
            notes += samples.retire_stale(store, settings)
    if any(a.kind == "skill" for s in layers.stores() for a in read(s)):
        # skill files follow the records (also once evolution is switched off: then they go)
        placed.sync(layers, settings.evolution.enabled)
    guarded = any(a.kind == "guardrail" and a.state in (State.TRIAL, State.ACTIVE) for s in layers.stores()
                  for a in read(s)) and settings.evolution.enabled
    if guarded or wiring.wired(layers.project_root()):
        notes.append(wiring.ensure(layers.project_root(), guarded))
    return "; ".join(n for n in notes if n)
