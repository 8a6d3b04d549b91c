"""The REAL claude and codex CLIs, offline, load the MCP server `rose install` registered.

Claude Code: the mock model does what a model does with an MCP server it has not loaded yet (Claude Code defers MCP
tools behind ToolSearch, seen with 2.1.332): it selects `mcp__rose__search`, calls it, and the tool result Claude
Code sends back to the model holds the lesson. That proves the registration is a file Claude Code reads, the
command starts `rose mcp`, and rose's search answers over the real client. Codex: `codex mcp list --json` reads the
entry rose wrote from the user's config.toml and from a trusted project's .codex/config.toml.

They FAIL, never skip, when the CLIs are missing: `bash scripts/install-agent-clis.sh` installs them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.install import Agent, Scope, install, uninstall
from tests.conftest import run_rose
from tests.support import agent_clis
from tests.support.agent_clis import codex_env, run_claude, run_cli, write_codex_config
from tests.support.mock_model_server import MockModelServer, Text, ToolUse

pytestmark = pytest.mark.e2e

LESSON = "ROSE-MCP-E2E: the payments service must be restarted with make bounce-payments, never kill -9"
TOOL = "mcp__rose__search"


@pytest.fixture
def taught(project: Path) -> Path:
    for args in (("init",), ("add", LESSON, "--title", "Restarting payments")):
        cp = run_rose(*args, cwd=project, env={"ROSE_AGENT_BACKEND": "none"})
        assert cp.returncode == 0, cp.stderr
    return project


def _tool_results(request) -> list[str]:
    out = []
    for message in request.body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                out.append(json.dumps(block.get("content")))
    return out


def _model(mock: MockModelServer) -> None:
    """ToolSearch for rose's search, then call it, then answer (or give up once ToolSearch found no such tool)."""
    def handler(request):
        results = _tool_results(request)
        if any("ROSE-MCP-E2E" in r for r in results):
            return Text("restart it with make bounce-payments")
        if TOOL in request.tool_names():
            return ToolUse(TOOL, {"query": "restart payments service"})
        if results:
            return Text("no rose tool here")
        return ToolUse("ToolSearch", {"query": f"select:{TOOL}"})
    mock.handler = handler


@pytest.mark.parametrize("scope", list(Scope))
def test_claude_calls_roses_search_tool_and_gets_the_lesson(scope: Scope, taught: Path, isolated_home: Path,
                                                            launcher: Path) -> None:
    claude = agent_clis.require(agent_clis.claude_bin)
    assert claude.exists()
    home = isolated_home
    report = install(Agent.CLAUDE, scope, taught, home, rose=[str(launcher)], mcp=True)
    assert report.changed, report.render()
    with MockModelServer() as mock:
        _model(mock)
        cp = run_claude(["-p", "how do I restart the payments service?", "--output-format", "json",
                         "--allowedTools", TOOL], cwd=taught, home=home, mock_url=mock.url)
        assert cp.returncode == 0, cp.stderr[-3000:]
        assert json.loads(cp.stdout)["result"] == "restart it with make bounce-payments"
        results = [r for req in mock.model_requests("anthropic") for r in _tool_results(req)]
        assert any(LESSON in r and "rose-lessons" in r for r in results), results
        assert not mock.handler_errors

        uninstall(Agent.CLAUDE, scope, taught, home)
        mock.clear()
        cp = run_claude(["-p", "how do I restart the payments service?", "--output-format", "json",
                         "--allowedTools", TOOL], cwd=taught, home=home, mock_url=mock.url)
        assert cp.returncode == 0, cp.stderr[-3000:]
        assert not any(LESSON in r for req in mock.model_requests("anthropic") for r in _tool_results(req))
        assert not any(TOOL in req.tool_names() for req in mock.model_requests("anthropic"))


@pytest.mark.parametrize("scope", list(Scope))
def test_codex_lists_the_server_rose_registered(scope: Scope, taught: Path, isolated_home: Path, launcher: Path) -> None:
    codex = agent_clis.require(agent_clis.codex_bin)
    home = isolated_home
    with MockModelServer() as mock:
        write_codex_config(home, mock.openai_base_url, trusted_projects=[taught] if scope is Scope.PROJECT else [])
        install(Agent.CODEX, scope, taught, home, rose=[str(launcher)], mcp=True)
        cp = run_cli([codex, "mcp", "list", "--json"], cwd=taught, env=codex_env(home))
        assert cp.returncode == 0, cp.stderr[-2000:]
        servers = {s["name"]: s for s in json.loads(cp.stdout)}
        assert "rose" in servers, cp.stdout
        transport = servers["rose"]["transport"]
        assert transport["command"] == str(launcher) and transport["args"] == ["mcp"]
        uninstall(Agent.CODEX, scope, taught, home)
        cp = run_cli([codex, "mcp", "list", "--json"], cwd=taught, env=codex_env(home))
        assert cp.returncode == 0 and "rose" not in {s["name"] for s in json.loads(cp.stdout)}
