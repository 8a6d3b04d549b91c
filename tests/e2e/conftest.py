"""Fixtures for the real-CLI end-to-end tests (see docs/testing-real-clis.md).

The CLIs must be installed (scripts/test-setup.sh does it): when they are missing the tests FAIL with a message
saying how to install them. They never skip, because CI has to prove them.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `tests.support` must import however pytest was started
    sys.path.insert(0, str(ROOT))

from tests.support import agent_clis  # noqa: E402
from tests.support.mock_model_server import MockModelServer  # noqa: E402

_TIMINGS: list = []


@pytest.fixture
def mock_server():
    """A running MockModelServer on 127.0.0.1 (closed after the test)."""
    with MockModelServer() as server:
        yield server
    errors = server.handler_errors
    assert not errors, f"the mock's handler raised: {errors!r}"


@pytest.fixture
def cli_home(tmp_path: Path) -> Path:
    """An empty HOME for one CLI run (claude writes ~/.claude*, codex ~/.codex)."""
    home = tmp_path / "cli-home"
    home.mkdir()
    return home


@pytest.fixture
def cli_project(tmp_path: Path) -> Path:
    """An empty project directory to run the CLI in."""
    path = tmp_path / "cli-project"
    path.mkdir()
    return path


@pytest.fixture
def claude(request) -> Path:
    """Path of the pinned claude binary; fails the test with instructions when it is missing."""
    return agent_clis.require(agent_clis.claude_bin)


@pytest.fixture
def codex(request) -> Path:
    """Path of the pinned codex binary; fails the test with instructions when it is missing."""
    return agent_clis.require(agent_clis.codex_bin)


@pytest.fixture
def timed(request):
    """``timed(label, completed_process)``: remember a CLI run's wall time for the end-of-session summary."""

    def record(label: str, cp) -> None:
        _TIMINGS.append((f"{request.node.name}: {label}", getattr(cp, "duration", float("nan"))))

    return record


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _TIMINGS:
        return
    terminalreporter.write_sep("-", "real CLI run timings (wall clock)")
    for label, seconds in _TIMINGS:
        terminalreporter.write_line(f"{seconds:6.2f} s  {label}")
