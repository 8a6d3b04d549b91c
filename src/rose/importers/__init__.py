"""`rose import PATH...`: the rule files a user already has become lessons, which compress and are served only when
relevant instead of being loaded whole on every prompt.

    CLAUDE.md  AGENTS.md  .cursorrules  .cursor/rules/*.mdc  .github/copilot-instructions.md

Each file is split into pieces (rose.importers.rules: a section each, or a rule each when a section is a list of
rules). A new piece goes through the same reconcile path as `rose add` (rose.learn.consolidate: a duplicate is not
stored twice, a refinement is folded in, a contradiction is kept and flagged), with its file and line range as
evidence (``file:CLAUDE.md#L12-L20``). Which lesson holds which piece is recorded on the lesson itself
(``imported:`` in its frontmatter: file, key, digest, lines), so a re-import is idempotent: an unchanged piece
changes nothing, a changed one updates its lesson (its compressed forms are demoted, they summarise text that no
longer says that), and a piece gone from the file is reported (with ``--prune``, its lesson is archived).

Whose words. Import is a command the user runs on files the user names, so the pieces count as the user's own
words (`from_user`). A CLAUDE.md or AGENTS.md inside a repository is still repository content, so the lessons are
filed in the project unless the user says ``--scope global``; nothing else decides the scope, and nothing in a file
is read as a rose setting (a Cursor rule's frontmatter only adds its globs to the text). Everything is redacted
before it is stored.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.importers.rules import MDC, Piece, digest, kind_of, split
from rose.model import Node, Origin, Scope, Status
from rose.store import Layers, Store
from rose.store.events import EventKind
from rose.store.paths import inside

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge

RECORD = "imported"            # the frontmatter key on a lesson: which pieces of which files it holds
SIMILAR = 0.6                  # a piece whose key moved is the same piece when its text is at least this similar
CANDIDATES = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".cursorrules", ".github/copilot-instructions.md")


@dataclass
class Change:
    action: str                # added | updated | unchanged | moved | removed | pruned | would-add | would-update ...
    key: str
    title: str
    lines: str = ""
    id: str = ""
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "key": self.key, "title": self.title, "lines": self.lines, "id": self.id,
                "detail": self.detail}


@dataclass
class FileResult:
    path: str                  # as shown and recorded: relative to the repository, else ~/..., else absolute
    kind: str
    changes: list[Change] = field(default_factory=list)

    def count(self, *actions: str) -> int:
        return sum(1 for c in self.changes if c.action in actions)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "changes": [c.to_dict() for c in self.changes]}


@dataclass
class ImportResult:
    scope: str
    dry_run: bool
    files: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "dry_run": self.dry_run, "files": [f.to_dict() for f in self.files],
                "errors": list(self.errors)}

    def render(self) -> str:
        from rose.inert import plain

        would = "would be " if self.dry_run else ""
        out = []
        for f in self.files:
            counts = [(n, label) for n, label in (
                (f.count("added", "would-add"), "added"), (f.count("updated", "would-update"), "updated"),
                (f.count("unchanged", "moved"), "unchanged"), (f.count("removed"), "gone from the file"),
                (f.count("pruned"), "archived")) if n]
            out.append(f"{f.path} ({f.kind}): " + (", ".join(f"{n} {would if label != 'unchanged' else ''}{label}"
                                                          for n, label in counts) or "nothing to import"))
            marks = {"added": "+", "would-add": "+", "updated": "~", "would-update": "~", "removed": "-",
                     "pruned": "-"}
            for c in f.changes:
                if c.action in marks:
                    ident = f" {c.id}" if c.id else ""
                    out.append(f"  {marks[c.action]} {c.lines:<9} {plain(c.title, 70)}{ident}"
                               + (f": {plain(c.detail, 110)}" if c.detail else ""))
        if any(f.count("removed") for f in self.files):
            out.append("lessons whose piece is gone from its file stay as they are; `rose import --prune` archives "
                       "them")
        out += [f"error: {e}" for e in self.errors]
        if self.dry_run:
            out.append("(dry run: nothing was written)")
        return "\n".join(out) or "nothing to import"


# -- finding the files ------------------------------------------------------------------------------------------------
def discover(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The rule files named, or found in the folders named; and one error per path that holds none."""
    found: list[Path] = []
    errors: list[str] = []
    for given in paths:
        path = given.expanduser()
        if path.is_dir():
            inside = [path / c for c in CANDIDATES if (path / c).is_file()]
            rules = path / ".cursor" / "rules"
            if rules.is_dir():
                inside += sorted(p for p in rules.rglob("*.mdc") if p.is_file())
            if not inside:
                errors.append(f"{given}: no rule file in it ({', '.join(CANDIDATES)}, .cursor/rules/*.mdc)")
            found += inside
        elif path.is_file():
            if kind_of(path) is None:
                errors.append(f"{given}: not a rule file rose imports ({', '.join(CANDIDATES)}, "
                              ".cursor/rules/*.mdc)")
            else:
                found.append(path)
        else:
            errors.append(f"{given}: no such file or folder")
    unique = list(dict.fromkeys(Path(os.path.abspath(p)) for p in found))
    return unique, errors


def read_rule_file(path: Path, repository: Path) -> str:
    """A rule file's text: a regular file within a record's size (a FIFO, a device or a huge file is refused
    unread: UnsafeFile). One found in the repository is read only when it is inside it, links resolved: git
    commits symlinks, and a CLAUDE.md or a `.cursor` linked to a file outside would copy that file into lessons the
    user then pushes. A file the user names outside the repository is theirs, a dotfile link included."""
    from rose.errors import UnsafeFile
    from rose.store import reader

    real, root = os.path.realpath(path), os.path.realpath(repository)
    if inside(os.path.abspath(path), os.path.abspath(repository)) and not inside(real, root):
        raise UnsafeFile(path, f"leads to {real}, outside the repository: not read")
    return reader.read_text(real, reader.RECORD).removeprefix("\ufeff")   # the BOM utf-8-sig dropped


def shown_path(path: Path, layers: Layers) -> str:
    """How a file is named in the record and the evidence: relative to the repository when inside it."""
    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(layers.project_root()))
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        pass
    home = Path(os.path.realpath(Path.home()))
    try:
        return "~/" + real.relative_to(home).as_posix()
    except ValueError:
        return real.as_posix()


def handle(shown: str, piece: Piece) -> str:
    return f"file:{shown}#{piece.lines}"


# -- records -------------------------------------------------------------------------------------------------------
@dataclass
class Held:
    """A piece a lesson holds, as recorded on it."""

    store: Store
    node: Node
    record: dict[str, Any]

    @property
    def owned(self) -> bool:
        return bool(self.record.get("owned"))


def _records(node: Node) -> list[dict[str, Any]]:
    value = node.extra.get(RECORD)
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def held_pieces(layers: Layers, shown: str) -> list[Held]:
    out = []
    for store in layers.stores():
        store.sync()
        for node in store.iter_nodes():
            for record in _records(node):
                if record.get("file") == shown:
                    out.append(Held(store, node, record))
    return out


def _record(shown: str, piece: Piece, owned: bool) -> dict[str, Any]:
    return {"file": shown, "key": piece.key, "sha": digest(piece.text), "lines": piece.lines, "owned": owned}


def _set_record(store: Store, node_id: str, shown: str, old_key: str | None, new: dict[str, Any] | None,
                evidence: tuple[str, str] | None = None) -> Node:
    """Replace (or drop, ``new`` None) the record of ``old_key`` on a lesson; swap an evidence handle."""
    def change(n: Node) -> None:
        records = [r for r in _records(n) if not (r.get("file") == shown and r.get("key") == old_key)]
        if new is not None:
            records.append(new)
        if records:
            n.extra[RECORD] = records
        else:
            n.extra.pop(RECORD, None)
        if evidence:
            old, fresh = evidence
            n.evidence = [e for e in n.evidence if e != old]
            if fresh not in n.evidence:
                n.evidence.append(fresh)
    return store.update(node_id, change)


# -- matching --------------------------------------------------------------------------------------------------------
def match(pieces: list[Piece], held: list[Held]) -> tuple[list[tuple[Piece, Held]], list[Piece], list[Held]]:
    """(pairs of a piece and the lesson that holds it, new pieces, held pieces gone from the file). Same key first,
    then, within a section, the most similar text (a rule reworded, a heading renamed)."""
    pairs: list[tuple[Piece, Held]] = []
    left = list(pieces)
    free = list(held)
    for piece in list(left):
        sha = digest(piece.text)
        hit = next((h for h in free if h.record.get("key") == piece.key), None) or \
            next((h for h in free if h.record.get("sha") == sha), None)
        if hit is not None:
            pairs.append((piece, hit))
            left.remove(piece)
            free.remove(hit)
    for piece in list(left):
        section = piece.key.split(" • ")[0]
        scored = [(difflib.SequenceMatcher(None, piece.text, _held_text(h)).ratio(), i)
                  for i, h in enumerate(free) if str(h.record.get("key", "")).split(" • ")[0] == section]
        best = max(scored, default=(0.0, -1))
        if best[0] >= SIMILAR:
            pairs.append((piece, free.pop(best[1])))
            left.remove(piece)
    return pairs, left, free


def _held_text(held: Held) -> str:
    from rose.compress.graph import base_body

    return base_body(held.node.body) if held.owned else held.node.body


# -- importing -------------------------------------------------------------------------------------------------------
def import_paths(layers: Layers, paths: list[Path], *, scope: Scope = Scope.PROJECT, dry_run: bool = False,
                 prune: bool = False, settings: Settings | None = None, judge: Judge | None = None) -> ImportResult:
    from rose.config import Settings as Defaults

    settings = settings or Defaults()
    files, errors = discover(paths)
    result = ImportResult(scope.value, dry_run, errors=errors)
    for path in files:
        shown = shown_path(path, layers)
        kind = kind_of(path) or MDC
        try:
            text = read_rule_file(path, layers.project_root())
        except (OSError, UnicodeDecodeError) as exc:
            result.errors.append(f"{path}: cannot be read ({exc})")
            continue
        outcome = FileResult(shown, kind)
        result.files.append(outcome)
        pieces = split(text, path.name)
        held = held_pieces(layers, shown) if not layers.empty else []
        pairs, new, gone = match(pieces, held)
        for piece, h in pairs:
            outcome.changes.append(_keep_or_update(layers, shown, piece, h, settings, judge, dry_run, scope))
        for piece in new:
            outcome.changes.append(_add(layers, shown, kind, piece, scope, settings, judge, dry_run))
        for h in gone:
            outcome.changes.append(_gone(h, shown, dry_run, prune))
    if not dry_run and any(f.count("added", "updated") for f in result.files):
        from rose.learn.learner import _embed_new

        _embed_new(layers, settings)
    return result


def _new_lesson(shown: str, kind: str, piece: Piece, scope: Scope):
    name = Path(shown).name
    from rose.importers.rules import SEP
    from rose.learn.consolidate import NewLesson

    top = [part for part in piece.section.split(SEP) if part != name]
    family = top[1] if len(top) > 1 else (top[0] if top else kind)
    return NewLesson(body=piece.text, title=piece.title, family=family, tags=["imported", kind],
                     origin=Origin.MANUAL, from_user=True, scope=scope, evidence=[handle(shown, piece)],
                     seed=f"import:{shown}:{piece.key}:{digest(piece.text)}")


def _add(layers: Layers, shown: str, kind: str, piece: Piece, scope: Scope, settings: Settings,
         judge: Judge | None, dry_run: bool) -> Change:
    if dry_run:
        return Change("would-add", piece.key, piece.title, piece.lines)
    from rose.learn.consolidate import Action, consolidate
    from rose.model import seeded_id

    new = _new_lesson(shown, kind, piece, scope)
    res = consolidate(layers, new, judge, settings)
    node = res.node
    if node is None or res.store is None:
        return Change("added", piece.key, piece.title, piece.lines, detail=res.describe())
    # the lesson is the piece's own when it was stored for it; a duplicate or refinement lives in another lesson
    owned = res.action not in (Action.DUPLICATE, Action.REFINED) or node.id == seeded_id(new.seed)
    _set_record(res.store, node.id, shown, piece.key, _record(shown, piece, owned))
    res.store.event(EventKind.UPDATE, stage="import", action="added", id=node.id, file=shown, lines=piece.lines,
                    relation=res.action.value)
    return Change("added", piece.key, piece.title, piece.lines, node.id, res.describe())


def _keep_or_update(layers: Layers, shown: str, piece: Piece, held: Held, settings: Settings, judge: Judge | None,
                    dry_run: bool, scope: Scope) -> Change:
    sha = digest(piece.text)
    record = held.record
    if record.get("sha") == sha:
        if record.get("key") == piece.key and record.get("lines") == piece.lines:
            return Change("unchanged", piece.key, piece.title, piece.lines, held.node.id)
        if not dry_run:  # the same text moved in the file: the evidence follows it
            old = f"file:{shown}#{record.get('lines')}"
            _set_record(held.store, held.node.id, shown, record.get("key"), {**_record(shown, piece, held.owned)},
                        (old, handle(shown, piece)))
        return Change("moved", piece.key, piece.title, piece.lines, held.node.id)
    if dry_run:
        return Change("would-update", piece.key, piece.title, piece.lines, held.node.id)
    if not held.owned:
        # the piece had been folded into another lesson: the new text is reconciled afresh, the old record goes
        _set_record(held.store, held.node.id, shown, record.get("key"), None)
        added = _add(layers, shown, kind_of(Path(shown)) or MDC, piece, scope, settings, judge, False)
        return Change("updated", piece.key, piece.title, piece.lines, added.id,
                      f"reconciled anew ({added.detail})")
    return _update_owned(layers, shown, piece, held)


def _update_owned(layers: Layers, shown: str, piece: Piece, held: Held) -> Change:
    from rose.compress.demote import demote
    from rose.compress.graph import Graph
    from rose.lessons import derive_gist

    old = f"file:{shown}#{held.record.get('lines')}"

    def change(n: Node) -> None:
        n.body = piece.text
        n.title = piece.title
        n.gist = derive_gist(piece.text)
        n.dropped = []    # the manifest described what a compression of the old text left out
    held.store.update(held.node.id, change)
    node = _set_record(held.store, held.node.id, shown, held.record.get("key"), _record(shown, piece, True),
                       (old, handle(shown, piece)))
    graph = Graph(layers)
    demoted = []
    for parent_id in node.parents:
        parent = graph.node(parent_id)
        if parent is not None and parent.level > node.level and parent.status is not Status.DEMOTED:
            demote(graph, parent_id, "the imported text it was made from changed")
            demoted.append(parent_id)
    held.store.event(EventKind.UPDATE, stage="import", action="updated", id=node.id, file=shown, lines=piece.lines,
                     demoted=demoted)
    detail = f"its compressed form(s) {', '.join(demoted)} demoted" if demoted else ""
    return Change("updated", piece.key, piece.title, piece.lines, node.id, detail)


def _gone(held: Held, shown: str, dry_run: bool, prune: bool) -> Change:
    title = held.node.title
    lines = str(held.record.get("lines", ""))
    key = str(held.record.get("key", ""))
    path = str(held.store.node_path(held.node))
    if not prune or not held.owned:
        why = "" if held.owned else " (it also holds other text, so --prune leaves it)"
        return Change("removed", key, title, lines, held.node.id, f"kept at {path}{why}")
    if dry_run:
        return Change("removed", key, title, lines, held.node.id, "would be archived")

    def archive(n: Node) -> None:
        n.status = Status.ARCHIVED
        n.extra["archived_because"] = f"gone from {shown}"
    held.store.update(held.node.id, archive)
    _set_record(held.store, held.node.id, shown, key, None)
    held.store.event(EventKind.UPDATE, stage="import", action="pruned", id=held.node.id, file=shown)
    return Change("pruned", key, title, lines, held.node.id, "archived")

