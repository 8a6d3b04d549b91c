"""Synthesis: one grounded memory (or one recurring rule) becomes at most one candidate skill or guardrail.

Session mode runs after each extraction on what that session just stored; store mode (`distill`) runs at most once
per `evolution.distill_interval_h` over the hot stores the learner knows. Both share one pipeline:

    choose     the highest-value grounded memory: a rule resting on the user's quoted words or taught by hand
               (importance x confidence), or an execution-verified experience; memories that already produced a
               record (in any state) are dropped here, before any call
    propose    one `evolve` call, shown the falsified hypotheses (rejected and retired records, with their reason)
    screen     the deterministic trigger screen (rose.evolve.screen); a rejection is recorded with its reason
    verify     one `verify` call: does the memory support everything the skill or guardrail says? (fail closed)
    register   a shadow record in the registry of the store where it may bind

Store mode clusters short rules that were used or came from a direct correction, plus verified experiences, by word
overlap (CLUSTER_JACCARD); the cluster spanning the most stores is the candidate, and its scope follows the
recurrence: two or more projects make it global (the global store's registry), else it stays in its project.
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.text import load_json
from rose.evolve.registry import Artifact, RegistryUnreadable, State, artifact_id, editing, read
from rose.evolve.screen import Proposal, authored_skills, screen
from rose.model import MemoryType, Node, Origin, Outcome, Status, now_iso
from rose.store import reader
from rose.store.events import EventKind

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge
    from rose.store import Layers, Store

CLUSTER_JACCARD = 0.6      # word overlap at which two short rules are restatements of one
MAX_FALSIFIED = 20         # falsified hypotheses shown to the proposal call
MAX_CLUSTER = 6            # restatements shown for one cluster
STORES_FILE = "stores.json"     # under the global store's evolution/: project stores the learner has seen
DISTILL_FILE = "distill.json"   # ... and when store mode last ran


@dataclass
class Memory:
    node: Node
    store: Store

    @property
    def value(self) -> float:
        return self.node.importance * (self.node.confidence if self.node.memory_type is MemoryType.LESSON else 1.0)


def grounded(node: Node) -> bool:
    """A memory evolution may compile: the user's own rule, or an experience whose outcome a check verified."""
    if node.status not in (Status.ACTIVE, Status.DISPUTED):
        return False
    if node.memory_type is MemoryType.LESSON:
        return bool(node.quotes) or node.origin in (Origin.EXTRACTION, Origin.MANUAL)
    return node.memory_type is MemoryType.EXPERIENCE and node.outcome is Outcome.VERIFIED


def _records(layers: Layers) -> list[Artifact]:
    return [a for s in layers.stores() for a in read(s)]


def after_mint(layers: Layers, owner: Store, stored: list[Any], judge: Judge, settings: Settings) -> str:
    """Session mode, after an extraction stored `stored` (consolidate Results)."""
    if not settings.evolution.enabled:
        return ""
    remember_store(owner)
    used = {src for a in _records(layers) for src in a.sources}
    found = [Memory(r.node, r.store) for r in stored if getattr(r, "node", None) is not None and r.store is not None
             and grounded(r.node) and r.node.id not in used]
    if not found:
        return ""
    best = max(found, key=lambda m: m.value)
    return compile_candidate(layers, [best], owner, judge, settings, scope="project")


def compile_candidate(layers: Layers, memories: list[Memory], home: Store, judge: Judge, settings: Settings, *,
                      scope: str) -> str:
    """Propose, screen, verify and register one candidate from `memories` in `home`'s registry."""
    from rose.judge import JudgeFailure, Stage, calls

    records = _records(layers)
    falsified = [calls.Hypothesis(a.name, a.kind, a.trigger, a.reason) for a in records
                 if a.state in (State.REJECTED, State.RETIRED)][-MAX_FALSIFIED:]
    taken = sorted({a.name for a in records} | authored_skills(layers.project_root(), _home()))
    request = calls.EvolveRequest(
        memories=[calls.Lesson(m.node.id, m.node.title, _evidence_text(m.node)) for m in memories],
        falsified=falsified, taken=taken, allow_block=settings.evolution.guardrail_block)
    try:
        answer = judge.ask(calls.EVOLVE, request, stage=Stage.EVOLUTION)
    except JudgeFailure as failure:
        return f"evolution: no proposal ({failure.kind.value})"
    if answer.kind == "none":
        return f"evolution: nothing to compile from {memories[0].node.id} ({answer.reason[:80]})"
    proposal = Proposal(answer.kind, answer.name, answer.description, tuple(answer.phrases), answer.command,
                        answer.action, answer.body, tuple((c.text, c.fires) for c in answer.cases))
    sources = [m.node.id for m in memories]
    why = screen(proposal, set(taken))
    if why is None:
        try:
            v = judge.ask(calls.VERIFY, calls.VerifyRequest(claim=_claim(proposal), evidence=[
                calls.Message(f"memory://{m.node.id}", "memory", _evidence_text(m.node)) for m in memories]),
                stage=Stage.EVOLUTION)
            why = None if v.supported else f"verify: {v.reason}"
        except JudgeFailure as failure:
            why = f"verify did not answer ({failure.kind.value})"
    return register(home, proposal, sources, scope, rejected=why)


def register(store: Store, proposal: Proposal, sources: list[str], scope: str, *, rejected: str | None) -> str:
    when = now_iso()
    a = Artifact(id=artifact_id(proposal.kind, proposal.name, sources), kind=proposal.kind, name=proposal.name,
                 description=proposal.description, phrases=list(proposal.phrases), command=proposal.command,
                 action=proposal.action, body=proposal.body, cases=[[t, f] for t, f in proposal.cases],
                 sources=sources, scope=scope, created=when, updated=when)
    if rejected:
        a.move(State.REJECTED, rejected, when)
    else:
        a.history = [{"at": when, "from": "", "to": "shadow", "reason": "compiled, screened and verified"}]
    try:
        with editing(store) as artifacts:
            if any(x.id == a.id for x in artifacts):
                return f"evolution: {a.name} is already recorded"
            artifacts.append(a)
    except RegistryUnreadable as exc:
        return f"evolution: {exc}"
    store.event(EventKind.ADD, stage="evolution", id=a.id, artifact=a.kind, name=a.name, state=a.state.value,
                reason=a.reason, sources=sources)
    return f"evolution: {a.kind} {a.name} " + (f"rejected ({rejected})" if rejected else "recorded in shadow")


def _claim(p: Proposal) -> str:
    what = f"A Claude Code skill named {p.name}, activated by prompts containing: {p.trigger}." if p.kind == "skill" \
        else f"A guardrail named {p.name} that will {p.action} before the agent runs commands matching `{p.command}`."
    return f"{what}\n{p.description}\n\n{p.body}"


def _evidence_text(node: Node) -> str:
    quotes = "\n".join(f"The user said: {q}" for q in node.quotes.values())
    return (f"{node.body}\n\n{quotes}" if quotes else node.body)[:4000]


def _home() -> Path | None:
    from rose import environment

    try:
        return environment.home()
    except Exception:  # noqa: BLE001 - no home: no user skills to protect there
        return None


# -- store mode ---------------------------------------------------------------------------------------------------
def remember_store(store: Store) -> None:
    """Note a project store the learner worked in, so store mode can look across projects (machine-local)."""
    from rose.model import Scope
    from rose.store.layers import global_root

    if store.scope is not Scope.PROJECT:
        return
    path = global_root() / "evolution" / STORES_FILE
    known = _read_list(path)
    root = str(store.root.resolve())
    if root not in known:
        from rose.store.atomic import private_dir, write_text_atomic

        private_dir(path.parent)
        write_text_atomic(path, json.dumps([*known, root][-500:]))


def _read_list(path: Path) -> list[str]:
    try:   # rose writes it 0600 in the user's own store: one another user could have written names no store of theirs
        data = load_json(reader.read_private(path, reader.RECORD))
    except (OSError, ValueError, RecursionError):
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


def word_set(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def clusters(items: list[tuple[str, frozenset[str]]], threshold: float = CLUSTER_JACCARD) -> list[list[int]]:
    """Single-link clusters of items (key, word set) at `threshold`: pure, deterministic."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if jaccard(items[i][1], items[j][1]) >= threshold:
                parent[find(j)] = find(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(items)):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def hot(node: Node) -> bool:
    """Store mode's material: short rules materially used or from a direct correction, and verified experiences."""
    if not grounded(node):
        return False
    if node.memory_type is MemoryType.LESSON:
        return node.use_count > 0 or node.confidence >= 0.9
    return True


def distill(layers: Layers, judge: Judge, settings: Settings, *, force: bool = False) -> str:
    """Store mode: at most once per `distill_interval_h` (or now, with `force`)."""
    from rose.model import Scope
    from rose.store import Store
    from rose.store.atomic import private_dir, write_text_atomic
    from rose.store.layers import global_root

    if not settings.evolution.enabled and not force:
        return ""
    marker = global_root() / "evolution" / DISTILL_FILE
    try:
        last = float(load_json(reader.read_text(marker, reader.RECORD)).get("at", 0))
    except (OSError, ValueError, AttributeError):
        last = 0.0
    if not force and time.time() - last < settings.evolution.distill_interval_h * 3600:
        return ""
    private_dir(marker.parent)
    write_text_atomic(marker, json.dumps({"at": time.time()}))
    stores: list[Store] = list(layers.stores())
    seen = {str(s.root.resolve()) for s in stores}
    for root in _read_list(global_root() / "evolution" / STORES_FILE):
        if root not in seen and (Path(root) / "nodes").is_dir():
            stores.append(Store(Path(root), Scope.PROJECT))
            seen.add(root)
    used = {src for s in stores for a in read(s) for src in a.sources}
    memories: list[Memory] = []
    for store in stores:
        try:
            store.sync()
            memories += [Memory(n, store) for n in store.iter_nodes() if hot(n)]
        except Exception:  # noqa: BLE001 - one unreadable store does not stop the others
            continue
    items = [(m.node.id, word_set(m.node.title + " " + m.node.body)) for m in memories]
    best: tuple[int, list[Memory]] | None = None
    for group in clusters(items):
        members = [memories[i] for i in group]
        if all(m.node.id in used for m in members):
            continue   # drawn only from memories that already produced a record: a falsified or live hypothesis
        projects = len({str(m.store.root) for m in members if m.store.scope is Scope.PROJECT})
        key = (projects, sum(m.value for m in members))
        if best is None or key > (best[0], sum(m.value for m in best[1])):
            best = (projects, members)
    if best is None:
        return "evolution distill: no candidate cluster"
    projects, members = best
    members = sorted(members, key=lambda m: -m.value)[:MAX_CLUSTER]
    scope = "global" if projects >= 2 or members[0].store.scope is Scope.GLOBAL else "project"
    home = layers.writable(Scope.GLOBAL) if scope == "global" else members[0].store
    return "distill: " + compile_candidate(layers, members, home, judge, settings, scope=scope)
