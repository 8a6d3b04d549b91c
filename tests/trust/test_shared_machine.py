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


EVIL = "agent:\n  claude_command: /tmp/evil-claude\n"


def _own_store_with_evil_config(home: Path) -> Path:
    from rose.model import Scope
    from rose.store.store import Store

    root = Path(os.environ["ROSE_HOME"])
    Store.create(root, Scope.GLOBAL)
    (root / "config.yaml").write_text(EVIL)
    return root


def _settings(project: Path):
    from rose.store import Layers

    return Layers.discover(project)


@pytest.mark.parametrize("what", ["folder", "config.yaml"])
def test_an_own_store_another_user_owns_is_refused(project: Path, other, isolated_home: Path, what: str) -> None:
    """ROSE_HOME (or its config.yaml) is another user's: none of its privileged keys, lessons or pins are obeyed;
    doctor FAILs with one line, a command that would write there says so, a hook still answers."""
    root = _own_store_with_evil_config(isolated_home)
    target = root if what == "folder" else root / "config.yaml"
    os.chown(target, other.uid, other.gid)
    layers = _settings(project)
    assert layers.refused is not None and f"belongs to uid {other.uid}" in layers.refused and str(target) in \
        layers.refused
    assert layers.global_ is None
    assert layers.settings().agent.claude_command == "claude"
    doctor = run_rose("doctor", cwd=project)
    assert "FAIL" in doctor.stdout and f"belongs to uid {other.uid}" in doctor.stdout
    add = run_rose("add", "Never obeyed.", "--title", "T", "--scope", "global", cwd=project)
    assert add.returncode != 0 and "your own store is not used" in add.stderr
    payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "hello"})
    hook = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload)
    assert hook.returncode == 0


def test_an_own_store_open_to_other_users_is_refused_with_the_chmod_that_fixes_it(project: Path,
                                                                                  isolated_home: Path) -> None:
    root = _own_store_with_evil_config(isolated_home)
    root.chmod(0o777)            # what a umask of 000 made before rose set modes itself
    layers = _settings(project)
    assert layers.refused is not None and f"chmod go-w {root}" in layers.refused
    assert layers.settings().agent.claude_command == "claude"
    doctor = run_rose("doctor", cwd=project).stdout
    assert "FAIL" in doctor and f"chmod go-w {root}" in doctor


def _modes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.lstat().st_mode & 0o777 for p in [folder, *folder.rglob("*")]}


def test_what_rose_writes_for_the_user_alone_is_private_whatever_the_umask(project: Path) -> None:
    """umask 000: the user's own store is 0700 folders and 0600 files throughout (index.db and its -wal and -shm,
    events, locks, caches); a repository's store keeps its committed lessons as they are, but its machine-local
    files and folders are private too."""
    import subprocess
    import sys

    def rose(*args: str) -> None:
        done = subprocess.run([sys.executable, "-m", "rose", *args], cwd=project, capture_output=True, text=True,
                              timeout=120, umask=0)
        assert done.returncode == 0, done.stderr

    rose("add", "Mine alone.", "--title", "Private", "--scope", "global")
    rose("init")
    rose("add", "The team's.", "--title", "Shared")
    rose("status")
    own = Path(os.environ["ROSE_HOME"])
    modes = _modes(own)
    assert {"index.db", "events.jsonl", "config.yaml", "locks/store.lock"} <= set(modes)
    opened = {name: oct(mode) for name, mode in modes.items() if mode & 0o077}
    assert opened == {}, f"open to other users in the user's own store: {opened}"
    repo = project / ".rose"
    local = {name: oct(mode) for name, mode in _modes(repo).items()
             if (name.startswith(("index.db", "events", "locks", "cache", "sessions", "logs", "queue")))
             and mode & 0o077}
    assert local == {}, f"machine-local files open to other users in the repository's store: {local}"


def test_an_index_and_its_wal_and_shm_are_private_whatever_the_umask(tmp_path: Path) -> None:
    """SQLite makes a database 0644 (less the umask) and its -wal and -shm with the database's mode: rose makes the
    file 0600 first, so all three are, even under umask 000, while a connection holds them open."""
    from rose.model import Scope
    from rose.store.store import Store

    old = os.umask(0)
    try:
        store = Store.create(tmp_path / "repo" / ".rose", Scope.PROJECT)
        store.index.count()
        db = store.index_db_path
        opened = {p.name: oct(p.stat().st_mode & 0o777) for p in db.parent.glob("index.db*")}
        store.close()
    finally:
        os.umask(old)
    assert {"index.db", "index.db-wal", "index.db-shm"} <= set(opened)
    assert set(opened.values()) == {"0o600"}, opened


@pytest.mark.parametrize("shape", ["another user's", "open to others"])
def test_a_settings_cache_rose_did_not_write_for_this_user_alone_is_never_obeyed(project: Path, other,
                                                                                isolated_home: Path,
                                                                                shape: str) -> None:
    """cache/settings.json holds parsed overrides applied with their file's privilege: one another user wrote
    (or could have rewritten) with a matching fingerprint would choose what rose runs. It is read only as this
    user's own 0600 regular file; otherwise the config files are read again."""
    from rose.model import Scope
    from rose.store.store import Store

    root = Path(os.environ["ROSE_HOME"])
    Store.create(root, Scope.GLOBAL)
    layers = _settings(project)
    assert layers.settings().agent.claude_command == "claude"      # the cache is written now
    cache = root / "cache" / "settings.json"
    data = json.loads(cache.read_text())
    data["overrides"][0][1] = {"agent": {"claude_command": "/tmp/evil-claude"}}
    cache.write_text(json.dumps(data))                              # same fingerprint: the config file is unchanged
    if shape == "another user's":
        os.chown(cache, other.uid, other.gid)
        cache.chmod(0o600)
    else:
        cache.chmod(0o666)
    assert _settings(project).settings().agent.claude_command == "claude"


def test_trust_pins_another_user_wrote_pin_nothing(project: Path, other, isolated_home: Path) -> None:
    from rose import trust

    run_rose("init", cwd=project)
    config_file = project / ".rose" / "config.yaml"
    trust.pin(config_file)
    assert trust.is_trusted(config_file)
    pins = Path(os.environ["ROSE_HOME"]) / trust.TRUST_FILE
    os.chown(pins, other.uid, other.gid)
    assert not trust.is_trusted(config_file)


def test_records_of_the_users_own_word_are_read_only_from_files_only_they_could_write(project: Path, other) -> None:
    """`rose off`'s list and the evolution's list of stores are the user's own records (rose writes them 0600):
    one another user owns, or one open to others, is not the user's word."""
    from rose.evolve import synth
    from rose.store.layers import OFF_FILE, global_root, switch, switched_off

    assert switch(project, on=False) and switched_off(project) is not None
    off = global_root() / OFF_FILE
    os.chown(off, other.uid, other.gid)
    assert switched_off(project) is None
    stores = global_root() / "evolution" / synth.STORES_FILE
    stores.parent.mkdir(parents=True, exist_ok=True)
    stores.write_text(json.dumps([str(project / ".rose")]))
    stores.chmod(0o644)
    assert synth._read_list(stores) == []
    stores.chmod(0o600)
    assert synth._read_list(stores) == [str(project / ".rose")]


def test_the_users_own_store_for_a_repository_open_to_others_is_refused(project: Path) -> None:
    """A repository without a .rose/ gets the user's own store for it, under the global store: the same rule."""
    from rose.store.layers import personal_root, repository_root

    add = run_rose("add", "Mine for this repository.", "--title", "Mine", cwd=project)
    assert add.returncode == 0, add.stderr
    mine = personal_root(repository_root(project))
    assert (mine.stat().st_mode & 0o777) == 0o700
    (mine / "config.yaml").write_text(EVIL)
    mine.chmod(0o777)
    layers = _settings(project)
    assert layers.project is None and layers.refused is not None and f"chmod go-w {mine}" in layers.refused
    assert layers.settings().agent.claude_command == "claude"
