"""rose over MCP: `rose mcp` serves rose's tools (search, show, add, used) and its lessons (as resources) on stdio.

    tools.py    what each tool does, as plain functions over the stores (no SDK: tested directly)
    server.py   the MCP Python SDK adapter (imported only by `rose mcp`; the SDK is the optional `mcp` extra)

`rose install` registers the server for Claude Code and Codex beside the hooks (rose.install.mcpservers).
"""
from __future__ import annotations

from importlib.util import find_spec

EXTRA = "mcp"   # pip install 'rose-memory[mcp]'


def sdk_available() -> bool:
    """Is the MCP Python SDK importable here (without importing it)?"""
    try:
        return find_spec("mcp") is not None and find_spec("mcp.server") is not None
    except (ImportError, ValueError):
        return False
