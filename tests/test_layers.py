"""Which part of rose may import which: the layers, pinned. A new import across parts must fit the table (or the
table changes on purpose, in review). Read from the source (the AST), lazy imports inside functions included, since
a lazy import is still a dependency; only imports under ``if TYPE_CHECKING:`` are left out (they never run).

A part is a top-level module or package of rose, except where a package holds two layers: the store's file
primitives (atomic writes and locks, the YAML text, where stores live) sit below config and trust, which use them,
while the stores themselves sit above; the warm helper's client (on every prompt) sits below hooks and recall, while
its server (a process of its own that runs them) sits above everything it runs. Likewise the agents' hook contracts
(`rose.hooks`: timeouts, payloads) sit below install, while the hook runtime (`hooks.entry`) sits on top; the
retention rules (pure functions) below the stores, while the maintenance pass sits above them; and the MCP package's
SDK probe below install, while its tools sit above the learner.
"""
from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "rose"
SPLIT = {"rose.store.atomic": "store.files", "rose.store.frontmatter": "store.files", "rose.store.paths": "store.files",
         "rose.store.reader": "store.files",
         "rose.warm.client": "warm.client", "rose.warm.server": "warm.server",
         "rose.warm.commands": "warm.commands", "rose.warm.watch": "warm.watch",
         "rose.hooks": "hooks.spec", "rose.hooks.adapters": "hooks.spec", "rose.retention.rules": "retention.rules",
         "rose.mcp": "mcp.sdk"}

BASE = {"errors", "lazy", "model", "records", "typedrecord", "tokens", "deadline", "environment", "envvars", "inert",
        "terminal", "text", "ownership", "words", "store.files"}
# part -> the parts it imports today (besides itself and the base, which every part may use); listed bottom up
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "model": set(),
    "records": set(),
    "typedrecord": set(),
    "lazy": set(),
    "tokens": set(),
    "deadline": set(),
    "environment": set(),
    "envvars": set(),
    "ownership": set(),
    "terminal": set(),
    "text": set(),
    "inert": {"terminal"},
    "words": set(),
    "detach": {"redact"},
    "store.files": set(),
    "retention.rules": set(),
    "hooks.spec": set(),
    "mcp.sdk": set(),
    "redact": set(),
    "config": set(),
    "trust": set(),
    "embed": {"config"},
    "warm.client": {"detach"},
    "store": {"config", "detach", "embed", "redact", "retention.rules", "trust"},
    "routing": {"redact"},
    "lessons": set(),
    "judge": {"config", "redact", "routing", "store"},
    "transcripts": {"redact"},
    "compress": {"config", "judge", "store"},
    "credit": {"compress", "retention.rules", "store"},
    "retention": {"judge", "lessons", "retention.rules", "store"},
    "mcp": {"judge", "learn", "search", "store"},
    "install": {"hooks.spec", "mcp.sdk"},
    "evolve": {"credit", "install", "judge", "store"},
    "recall": {"config", "credit", "embed", "evolve", "judge", "retention", "routing", "store", "warm.client"},
    "learn": {"compress", "config", "credit", "detach", "embed", "evolve", "judge", "lessons", "recall", "redact",
              "retention", "retention.rules", "routing", "store", "transcripts", "warm.client"},
    "hooks": {"evolve", "hooks.spec", "judge", "learn", "recall", "store", "warm.client"},
    "importers": {"compress", "config", "learn", "lessons", "store"},
    "search": {"recall", "retention", "store"},
    "report": {"credit", "retention", "routing", "store"},
    "render": set(),
    "doctor": {"install", "judge", "learn", "routing", "store", "trust", "warm.client"},
    "defect": {"config", "doctor", "learn", "redact", "render", "store"},
    "evalrecall": {"config", "judge", "recall"},
    "view": {"learn", "store"},
    "sim": {"compress", "hooks", "judge", "learn", "store"},
    "demo": {"compress", "render", "report", "sim"},
    "warm.server": {"config", "detach", "embed", "hooks", "recall", "store", "warm.client", "warm.commands",
                    "warm.watch"},
    "docs": {"cli", "config"},
    "cli": {"config", "credit", "defect", "demo", "doctor", "embed", "evalrecall", "evolve", "importers", "install",
            "judge", "learn", "mcp", "recall", "render", "report", "retention", "routing", "search", "store", "trust",
            "view"},
    "warm.watch": set(),   # stdlib and libc only: the inotify watch the helper hands the index
    # the warm helper's inspection commands run the CLI's own dispatch, so they sit above it
    "warm.commands": {"cli", "config", "evolve", "learn", "render", "report", "retention", "search", "store",
                      "warm.client"},
    "launcher": {"cli", "hooks", "warm.client"},
    "__main__": {"launcher"},
}


def part_of(module: str) -> str:
    if module in SPLIT:
        return SPLIT[module]
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "rose"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(tree: ast.AST) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            inside.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return inside


def imports() -> dict[tuple[str, str], list[str]]:
    """(importing part, imported part) -> the module imports that make the edge."""
    modules = {_module_name(p): p for p in SRC.rglob("*.py")}
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from rose import x` imports the module rose.x when there is one
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            for target in targets:
                if not target.startswith("rose.") or target == "rose":
                    continue
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]
                a, b = part_of(name), part_of(target)
                if a != b:
                    edges.setdefault((a, b), []).append(f"{name} -> {target}")
    return edges


def test_every_import_across_parts_is_allowed() -> None:
    edges = imports()
    assert len(edges) > 50, "the walk found too little: it is looking in the wrong place"
    parts = {a for a, _b in edges} | {b for _a, b in edges}
    assert parts <= set(ALLOWED), f"parts missing from the table: {sorted(parts - set(ALLOWED))}"
    refused = {f"{a} -> {b}": why[:3] for (a, b), why in edges.items() if b not in ALLOWED[a] | BASE}
    assert refused == {}


def test_the_table_has_no_cycle() -> None:
    """The table is a stack of layers: no part may import (through any chain) a part that imports it."""
    graph = {part: (allowed | BASE) - {part} for part, allowed in ALLOWED.items()}
    graph.update({base: ALLOWED[base] for base in BASE})
    state: dict[str, int] = {}

    def visit(part: str, chain: list[str]) -> None:
        if state.get(part) == 2:
            return
        assert state.get(part) != 1, " -> ".join([*chain, part])
        state[part] = 1
        for nxt in sorted(graph[part]):
            visit(nxt, [*chain, part])
        state[part] = 2
    for part in sorted(graph):
        visit(part, [])


def test_the_cycles_that_were_hidden_by_lazy_imports_are_gone() -> None:
    edges = imports()
    for low, high in (("config", "store"), ("trust", "store"), ("warm.client", "hooks"), ("warm.client", "recall"),
                      ("hooks", "warm.server"), ("recall", "warm.server")):
        assert (low, high) not in edges, edges.get((low, high))
