"""The Claude Code plugin in the repository: manifests that agree with the package and with `rose install`."""
from __future__ import annotations

import json
from pathlib import Path

import rose
from rose.install import Agent
from rose.install.command import parse_rose_hook
from rose.install.hooks import HOOKS

REPO = Path(__file__).resolve().parents[2]


def _load(rel: str) -> dict:
    return json.loads((REPO / rel).read_text())


def test_plugin_version_is_the_package_version() -> None:
    plugin = _load(".claude-plugin/plugin.json")
    assert plugin["name"] == "rose"
    assert plugin["version"] == rose.__version__
    assert plugin["description"] and plugin["author"]["name"]


def test_marketplace_lists_the_plugin_at_the_repository_root() -> None:
    market = _load(".claude-plugin/marketplace.json")
    assert market["name"] == "rose" and market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == "rose" and entry["source"] == "./"
    assert entry["version"] == rose.__version__


def test_plugin_hooks_are_the_installed_hooks_calling_rose_from_path() -> None:
    hooks = _load("hooks/hooks.json")["hooks"]
    want = {spec.event.value: spec.timeout_s for spec in HOOKS[Agent.CLAUDE]}
    assert set(hooks) == set(want)
    for event, groups in hooks.items():
        [group] = groups
        [handler] = group["hooks"]
        assert handler == {"type": "command", "command": f"rose hook claude {event}", "timeout": want[event]}
        found = parse_rose_hook(handler["command"])
        # recognised as a rose hook, but not as one `rose install` manages: uninstall never touches the plugin
        assert found is not None and found.event == event and not found.managed
