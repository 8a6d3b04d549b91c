"""Selection lessons (spec section 7): rules about where knowledge is, read by every selector.

They live in `.rose/routing/<id>.yaml`, not under nodes/, so they never compete with lessons for the budget. Each
is conditioned on a kind of task ("when the task touches the integration tests, read nodes/testing/"). When the
cap `routing.max_tokens` binds, the rules with the worst record of improving a selection drop out first.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from rose.model import now_iso
from rose.tokens import estimate


@dataclass
class Rule:
    id: str
    when: str
    then: str
    created: str = ""
    tried: int = 0    # selections that had this rule in hand
    helped: int = 0   # ... whose choice was then attributed as used

    @property
    def record(self) -> float:
        return (self.helped + 1) / (self.tried + 2)  # Laplace: a new rule starts at one half

    def text(self) -> str:
        return f"- When {self.when}: {self.then}"

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "when": self.when, "then": self.then, "created": self.created,
                "tried": self.tried, "helped": self.helped}


def new_rule_id() -> str:
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
                data = load_yaml(path.read_text(encoding="utf-8"))
                rules.append(Rule(id=str(data["id"]), when=str(data["when"]), then=str(data["then"]),
                                  created=str(data.get("created", "")), tried=int(data.get("tried", 0)),
                                  helped=int(data.get("helped", 0))))
            except Exception as exc:  # noqa: BLE001 - a broken rule file is reported and skipped
                problems.append((path, f"not a routing rule: {exc}"))
    return rules, problems


def within_cap(rules: list[Rule], max_tokens: int) -> list[Rule]:
    """Best record first until the cap binds: the worst-performing rules are the ones left out."""
    kept, used = [], 0
    for rule in sorted(rules, key=lambda r: (-r.record, r.id)):
        cost = estimate(rule.text())
        if used + cost > max_tokens:
            continue
        kept.append(rule)
        used += cost
    return kept


def save_rule(routing_dir: Path, when: str, then: str) -> Rule:
    from rose.store.atomic import write_text_atomic
    from rose.store.frontmatter import dump_yaml
    from rose.redact import redact

    rule = Rule(id=new_rule_id(), when=redact(when.strip()), then=redact(then.strip()), created=now_iso())
    write_text_atomic(routing_dir / f"{rule.id}.yaml", dump_yaml(rule.to_dict()))
    return rule
