"""rose on a machine shared with another local user (a real second Unix user): nothing rose trusts sits where that
user could have made it or can swap it. A private folder under a parent another user owns (or may write without
the sticky bit) is never used for the warm helper or bytecode."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_rose
from tests.support.other_user import require_other_user, shared_tmp


@pytest.fixture
def other():
    return require_other_user()


@pytest.fixture
def shared():
    import shutil

    folder = shared_tmp()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _hook(project: Path, env: dict[str, str]) -> dict:
    run_rose("init", cwd=project)
    run_rose("add", "Deploys go through the blue-green switch.", "--title", "Deploy rule", cwd=project)
    payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "how do we deploy?"})
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("parent", ["another user's", "open without the sticky bit"])
def test_a_runtime_folder_under_a_parent_another_user_can_swap_is_never_used(project: Path, other, shared: Path,
                                                                             parent: str) -> None:
    """TMPDIR is this user's own private folder, but a folder above it is another user's (or open to all without
    the sticky bit): that user could rename TMPDIR away and put theirs in its place. No helper, no bytecode cache:
    the hook answers in-process and writes nothing under it; doctor says which parent and why."""
    above = shared / "above"
    if parent == "another user's":
        assert other.run(["mkdir", "-m", "777", str(above)]).returncode == 0
    else:
        above.mkdir()
        above.chmod(0o777)
    tmpdir = above / "mine"
    tmpdir.mkdir(mode=0o700)
    if parent == "another user's":
        assert other.run(["chmod", "755", str(above)]).returncode == 0
    env = {"TMPDIR": str(tmpdir), "XDG_RUNTIME_DIR": "", "ROSE_WARM_HELPER": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    data = _hook(project, env)
    assert "Deploy rule" in data["systemMessage"]                     # answered in full, in-process
    assert list(tmpdir.iterdir()) == [], "rose made its runtime folder under a parent another user can swap"
    doctor = run_rose("doctor", cwd=project, env=env).stdout
    expected = f"belongs to uid {other.uid}" if parent == "another user's" else "without the sticky bit"
    assert "warm helper" in doctor and str(above) in doctor and expected in doctor


def test_an_xdg_runtime_dir_under_a_parent_another_user_owns_is_not_used(other, shared: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from rose.warm import client

    assert other.run(["mkdir", "-m", "777", str(shared / "above")]).returncode == 0
    xdg = shared / "above" / "run"
    xdg.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    monkeypatch.setenv("TMPDIR", str(shared))
    folder, _why = client.runtime_dir()
    assert folder == str(shared / f"rose-{os.getuid()}")              # the sound fallback, never under xdg
    assert not (xdg / "rose").exists()
