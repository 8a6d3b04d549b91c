"""Selection lessons (spec section 7): rules about where knowledge is, read by every selector that has a model.

They live in `.rose/routing/<id>.yaml`, not under nodes/, so they never compete with lessons for the budget. Each
is conditioned on a kind of task ("when the task touches the integration tests, read nodes/testing/"); one that is
not is refused here, whoever wrote it (the `route` call's schema and checks refuse it first). A rule may name the
lesson folders it points at (`look_in`) or rules out (`skip`): that is structure the code can observe, so a rule's
record is counted, never judged.

The record: `tried` is the selections the rule was given to and engaged with (a lesson chosen from a folder it
points at, or one it rules out left alone where search alone would have served it), `helped` those whose choice
then beat search alone (the hybrid pick over the same candidates) against what the episode used: higher recall, or
the same recall with higher precision. `precision` and `recall` are the engaged selections' means. When the cap
`routing.max_tokens` binds, the rules with the worst record drop out first.
"""
from __future__ import annotations

import re
from pathlib import Path

from rose.errors import RoseError, RuleRefused, UnsafeFile
from rose.model import now_iso
from rose.tokens import estimate
from rose.typedrecord import Record, field

RECORD_KEEP = 50   # the last episodes a rule was credited for: a job run twice credits once

_LESSON_ID = re.compile(r"\bn_[0-9a-z]{4,}\b", re.IGNORECASE)
# a `when` that says when, not what kind of task: "always", "any task", "in general", "every prompt" ...
_UNCONDITIONAL = re.compile(
    r"^\s*(the\s+task\s+is\s+)?(always|anything|whenever|in\s+general|generally|by\s+default|for\s+everything|"
    r"(any|every|all|each)(\s+(kind\s+of\s+)?(task|prompt|session|time|work|change|request)s?)?)"
    r"(\s+(at\s+all|whatsoever|of\s+any\s+kind|there\s+is))?\s*[.!]?\s*$",
    re.IGNORECASE)
# a statement about a lesson's record is not a kind of task (seed 000: it costs precision and recall both)
_ABOUT_A_LESSON = re.compile(r"\b(rarely|seldom|often|never|frequently)\s+(used|useful|helpful|needed)\b|"
                             r"\bis\s+(rarely|seldom|not|never)\s+(used|useful|helpful)\b", re.IGNORECASE)
_FOLDER = re.compile(r"\bnodes/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})/?")




def unconditioned(when: str) -> str | None:
    """Why `when` does not describe a kind of task, or None when it does."""
    text = " ".join(when.split())
    if len(text) < 8 or len(text.split()) < 2:
        return "too short to describe a kind of task"
    if _UNCONDITIONAL.match(text):
        return "it holds for every task: a rule must be conditioned on a kind of task"
    if _LESSON_ID.search(text):
        return "it names a lesson: a rule describes a kind of task, not a lesson"
    if _ABOUT_A_LESSON.search(text):
        return "it is about how often a lesson is used, which says nothing about which work needs it"
    return None


class Rule(Record):
    id: str
    when: str
    then: str
    created: str = ""
    look_in: list[str] = field(default_factory=list)   # lesson folders (families) the rule points at
    skip: list[str] = field(default_factory=list)      # ... and the ones it rules out
    tried: int = 0          # selections it was given to and engaged with
    helped: int = 0         # ... whose choice beat search alone against what was used
    precision_sum: float = 0.0
    recall_sum: float = 0.0
    credited: list[str] = field(default_factory=list)  # the last RECORD_KEEP episodes counted
    source: str = "learned"                            # learned (stage 7) | manual (rose route --when)

    @property
    def record(self) -> float:
        return (self.helped + 1) / (self.tried + 2)  # Laplace: a new rule starts at one half

    @property
    def precision(self) -> float | None:
        return self.precision_sum / self.tried if self.tried else None

    @property
    def recall(self) -> float | None:
        return self.recall_sum / self.tried if self.tried else None

    def text(self) -> str:
        return f"- When {self.when}: {self.then}"

    def folders(self) -> set[str]:
        return set(self.look_in) | set(self.skip)

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "when": self.when, "then": self.then, "created": self.created, "source": self.source,
                "look_in": list(self.look_in), "skip": list(self.skip), "tried": self.tried, "helped": self.helped,
                "precision_sum": round(self.precision_sum, 4), "recall_sum": round(self.recall_sum, 4),
                "credited": list(self.credited[-RECORD_KEEP:])}

    @classmethod
    def from_dict(cls, data: dict) -> Rule:
        def names(key: str) -> list[str]:
            value = data.get(key) or []
            return [str(x) for x in value] if isinstance(value, list) else []

        return cls(id=str(data["id"]), when=str(data["when"]), then=str(data["then"]),
                   created=str(data.get("created", "")), look_in=names("look_in"), skip=names("skip"),
                   tried=int(data.get("tried", 0)), helped=int(data.get("helped", 0)),
                   precision_sum=float(data.get("precision_sum", 0.0)), recall_sum=float(data.get("recall_sum", 0.0)),
                   credited=names("credited"), source=str(data.get("source", "learned")))


def new_rule_id() -> str:
    import secrets   # only when a rule is written: it loads random and hashlib, which a reading command never needs

    return "r_" + secrets.token_hex(3)


def load_rules(routing_dirs: list[Path]) -> tuple[list[Rule], list[tuple[Path, str]]]:
    """Every readable rule, and (path, reason) for each file that is not one."""
    rules, problems = [], []
    for folder in routing_dirs:
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            from rose.store.frontmatter import load_yaml

            try:
                rules.append(Rule.from_dict(load_yaml(read_rule(path))))
            except UnsafeFile as exc:   # a FIFO, a device, a folder, a link out of the store, too big: never read
                problems.append((path, exc.reason))
            except Exception as exc:  # noqa: BLE001 - a broken rule file is reported and skipped
                problems.append((path, f"not a routing rule: {exc}"))
    return rules, problems


def read_rule(path: Path) -> str:
    """A rule file's text, as rose.store.reader reads what a repository commits: a regular file of at most
    reader.SMALL bytes, a link followed only inside the store (UnsafeFile otherwise)."""
    from rose.store import reader

    return reader.read_text(path, reader.SMALL, within=path.parent.parent)


def within_cap(rules: list[Rule], max_tokens: int) -> list[Rule]:
    """Best record first until the cap binds: the worst-performing rules are the ones left out."""
    kept, used = [], 0
    for rule in sorted(rules, key=lambda r: (-r.record, -r.tried, r.id)):
        cost = estimate(rule.text())
        if used + cost > max_tokens:
            continue
        kept.append(rule)
        used += cost
    return kept


def folders_named(then: str) -> list[str]:
    """The lesson folders a hand-written `then` names (`nodes/testing/`)."""
    return list(dict.fromkeys(m.group(1) for m in _FOLDER.finditer(then)))


def save_rule(routing_dir: Path, when: str, then: str, *, look_in: list[str] | None = None,
              skip: list[str] | None = None, source: str = "learned", rule_id: str | None = None) -> Rule:
    """Store a new rule (redacted, atomic). Raises RuleRefused when `when` is not a kind of task."""
    from rose.redact import redact
    from rose.store.atomic import write_text_atomic
    from rose.store.frontmatter import dump_yaml

    why = unconditioned(when)
    if why:
        raise RuleRefused(f"rule refused: {why} (when {when.strip()[:80]!r})")
    if not then.strip():
        raise RuleRefused("rule refused: it says nothing about where to look")
    rule = Rule(id=rule_id or new_rule_id(), when=redact(" ".join(when.split())), then=redact(" ".join(then.split())),
                created=now_iso(), look_in=[redact(f) for f in (look_in or [])],
                skip=[redact(f) for f in (skip or [])], source=source)
    write_text_atomic(routing_dir / f"{rule.id}.yaml", dump_yaml(rule.to_dict()))
    return rule


def forget(routing_dirs: list[Path], rule_id: str) -> Path:
    """Delete one rule's file; returns the path it had."""
    if not re.fullmatch(r"r_[0-9a-f]{1,32}", rule_id):
        raise RoseError(f"{rule_id!r} is not a rule id (r_ and hex digits)")
    for folder in routing_dirs:
        path = folder / f"{rule_id}.yaml"
        if path.is_file():
            path.unlink()
            return path
    raise RoseError(f"no rule {rule_id}")


def update_rule(routing_dir: Path, rule_id: str, change) -> Rule | None:
    """Read-modify-write one rule under a lock; None when it is gone (forgotten meanwhile)."""
    from rose.store.atomic import file_lock, write_text_atomic
    from rose.store.frontmatter import dump_yaml, load_yaml
    from rose.store.paths import local_root

    path = routing_dir / f"{rule_id}.yaml"
    with file_lock(local_root(routing_dir.parent) / "locks" / f"routing-{rule_id}.lock", timeout_s=5.0):
        if not path.is_file():
            return None
        try:
            rule = Rule.from_dict(load_yaml(read_rule(path)))
        except UnsafeFile:   # nothing rose can update in place: the file stays as it is
            return None
        change(rule)
        write_text_atomic(path, dump_yaml(rule.to_dict()))
        return rule


class Growth(Record):
    rules: int
    lessons: int

    @property
    def ratio(self) -> float:
        return self.rules / self.lessons if self.lessons else 0.0

    def line(self) -> str:
        return (f"{self.rules} selection rule{'' if self.rules == 1 else 's'} over {self.lessons} lessons "
                f"(ratio {self.ratio:.2f}, should fall as the store grows)")


def growth(stores) -> Growth:
    rules, _problems = load_rules([s.routing_dir for s in stores])
    lessons = sum(s.index.servable_totals()[0] for s in stores)
    return Growth(len(rules), lessons)
