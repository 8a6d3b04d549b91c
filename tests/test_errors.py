"""The one error tree (rose.errors), and the `except Exception` clauses that are left: each says why, logs, and is
tested (the behaviour of each logged swallow is checked below or next to the code it guards)."""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import rose.errors as errors
from rose.errors import RoseError, RoseInterrupt
from rose.judge import Judge, Scripted
from rose.model import Node
from rose.store import Layers
from rose.store.events import EventKind

SRC = Path(__file__).resolve().parent.parent / "src" / "rose"
_EXCEPTION_BASES = {"Exception", "BaseException", "ValueError", "OSError", "RuntimeError", "KeyError", "TypeError"}


def _classes(tree: ast.AST) -> list[ast.ClassDef]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _base_names(cls: ast.ClassDef) -> set[str]:
    return {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in cls.bases}


def test_every_exception_rose_defines_is_in_rose_errors() -> None:
    """A class deriving from an exception (a builtin one, or one of rose's) is defined in rose/errors.py only."""
    ours = {name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, BaseException)}
    outside = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "errors.py":
            continue
        for cls in _classes(ast.parse(path.read_text(encoding="utf-8"))):
            if _base_names(cls) & (_EXCEPTION_BASES | ours):
                outside.append(f"{path.relative_to(SRC)}:{cls.lineno} {cls.name}")
    assert outside == []


def test_the_tree_roots_in_rose_error_and_is_drawn_whole() -> None:
    defined = {name: value for name, value in vars(errors).items()
               if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == "rose.errors"}
    assert len(defined) >= 20
    for name, cls in defined.items():
        assert issubclass(cls, (RoseError, RoseInterrupt)), name
        assert re.search(rf"\b{name}\b", errors.__doc__ or ""), f"{name} is not drawn in the docstring"
    # interrupts stay out of Exception on purpose: no `except Exception` in a stage may swallow the end of its time
    assert not issubclass(RoseInterrupt, Exception)
    assert issubclass(errors.JobStopped, RoseInterrupt) and issubclass(errors.LearnerDeadline, RoseInterrupt)


def test_the_old_import_paths_name_the_same_classes() -> None:
    from rose.embed import EmbedUnavailable
    from rose.hooks.adapters import PayloadError
    from rose.install.model import InstallError
    from rose.install.toml import TomlError
    from rose.judge import AnswerInvalid, FailureKind, JudgeFailure
    from rose.learn.learner import JobStopped, LearnerDeadline
    from rose.recall.selectors import SelectorFailed
    from rose.routing import RuleRefused
    from rose.transcripts import TranscriptNotAFile, TranscriptNotFound, TranscriptUnreadable
    from rose.warm import client

    assert (EmbedUnavailable, PayloadError, InstallError, TomlError, AnswerInvalid, FailureKind, JudgeFailure,
            JobStopped, LearnerDeadline, SelectorFailed, RuleRefused, TranscriptNotAFile, TranscriptNotFound,
            TranscriptUnreadable, client.Timeout) == (
        errors.EmbedUnavailable, errors.PayloadError, errors.InstallError, errors.TomlError, errors.AnswerInvalid,
        errors.FailureKind, errors.JudgeFailure, errors.JobStopped, errors.LearnerDeadline, errors.SelectorFailed,
        errors.RuleRefused, errors.TranscriptNotAFile, errors.TranscriptNotFound, errors.TranscriptUnreadable,
        errors.HelperTimeout)
    # the ones that were ValueErrors still are, so the `except ValueError` around them keeps working
    for cls in (PayloadError, TomlError, AnswerInvalid):
        assert issubclass(cls, ValueError) and issubclass(cls, RoseError)


def _broad_handlers() -> list[tuple[Path, ast.ExceptHandler]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ExceptHandler) and (
                    node.type is None or (isinstance(node.type, ast.Name)
                                          and node.type.id in ("Exception", "BaseException"))):
                out.append((path, node))
    return out


def test_every_broad_except_says_why_or_re_raises() -> None:
    """`except BaseException` only to clean up and re-raise; each `except Exception` carries its reason."""
    assert _broad_handlers(), "the walk found nothing: it is looking in the wrong place"
    unexplained = []
    for path, handler in _broad_handlers():
        line = path.read_text(encoding="utf-8").splitlines()[handler.lineno - 1]
        reraises = any(isinstance(n, ast.Raise) and n.exc is None for n in ast.walk(handler))
        if handler.type is None or handler.type.id == "BaseException":   # type: ignore[union-attr]
            if not reraises:
                unexplained.append(f"{path.relative_to(SRC)}:{handler.lineno} catches BaseException and keeps it")
        elif not reraises and not re.search(r"#\s*(noqa: BLE001 - )?\S.{8,}", line):
            unexplained.append(f"{path.relative_to(SRC)}:{handler.lineno} {line.strip()}")
    assert unexplained == []


# -- the logged swallows, each doing what its comment says ------------------------------------------------------------
def _events(layers: Layers, kind: EventKind) -> list[dict]:
    path = layers.project.events_path
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e.get("kind") == kind.value]


def test_a_served_lesson_deleted_before_attribution_is_a_logged_skip(layers: Layers) -> None:
    from rose.learn.attribute import attribute
    from rose.store.sessions import update_session

    store = layers.project
    store.save(Node(id="n_kept01", family="db", title="Kept", body="The test database listens on 5433."))
    update_session(store, "s1", lambda state: state.served_ever.extend(["n_kept01", "n_gone01"]))
    seen: list[list[str]] = []

    def assess(call: str, request) -> dict:
        seen.append([lesson.id for lesson in request.served])
        return {"outcome": "success", "accepted_summary": "done",
                "lessons": [{"id": "n_kept01", "used": True, "reason": "r"}]}
    result = attribute(layers, store, "s1", "fix the tests", "digest", "hint", Judge(Scripted(handler=assess)))
    assert seen == [["n_kept01"]] and result.used == ["n_kept01"]
    skips = _events(layers, EventKind.SKIP)
    assert [(e["what"], e["id"], e["session"]) for e in skips] == [("attribution", "n_gone01", "s1")]
    assert "n_gone01" in skips[0]["reason"]


def test_settling_a_conflict_with_a_deleted_partner_logs_the_skip(layers: Layers) -> None:
    from rose.learn.conflicts import resolve

    store = layers.project
    store.save(Node(id="n_one001", family="db", title="One", body="Port 5433.", disputes=["n_two001"]))
    resolve(layers, "n_one001", drop=False)
    skips = _events(layers, EventKind.SKIP)
    assert [(e["what"], e["id"]) for e in skips] == [("settle", "n_two001")]
    assert store.get("n_one001").disputes == []


def test_a_broken_rule_header_is_skipped_whole() -> None:
    from rose.importers.rules import _frontmatter

    assert _frontmatter(["---", "key: [unclosed", "---", "# Tests"]) == ({}, 3)
    assert _frontmatter(["---", "key: value", "---", "# Tests"]) == ({"key": "value"}, 3)


def test_an_unexpected_error_in_a_store_lookup_is_no_longer_swallowed(layers: Layers, monkeypatch) -> None:
    """graph.find treats a deleted or corrupt lesson as absent; a bug (any other error) now surfaces."""
    from rose.compress.graph import Graph

    store = layers.project
    store.save(Node(id="n_one001", family="db", title="One", body="Port 5433."))
    graph = Graph(layers)
    monkeypatch.setattr(type(store), "get", lambda self, node_id: (_ for _ in ()).throw(KeyError("a bug")))
    with pytest.raises(KeyError):
        graph.find("n_one001")
