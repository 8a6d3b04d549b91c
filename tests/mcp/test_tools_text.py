"""The MCP `add` tool refuses text that cannot be written as UTF-8 (a lone surrogate escape is valid JSON), as
`rose add` does: a clear error, and nothing stored."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import NotText
from rose.mcp import tools
from rose.store import Layers
from tests.conftest import run_rose


@pytest.mark.parametrize("field", ["text", "title", "family", "tags"])
def test_add_refuses_a_lone_surrogate_in_any_field_and_stores_nothing(project: Path, field: str) -> None:
    run_rose("init", cwd=project)
    given = {"text": "Cache keys include the tenant id.", "title": "Cache keys", "family": "cache", "tags": ["ok"]}
    given[field] = ["a", "b\ud800"] if field == "tags" else f"{given[field]} \udcff"
    layers = Layers.discover(project)
    try:
        with pytest.raises(NotText, match="is not UTF-8 text"):
            tools.add(layers, given["text"], title=given["title"], family=given["family"], tags=given["tags"])
    finally:
        layers.close()
    assert not list((project / ".rose" / "nodes").rglob("*.md"))
