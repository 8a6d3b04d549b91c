"""`python3 dev.py install` / `uninstall` without pip: the checks made before anything is installed, the PATH advice
(and that following it makes `rose` resolve), and an uninstall that removes the hooks, link and venv it made and
nothing else. The real install, pip included, is tests/install/test_readme_install.py."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch):
    for var in ("XDG_BIN_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(var, raising=False)
    spec = importlib.util.spec_from_file_location("rose_dev_py", REPO / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dev(*args: str, home: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **extra}
    return subprocess.run([sys.executable, str(REPO / "dev.py"), *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)


def test_a_rose_that_is_not_ours_is_never_replaced(home: Path) -> None:
    theirs = home / ".local" / "bin" / "rose"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("#!/bin/sh\necho someone else's rose\n")
    cp = _dev("install", home=home)
    assert cp.returncode != 0
    assert f"{theirs} already exists (not a link) and is not this install's" in cp.stderr
    assert theirs.read_text() == "#!/bin/sh\necho someone else's rose\n"
    assert not (home / ".local" / "share" / "rose").exists()  # refused before creating anything
    theirs.unlink()
    theirs.symlink_to("/opt/elsewhere/bin/rose")
    cp = _dev("install", home=home)
    assert cp.returncode != 0 and "(a link to /opt/elsewhere/bin/rose)" in cp.stderr


def test_unknown_arguments_are_refused(home: Path) -> None:
    assert _dev("install", "--agent", home=home).returncode == 2
    assert _dev("uninstall", "--agents", home=home).returncode == 2
    assert not (home / ".local").exists()


@pytest.mark.parametrize(("shell", "rc_file"), [("/bin/bash", "~/.bashrc"), ("/usr/bin/zsh", "~/.zshrc"),
                                                 ("", "~/.profile")])
def test_the_path_advice_is_one_line_that_works(shell: str, rc_file: str, dev, home: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    venv, bin_dir = dev.user_paths()
    assert (venv, bin_dir) == (home / ".local" / "share" / "rose" / "venv", home / ".local" / "bin")
    script = venv / "bin" / "rose"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\necho rose 0.0\n")
    script.chmod(0o755)
    bin_dir.mkdir(parents=True)
    (bin_dir / "rose").symlink_to(script)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("SHELL", shell)
    advice = dev._path_advice(bin_dir, bin_dir / "rose")
    assert advice[0] == "~/.local/bin is not on your PATH, so your shell does not find `rose` yet; add it with:"
    line = advice[1].strip()
    assert line == f"echo 'export PATH=\"$HOME/.local/bin:$PATH\"' >> {rc_file}"
    # do what it says, then start a shell that reads that file, as a new terminal would
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    subprocess.run(["/bin/sh", "-c", line], env=env, check=True, timeout=10)
    rc_path = home / rc_file[2:]
    found = subprocess.run(["/bin/sh", "-c", f'. "{rc_path}" && command -v rose && rose'], env=env,
                           capture_output=True, text=True, timeout=10)
    assert found.stdout.splitlines() == [str(bin_dir / "rose"), "rose 0.0"]

    monkeypatch.setenv("SHELL", "/usr/bin/fish")
    assert dev._path_advice(bin_dir, bin_dir / "rose")[1].strip() == "fish_add_path $HOME/.local/bin"
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert dev._path_advice(bin_dir, bin_dir / "rose") == ["~/.local/bin is on your PATH: `rose` runs this install"]
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(script, other / "rose")
    monkeypatch.setenv("PATH", f"{other}:{bin_dir}:/usr/bin:/bin")
    [warning] = dev._path_advice(bin_dir, bin_dir / "rose")
    assert warning.startswith(f"another `rose` comes first on your PATH: {other / 'rose'}")


def _fake_install(home: Path, venv: Path, log: Path) -> Path:
    """What `dev.py install` leaves, without pip: a venv whose python runs and whose rose logs its arguments."""
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    rose = venv / "bin" / "rose"
    rose.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\n')
    rose.chmod(0o755)
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "rose").symlink_to(rose)
    return rose


def test_uninstall_unwires_the_user_hooks_that_run_it_then_removes_link_and_venv(home: Path, tmp_path: Path) -> None:
    venv = home / ".local" / "share" / "rose" / "venv"
    log = tmp_path / "rose-calls"
    rose = _fake_install(home, venv, log)
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(f'{{"hooks": {{"Stop": [{{"hooks": [{{"type": "command", "command": "{rose} hook claude Stop '
                        '# rose-managed"}]}]}}')
    lessons = home / ".rose" / "nodes" / "a.md"
    lessons.parent.mkdir(parents=True)
    lessons.write_text("a lesson")
    codex = home / ".codex" / "hooks.json"  # Codex's user hooks run another rose: not this install's to remove
    codex.parent.mkdir()
    codex.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/other/rose hook codex Stop '
                     '# rose-managed"}]}]}}')
    cp = _dev("uninstall", home=home)
    assert cp.returncode == 0, cp.stderr
    assert log.read_text() == "uninstall --scope user --agent claude\n"  # rose itself removes exactly its hooks
    assert not (home / ".local" / "bin" / "rose").is_symlink() and not (home / ".local" / "share" / "rose").exists()
    assert (home / ".local" / "bin").is_dir() and lessons.read_text() == "a lesson"
    assert "your lessons stay" in cp.stdout
    assert _dev("uninstall", home=home).stdout.startswith("[dev] nothing to remove")


def test_uninstall_leaves_what_is_not_its_own(home: Path, tmp_path: Path) -> None:
    data = home / "data"
    venv = data / "rose" / "venv"
    log = tmp_path / "rose-calls"
    _fake_install(home, venv, log)
    (home / ".local" / "bin" / "rose").unlink()
    (home / ".local" / "bin" / "rose").symlink_to("/opt/elsewhere/rose")  # someone else's rose
    (data / "rose" / "notes.txt").write_text("keep me")
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/other/rose hook claude '
                        'Stop # rose-managed"}]}]}}')  # wired with another rose: not this install's to remove
    cp = _dev("uninstall", home=home, XDG_DATA_HOME=str(data))
    assert cp.returncode == 0, cp.stderr
    assert not log.exists()
    assert os.readlink(home / ".local" / "bin" / "rose") == "/opt/elsewhere/rose" and "left" in cp.stdout
    assert not venv.exists() and (data / "rose" / "notes.txt").read_text() == "keep me"
    assert "/opt/other/rose" in settings.read_text()
