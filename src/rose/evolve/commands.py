"""`rose evolution [list|show|approve|reject|rollback|promote|distill] [ID]`: what the user can see and decide.

    list       every record of the stores this folder sees, live first, with state, trigger and arms
    show ID    one record whole: trigger, replay cases, arms, history, where its SKILL.md is (rose.evolve.placed)
    approve    a shadow record into trial (only if no other trial can bind in the same sessions)
    reject     any live record out, with "rejected by the user" (kept as a falsified hypothesis)
    rollback   a trial or active record back to shadow; its live-trial evidence is cleared, the control arm kept
    promote    an active skill made the user's own: its .claude/skills/<name>/SKILL.md rewritten without rose's
               marker (Claude Code then loads it itself) and taken out of .git/info/exclude; the record retires
    distill    store mode now, whatever the daily limit says
"""
from __future__ import annotations

from pathlib import Path

from rose import errors
from rose.evolve.decide import ArmStats
from rose.evolve.placed import ours, skill_file, skills_root, sync
from rose.evolve.registry import Artifact, State, editing, read
from rose.model import now_iso
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.store import Layers, Store


EvolutionError = errors.EvolutionError


class Listed(Record):
    store: Store
    artifact: Artifact
    path: Path | None = None     # its SKILL.md, when one is written


def listing(layers: Layers) -> list[Listed]:
    out = []
    for s in layers.require_any():
        root = skills_root(layers, s)
        for a in read(s):
            p = skill_file(root, a.name) if root is not None and a.kind == "skill" else None
            out.append(Listed(s, a, p if p is not None and p.exists() and ours(p, a.id) else None))
    order = {State.ACTIVE: 0, State.TRIAL: 1, State.SHADOW: 2, State.RETIRED: 3, State.REJECTED: 4}
    return sorted(out, key=lambda x: (order[x.artifact.state], x.artifact.name))


def find(layers: Layers, artifact_id: str) -> Listed:
    hits = [x for x in listing(layers) if x.artifact.id == artifact_id or x.artifact.name == artifact_id]
    if not hits:
        raise EvolutionError(f"no evolution record {artifact_id!r} (rose evolution list shows them)")
    return hits[0]


def _edit(layers: Layers, item: Listed, change) -> Artifact:  # noqa: ANN001 - change(Artifact) -> None
    """Change one record under the registry's lock; the skill files follow."""
    done = None
    with editing(item.store) as artifacts:
        for a in artifacts:
            if a.id == item.artifact.id:
                change(a)
                done = a
    if done is None:
        raise EvolutionError(f"{item.artifact.id} vanished from its registry")
    sync(layers, layers.settings().evolution.enabled)
    return done


def approve(layers: Layers, artifact_id: str) -> Artifact:
    from rose.evolve.samples import open_trial

    item = find(layers, artifact_id)
    if item.artifact.state is not State.SHADOW:
        raise EvolutionError(f"{item.artifact.name} is {item.artifact.state.value}: approve moves only a shadow "
                             "record into trial")
    other = [x.artifact.name for x in listing(layers) if x.artifact.state is State.TRIAL]
    if other:
        raise EvolutionError(f"{', '.join(other)} is in trial already: at most one trial binds in a session")
    return _edit(layers, item, lambda a: open_trial(a, "approved by the user", now_iso()))


def reject(layers: Layers, artifact_id: str) -> Artifact:
    item = find(layers, artifact_id)
    if not item.artifact.state.live:
        raise EvolutionError(f"{item.artifact.name} is {item.artifact.state.value} already")
    return _edit(layers, item, lambda a: a.move(State.REJECTED, "rejected by the user", now_iso()))


def rollback(layers: Layers, artifact_id: str) -> Artifact:
    item = find(layers, artifact_id)
    if item.artifact.state not in (State.TRIAL, State.ACTIVE):
        raise EvolutionError(f"{item.artifact.name} is {item.artifact.state.value}: rollback moves a trial or "
                             "active record back to shadow")

    def back(a: Artifact) -> None:
        a.treatment, a.trial_uses, a.shadow_matches, a.pending = ArmStats(), 0, 0, None   # the control arm is kept
        a.move(State.SHADOW, "rolled back by the user", now_iso())
    return _edit(layers, item, back)


def promote(layers: Layers, artifact_id: str) -> Path:
    from rose.evolve.placed import exclude, link_on_the_way, render
    from rose.model import Scope
    from rose.store.atomic import write_text_atomic

    item = find(layers, artifact_id)
    a = item.artifact
    if a.kind != "skill" or a.state is not State.ACTIVE:
        raise EvolutionError(f"{a.name} is a {a.state.value} {a.kind}: only an active skill can be promoted")
    root = skills_root(layers, item.store)
    if root is None:
        raise EvolutionError(f"{a.name}: no folder to promote it into")
    target = skill_file(root, a.name)
    link = link_on_the_way(root, target) if item.store.scope is Scope.PROJECT else None
    if link is not None:
        raise EvolutionError(f"{link} is a symbolic link: {target} is written only inside the repository")
    if target.parent.exists() and not ours(target, a.id):
        raise EvolutionError(f"{target.parent} exists: generated behaviour never overwrites an authored skill")
    # written first, then the record retires: the retired record's file is no longer rose's (no marker) and stays
    write_text_atomic(target, render(a, generated=False))
    exclude(root, target.parent, add=False)   # at worst the promoted skill stays out of `git status`: the user's to add
    _edit(layers, item, lambda x: x.move(State.RETIRED, f"promoted by the user to {target}", now_iso()))
    return target
