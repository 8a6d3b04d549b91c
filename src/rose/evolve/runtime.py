"""Generated behaviour at run time: which skills a prompt activates and which guardrails a command trips, per arm.

For every live record whose trigger matches (rose.evolve.screen), once per session (the exposure is sticky: the
first match decides, and it is kept in the session's scratch under `evolution`):

    shadow    observed: the match is counted at the session's end (the shadow screen); nothing is applied
    trial     the session is randomized half and half: treatment (applied) or control (observed, not applied). At
              most one trial per session: a second trial that matches the same session is a bystander (no sample)
    active    applied, except in `evolution.active_control_rate` of sessions kept as its control

A skill is applied by serving its procedure in the injected block (Claude Code loads a generated skill only once
the user promotes it; until then rose applies it, so it can hold a control arm). A guardrail is applied by the
PreToolUse hook (rose.evolve.guard). Application is never silent: the notice line names it, and the control arm too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.evolve.decide import CONTROL, TREATMENT, assign_arm
from rose.evolve.registry import Artifact, State, read

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.store import Store
    from rose.store.sessions import Exposure

SHADOW = "shadow"
BYSTANDER = "bystander"    # matched while another trial held the session: no sample


def draw(session_id: str, artifact_id: str) -> float:
    import hashlib

    digest = hashlib.blake2b(f"arm|{session_id}|{artifact_id}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big") / 2 ** 64


def exposures(owner: Store, session_id: str) -> dict[str, Exposure]:
    from rose.store.sessions import read_session

    return read_session(owner, session_id).evolution


def decide_arm(a: Artifact, session_id: str, held: dict[str, Exposure], settings: Settings) -> str:
    """The arm of a newly matched record in this session, given what the session already holds."""
    if a.state is State.SHADOW:
        return SHADOW
    if a.state is State.TRIAL:
        if any(v.state == State.TRIAL.value and v.arm in (TREATMENT, CONTROL) and k != a.id
               for k, v in held.items()):
            return BYSTANDER
        return assign_arm(draw(session_id, a.id), False, settings.evolution.active_control_rate)
    return assign_arm(draw(session_id, a.id), True, settings.evolution.active_control_rate)


def match(stores: list[Store], owner: Store, session_id: str, kind: str, text: str, settings: Settings,
          when: str) -> list[tuple[Artifact, str, bool]]:
    """(record, arm, first match in this session) for every live record of `kind` whose trigger `text` matches;
    new exposures are written to the session's scratch."""
    from rose.store.sessions import Exposure, SessionState, update_session

    live = [(s, a) for s in stores for a in read(s) if a.kind == kind and a.state.live and a.fires(text)]
    if not live:
        return []
    out: list[tuple[Artifact, str, bool]] = []

    def put(state: SessionState) -> None:
        held = state.evolution
        for store, a in live:
            known = held.get(a.id)
            if known is not None:
                out.append((a, known.arm, False))
                continue
            arm = decide_arm(a, session_id, held, settings)
            held[a.id] = Exposure(arm=arm, state=a.state.value, kind=a.kind, scope=store.scope.value, at=when)
            out.append((a, arm, True))
    update_session(owner, session_id, put)
    return out


def skills(stores: list[Store], owner: Store, session_id: str, prompt: str, settings: Settings) -> tuple[list[str], str]:
    """(skill texts to serve in the block, the notice note) for this prompt."""
    from rose.model import now_iso
    from rose.inert import escape, plain

    texts, said = [], []
    for a, arm, first in match(stores, owner, session_id, "skill", prompt, settings, now_iso()):
        if arm == TREATMENT and first:   # served once: it stays in context for the session
            texts.append(f'<skill name="{escape(a.name)}" id="{escape(a.id)}" state="{a.state.value}">\n'
                         f"{escape(a.description)}\n{escape(a.body)}\n</skill>")
            said.append(f"skill “{plain(a.name, 40)}” applied ({a.state.value})")
        elif arm == CONTROL and first:
            said.append(f"skill “{plain(a.name, 40)}” held back ({a.state.value} control)")
    return texts, ", ".join(said)
