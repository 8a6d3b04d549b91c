"""A file rose cannot read safely is an error that says what and where, and then nothing at all is written."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.errors import RoseError
from rose.install import Agent, InstallError, InstallScope, install, uninstall

from .conftest import FAKE_ROSE, snapshot

BAD = [
    (b'{"hooks": {"Stop": []},\n  "model": "x",,\n}', "not valid JSON (line 2, column 16"),
    (b'// my settings\n{"model": "x"}', "not valid JSON (line 1, column 1"),
    (b'["a", "list"]', "holds a JSON list, not an object"),
    (b'{"hooks": []}', '"hooks" is a list'),
    (b'{"hooks": {"Stop": {"hooks": []}}}', '"hooks.Stop" is a dict'),
    (b'{"hooks": {"Stop": ["echo hi"]}}', '"hooks.Stop[0]" is a str'),
    (b'\xff\xfe{}', "not UTF-8"),
]


def _target(agent: Agent, scope: InstallScope, home: Path, project: Path) -> Path:
    base = home if scope is InstallScope.USER else project
    return base / (".claude/settings.json" if agent is Agent.CLAUDE else ".codex/hooks.json")


@pytest.mark.parametrize("agent", list(Agent))
@pytest.mark.parametrize("scope", list(InstallScope))
@pytest.mark.parametrize(("content", "message"), BAD, ids=[m.split(" (")[0] for _c, m in BAD])
def test_malformed_file_is_a_clear_error_and_nothing_is_written(agent: Agent, scope: InstallScope, content: bytes,
                                                                message: str, home: Path, project: Path,
                                                                env: dict) -> None:
    path = _target(agent, scope, home, project)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    before = snapshot(home, project)
    with pytest.raises(InstallError) as caught:
        install(agent, scope, project, home, rose=FAKE_ROSE, env=env)
    assert message in str(caught.value) and str(path) in str(caught.value)
    assert "untouched" in str(caught.value)
    assert isinstance(caught.value, RoseError)  # the CLI prints it as one line
    with pytest.raises(InstallError):
        uninstall(agent, scope, project, home, env=env)
    assert snapshot(home, project) == before


def test_malformed_codex_config_stops_the_whole_codex_install(home: Path, project: Path, env: dict) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "gpt-5"\n[projects."/x"\ntrust_level = "trusted"\n')
    before = snapshot(home, project)
    with pytest.raises(InstallError, match="not valid TOML"):
        install(Agent.CODEX, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    assert snapshot(home, project) == before  # hooks.json and AGENTS.md were not written either


def test_a_directory_where_the_settings_file_should_be(home: Path, project: Path, env: dict) -> None:
    (project / ".claude" / "settings.json").mkdir(parents=True)
    with pytest.raises(InstallError, match="is a directory"):
        install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)


def test_a_file_changed_between_plan_and_write_is_not_overwritten(home: Path, project: Path, env: dict,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from rose.install import files

    path = project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "x"}\n')
    real_apply = files.apply

    def racing_apply(edits):
        path.write_text('{"model": "changed by someone else"}\n')
        return real_apply(edits)

    monkeypatch.setattr("rose.install.apply", racing_apply)
    with pytest.raises(InstallError, match="changed while rose was planning"):
        install(Agent.CLAUDE, InstallScope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    assert path.read_text() == '{"model": "changed by someone else"}\n'
