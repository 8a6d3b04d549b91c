"""Codex hook trust: the hash rose computes, and its surgical edits of the user's config.toml."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rose.install import Agent, Scope, install, toml, uninstall
from rose.install.codex import hook_hash, plan_trust, snake, trust_key

from .conftest import FAKE_ROSE, parse_toml

try:
    import tomllib
except ImportError:  # Python 3.10: the comparisons with the standard parser are skipped
    tomllib = None

# currentHash values reported by `codex app-server` hooks/list (codex-cli 0.171.0) for these handlers
KNOWN = [
    (("UserPromptSubmit", "echo a", 10), "sha256:91c67fba88a32c55099e6e123b1304074d906ff22ece2292f79a7dade5a1c262"),
    (("SessionEnd", "/x/rose hook codex SessionEnd", 3),
     "sha256:c109c084b58b2a71b1d27f6629263cc3b450d196eeec7420e78ce5ef3c0e9609"),
]


@pytest.mark.parametrize(("args", "expected"), KNOWN)
def test_hash_matches_what_codex_reports(args: tuple, expected: str) -> None:
    assert hook_hash(*args) == expected


def test_hash_normalizes_like_codex() -> None:
    # no timeout means 600; a SessionEnd timeout is clamped to 3 s (codex reported timeoutSec 3 for 30)
    assert hook_hash("PreCompact", "echo c", None, matcher="") == \
        "sha256:8ad8afa4bc53206aeb840131cc97859b4a3e335a1d0a092d90f72fdcdd2274c4"
    assert hook_hash("Stop", "echo s", 5, status_message="hi") == \
        "sha256:349ec6631e3d6fdd8eedb3f471ab7937658083e21adbb290202905606ebaac07"
    assert hook_hash("SessionEnd", "x", 30) == hook_hash("SessionEnd", "x", 3)
    assert hook_hash("Stop", "x", 0) == hook_hash("Stop", "x", 1)


def test_trust_key_shape() -> None:
    assert [snake(e) for e in ("UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")] == [
        "user_prompt_submit", "pre_compact", "stop", "session_end"]
    assert trust_key("/h/.codex/hooks.json", "SessionEnd", 2, 0) == "/h/.codex/hooks.json:session_end:2:0"


USER_CONFIG = """# my codex config
model = "gpt-5"  # the default
approval_policy = "on-request"

[projects."/work/app"]
trust_level = "trusted"

[hooks.state."/home/me/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:mine"
"""


def _config(home: Path, text: str) -> Path:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_user_bytes_before_rose_tables_are_untouched(home: Path, project: Path, env: dict) -> None:
    config = _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    text = config.read_text()
    assert text.startswith(USER_CONFIG + "\n# rose-managed: ")
    parsed = parse_toml(text)
    assert parsed["hooks"]["state"]["/home/me/.codex/hooks.json:stop:0:0"] == {"trusted_hash": "sha256:mine"}
    assert len(parsed["hooks"]["state"]) == 5


def test_tables_codex_adds_after_ours_survive_uninstall(home: Path, project: Path, env: dict) -> None:
    config = _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    # Codex (toml_edit) appends what it writes later after everything else, e.g. a newly trusted project
    later = '\n[projects."/work/other"]\ntrust_level = "trusted"\n'
    config.write_text(config.read_text() + later)
    uninstall(Agent.CODEX, Scope.USER, project, home, env=env)
    assert config.read_text() == USER_CONFIG + later


def test_a_key_codex_added_inside_a_rose_table_goes_with_it(home: Path, project: Path, env: dict) -> None:
    config = _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    text = config.read_text().replace('user_prompt_submit:0:0"]\n', 'user_prompt_submit:0:0"]\nenabled = false\n')
    config.write_text(text)
    uninstall(Agent.CODEX, Scope.USER, project, home, env=env)
    assert config.read_text() == USER_CONFIG


def test_trust_the_user_already_gave_is_reused_not_duplicated(home: Path, project: Path, env: dict) -> None:
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    config = home / ".codex" / "config.toml"
    # the user re-trusted rose's UserPromptSubmit hook in /hooks: an unmarked table for the same key
    text = config.read_text()
    start = text.index("# rose-managed: trust for rose's UserPromptSubmit")
    table = text[start:].split("\n\n", 1)[0]
    text = text.replace(table + "\n\n", "") + "\n" + table.split("\n", 1)[1] + "\n"
    config.write_text(text)
    again = install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert not again.changed and not again.steps
    parse_toml(config.read_text())  # still valid: no duplicate table


def test_a_conflicting_trust_entry_becomes_a_step_not_a_duplicate(home: Path, project: Path, env: dict) -> None:
    key = trust_key(str(home / ".codex" / "hooks.json"), "UserPromptSubmit", 0, 0)
    config = _config(home, f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "sha256:old"\n')
    report = install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    parse_toml(config.read_text())
    assert any("another hash" in step for step in report.steps)
    assert config.read_text().count(json.dumps(key)) == 1


def test_an_inline_hooks_table_is_left_alone_with_a_step(home: Path, project: Path, env: dict) -> None:
    original = 'hooks = { state = {} }\nmodel = "x"\n'
    config = _config(home, original)
    report = install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env, mcp=False)
    assert config.read_text() == original
    assert any("/hooks" in step for step in report.steps)


def test_reinstalling_after_a_move_replaces_rose_trust(home: Path, project: Path, env: dict) -> None:
    config = _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    install(Agent.CODEX, Scope.USER, project, home, rose=["/elsewhere/rose"], env=env)
    text = config.read_text()
    assert text.count("# rose-managed:") == 5   # four trust entries and the MCP server, each once
    assert parse_toml(text)["mcp_servers"]["rose"] == {"command": "/elsewhere/rose", "args": ["mcp"]}
    state = parse_toml(text)["hooks"]["state"]
    key = trust_key(str(home / ".codex" / "hooks.json"), "Stop", 0, 0)
    assert state[key]["trusted_hash"] == hook_hash("Stop", "/elsewhere/rose hook codex Stop # rose-managed", 10,
                                                   status_message="⋯ ROSE · noting this turn")


def test_project_scope_uninstall_keeps_user_scope_trust(home: Path, project: Path, env: dict) -> None:
    _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    install(Agent.CODEX, Scope.PROJECT, project, home, rose=FAKE_ROSE, env=env)
    uninstall(Agent.CODEX, Scope.PROJECT, project, home, env=env)
    state = parse_toml((home / ".codex" / "config.toml").read_text())["hooks"]["state"]
    assert sum(1 for k in state if k.startswith(str(home))) == 4
    assert not any(k.startswith(str(project)) for k in state)


def test_plan_trust_refuses_malformed_toml(home: Path) -> None:
    from rose.install import InstallError

    config = _config(home, "model = \n")
    with pytest.raises(InstallError, match="not valid TOML"):
        plan_trust(config, home / ".codex" / "hooks.json", {})


# -- the fallback reader used on Python 3.10 -------------------------------------------------------------------------
SAMPLES = [
    USER_CONFIG,
    'a = 1\nb = true\nc = "x\\"y\\u00e9"\nd = \'lit\\eral\'\n[t]\n"quoted key" = "v"\nx.y = "z"\n',
    '[hooks.state."/p a/é/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:1"\nenabled = false\n',
    '[[arr]]\nname = "a"\n[[arr]]\nname = "b"\n[features]\nhooks = false\n',
    'multi = """\n[not.a.table]\n"""\nafter = "ok"\n',
    'list = [\n  "a",  # comment ]\n  "b]",\n]\ninline = { a = 1, b = "}" }\n'
    '[projects."/x"]\ntrust_level = "trusted"\n',
]


@pytest.mark.skipif(tomllib is None, reason="needs the standard tomllib (Python 3.11+) to compare with")
@pytest.mark.parametrize("text", SAMPLES)
def test_fallback_reader_agrees_with_tomllib_on_what_rose_reads(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    exact = tomllib.loads(text)
    monkeypatch.setattr(toml, "_tomllib", None)
    approx = toml.loads(text)
    _assert_agrees(exact, approx)


def _assert_agrees(exact, approx) -> None:
    if approx is toml.OPAQUE:
        assert isinstance(exact, (list, dict, str, float))
        return
    if isinstance(exact, dict):
        assert isinstance(approx, dict) and set(exact) == set(approx)
        for key in exact:
            _assert_agrees(exact[key], approx[key])
    elif isinstance(exact, list):
        assert isinstance(approx, list) and len(approx) == len(exact)
        for a, b in zip(exact, approx):
            _assert_agrees(a, b)
    else:
        assert exact == approx


@pytest.mark.parametrize("bad", ['a = 1\na = 2\n', '[t\n', 'x = "open\n', 'k v\n'])
def test_fallback_reader_rejects_what_it_cannot_read(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toml, "_tomllib", None)
    with pytest.raises(toml.TomlError):
        toml.loads(bad)


def test_round_trip_without_tomllib(home: Path, project: Path, env: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toml, "_tomllib", None)
    config = _config(home, USER_CONFIG)
    install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert len(parse_toml(config.read_text())["hooks"]["state"]) == 5
    again = install(Agent.CODEX, Scope.USER, project, home, rose=FAKE_ROSE, env=env)
    assert not again.changed
    uninstall(Agent.CODEX, Scope.USER, project, home, env=env)
    assert config.read_text() == USER_CONFIG
