"""`rose used` (and the MCP `used` tool) records only what names a lesson: a ref the session was shown or an id a
store holds. Anything else is said back and not recorded, since a recorded report outranks the judge's reading."""
from __future__ import annotations

import json
from pathlib import Path

from rose.mcp import tools
from rose.store import Layers
from rose.store.sessions import read_session
from tests.conftest import run_rose, run_rose_here


def _served(project: Path) -> Layers:
    run_rose_here("init", cwd=project)
    assert run_rose_here("add", "Always tag releases with the date.", "--title", "Release tags",
                         cwd=project).returncode == 0
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "how do we tag releases"})
    assert "Release tags" in run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload).stdout
    return Layers.discover(project)


def test_names_that_resolve_to_no_lesson_are_said_and_not_recorded(project: Path) -> None:
    layers = _served(project)
    served = read_session(layers.owner(), "s1").served_ever
    out = run_rose_here("used", "--session", "s1", "M1", "M99", "n_zzzzzz", "--json", cwd=project)
    assert out.returncode == 1
    assert json.loads(out.stdout)["used"] == served and json.loads(out.stdout)["unknown"] == ["M99", "n_zzzzzz"]
    assert "M99, n_zzzzzz" in out.stderr and "not recorded" in out.stderr
    assert read_session(layers.owner(), "s1").reported.used == served


def test_a_report_of_nothing_but_unknown_names_records_no_claim_that_nothing_was_used(project: Path) -> None:
    layers = _served(project)
    assert run_rose_here("used", "--session", "s1", "M7", cwd=project).returncode == 1
    assert read_session(layers.owner(), "s1").reported is None
    assert run_rose_here("used", "--session", "s1", cwd=project).returncode == 0   # "none of them" is a report
    assert read_session(layers.owner(), "s1").reported.used == []


def test_an_empty_or_unknown_session_is_said(project: Path) -> None:
    layers = _served(project)
    empty = run_rose_here("used", "--session", " ", "M1", cwd=project)
    assert empty.returncode == 1 and "which session" in empty.stderr
    lesson = read_session(layers.owner(), "s1").served_ever[0]
    typo = run_rose_here("used", "--session", "s2", lesson, cwd=project)
    assert "served nothing in a session 's2'" in typo.stderr
    assert read_session(layers.owner(), "s2").reported.used == [lesson]   # an id a store holds is still recorded


def test_the_mcp_tool_says_the_same(project: Path) -> None:
    layers = _served(project)
    answer = tools.used(layers, ["M1", "M42"], session="s1")
    assert answer.data["unknown"] == ["M42"] and "not recorded" in answer.text
    assert answer.data["used"] == read_session(layers.owner(), "s1").served_ever
