"""The evolution registry: every generated skill and guardrail of one store, machine-local, with its state and arms.

    <store>/evolution/registry.json       the records (never committed: the folder holds a `*` .gitignore)

Each live skill is also written where Claude Code finds it, machine-local (rose.evolve.placed).

States: shadow -> trial -> active -> retired, and rejected (by the screen, the verifier or the user). Rejected and
retired records stay, with their reason: synthesis reads them as falsified hypotheses. Every write holds the store's
evolution lock and is atomic; a registry that cannot be read is treated as empty and left alone (never rewritten
over), so a corrupt file costs generated behaviour, never a session.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from rose.text import load_json
from rose import errors
from rose.evolve.decide import ArmStats
from rose.evolve.screen import Proposal
from rose.store import reader
from rose.typedrecord import Record, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rose.store import Store

SCHEMA = 1
FOLDER = "evolution"
FILE = "registry.json"
MAX_HISTORY = 20


class State(str, Enum):
    SHADOW = "shadow"
    TRIAL = "trial"
    ACTIVE = "active"
    RETIRED = "retired"
    REJECTED = "rejected"

    @property
    def live(self) -> bool:
        return self in (State.SHADOW, State.TRIAL, State.ACTIVE)


class Artifact(Record):
    id: str
    kind: str                         # skill | guardrail
    name: str
    description: str
    phrases: list[str]
    command: str
    action: str
    body: str
    cases: list[list[Any]]            # [text, fires]
    sources: list[str]                # the memories it was compiled from
    scope: str = "project"            # project | global: where it may bind
    state: State = State.SHADOW
    reason: str = ""
    created: str = ""
    updated: str = ""
    last_match: str = ""
    shadow_matches: int = 0
    trial_opened: str = ""
    trial_uses: int = 0               # treatment samples since the trial opened (max_trial_uses counts these)
    pending: int | None = None        # treatment samples when the promotion bar was first crossed (decide.advance_trial)
    treatment: ArmStats = field(default_factory=ArmStats)
    control: ArmStats = field(default_factory=ArmStats)
    history: list[dict[str, str]] = field(default_factory=list)

    @property
    def proposal(self) -> Proposal:
        return Proposal(self.kind, self.name, self.description, tuple(self.phrases), self.command, self.action,
                        self.body, tuple((str(t), bool(f)) for t, f in self.cases))

    @property
    def trigger(self) -> str:
        return self.proposal.trigger

    def fires(self, text: str) -> bool:
        return self.proposal.fires(text)

    def move(self, state: State, reason: str, at: str) -> None:
        self.history = [*self.history, {"at": at, "from": self.state.value, "to": state.value,
                                        "reason": reason}][-MAX_HISTORY:]
        self.state, self.reason, self.updated = state, reason, at

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "name": self.name, "description": self.description,
                "phrases": list(self.phrases), "command": self.command, "action": self.action, "body": self.body,
                "cases": [list(c) for c in self.cases], "sources": list(self.sources), "scope": self.scope,
                "state": self.state.value, "reason": self.reason, "created": self.created, "updated": self.updated,
                "last_match": self.last_match, "shadow_matches": self.shadow_matches,
                "trial_opened": self.trial_opened, "trial_uses": self.trial_uses, "pending": self.pending,
                "treatment": self.treatment.to_dict(), "control": self.control.to_dict(),
                "history": list(self.history)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Artifact:
        return cls(id=str(d["id"]), kind=str(d["kind"]), name=str(d["name"]), description=str(d.get("description", "")),
                   phrases=[str(p) for p in d.get("phrases") or []], command=str(d.get("command", "")),
                   action=str(d.get("action", "warn")), body=str(d.get("body", "")),
                   cases=[[str(c[0]), bool(c[1])] for c in d.get("cases") or [] if isinstance(c, list) and len(c) == 2],
                   sources=[str(s) for s in d.get("sources") or []], scope=str(d.get("scope", "project")),
                   state=State(d.get("state", "shadow")), reason=str(d.get("reason", "")),
                   created=str(d.get("created", "")), updated=str(d.get("updated", "")),
                   last_match=str(d.get("last_match", "")), shadow_matches=int(d.get("shadow_matches", 0)),
                   trial_opened=str(d.get("trial_opened", "")), trial_uses=int(d.get("trial_uses", 0)),
                   pending=d["pending"] if isinstance(d.get("pending"), int) else None,
                   treatment=ArmStats.from_dict(d.get("treatment")), control=ArmStats.from_dict(d.get("control")),
                   history=[h for h in d.get("history") or [] if isinstance(h, dict)])


def artifact_id(kind: str, name: str, sources: list[str]) -> str:
    digest = hashlib.sha256(f"{kind}|{name}|{'|'.join(sorted(sources))}".encode("utf-8", "surrogatepass"))
    return ("sk_" if kind == "skill" else "gr_") + digest.hexdigest()[:10]


def folder(store: Store) -> Path:
    return store.local / FOLDER


def registry_path(store: Store) -> Path:
    return folder(store) / FILE


def read(store: Store) -> list[Artifact]:
    """The records (empty when there is no registry, or it cannot be read). One stat when there is none."""
    path = registry_path(store)
    try:
        data = load_json(reader.read_text(path, reader.RECORD))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return []
    out = []
    for item in (data.get("artifacts") if isinstance(data, dict) else None) or []:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            out.append(Artifact.from_dict(item))
    return out


def _readable(path: Path) -> bool:
    try:
        data = load_json(reader.read_text(path, reader.RECORD))
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return isinstance(data, dict)


@contextlib.contextmanager
def editing(store: Store) -> Iterator[list[Artifact]]:
    """Read-modify-write the registry under its lock; the list yielded is written back. A
    registry that exists but cannot be read is left as it is and the edit is dropped (RegistryUnreadable)."""
    from rose.store.atomic import file_lock, private_dir, write_text_atomic

    path = registry_path(store)
    with file_lock(store.locks_dir / "evolution.lock", timeout_s=store.wait_s):
        if not _readable(path):
            raise RegistryUnreadable(f"{path} is not a registry rose can read: left as it is")
        items = read(store)
        yield items
        private_dir(folder(store))
        ignore = folder(store) / ".gitignore"
        if not ignore.exists():
            write_text_atomic(ignore, "# Written by rose: generated behaviour is machine-local until you promote it\n*\n")
        write_text_atomic(path, json.dumps({"schema": SCHEMA, "artifacts": [a.to_dict() for a in items]},
                                           ensure_ascii=False, indent=1) + "\n")


RegistryUnreadable = errors.RegistryUnreadable
