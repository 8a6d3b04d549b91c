#!/usr/bin/env python3
"""The project's entry points, each usable on a fresh machine with only Python 3.10+ and git.

    python3 dev.py install [--agents]  install rose for your user: a virtual environment of its own in
                                       ~/.local/share/rose/venv, and the `rose` command linked into ~/.local/bin
                                       ($XDG_DATA_HOME, $XDG_BIN_HOME when set); --agents also runs
                                       `rose install --scope user`. Run it again (after a git pull) to upgrade.
    python3 dev.py uninstall           remove that install: rose's user-level hooks that run it, the link, the venv
                                       (your lessons in ~/.rose and .rose/ stay)
    python3 dev.py demo                set up a local virtual environment (.venv/) and run rose's main job
    python3 dev.py test                set up the same environment (plus test tools) and run the whole test suite
    python3 dev.py docs [--check]      build the docs: regenerate docs/cli.md (from the parser) and docs/config.md
                                       (from config.py), check every internal link; --check writes nothing

`install` copies rose out of this clone (not an editable install): the clone can be moved or deleted afterwards.
`demo` and `test` create `.venv/` in the clone on first use and reuse it afterwards; an install is redone only when
pyproject.toml changed since the last one. Extra arguments after `test` go to pytest.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".rose-install-stamp"
PYTEST_NO_TESTS_COLLECTED = 5


def _say(message: str) -> None:
    print(f"[dev] {message}", flush=True)


def _run(cmd: list[str], **kwargs) -> int:
    return subprocess.call([str(c) for c in cmd], cwd=ROOT, **kwargs)


def _ensure_venv(extras: str) -> None:
    if sys.version_info < (3, 10):
        sys.exit(f"rose needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        _say(f"creating virtual environment in {VENV}")
        venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    _say(f"installing rose ({extras or 'runtime'}) into {VENV}")
    target = f".[{extras}]" if extras else "."
    rc = _run([PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", target])
    if rc != 0:
        sys.exit(f"pip install failed with exit code {rc}")
    STAMP.write_text(wanted)


def demo(args: list[str]) -> int:
    _ensure_venv("")
    return _run([PYTHON, "-m", "rose", "demo", *args])


def test(args: list[str]) -> int:
    _ensure_venv("test")
    # like an activated venv: its tools (rose, and node/npm when they came from PyPI) come first on PATH
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    setup = ROOT / "scripts" / "test-setup.sh"
    if setup.exists():
        rc = _run(["bash", setup], env=env)
        if rc != 0:
            _say(f"test setup failed (exit {rc}); see the message above")
            return rc
    rc = _run([PYTHON, "-m", "pytest", *args], env=env)
    if rc == PYTEST_NO_TESTS_COLLECTED:
        _say("pytest collected no tests: that is a failure here, not a pass")
        return 1
    return rc


# -- a user install: `python3 dev.py install` / `python3 dev.py uninstall` ---------------------------------------------
# hooks/rose (the Claude Code plugin's hook) and `rose doctor` (rose.install.command.user_install) look for rose in the
# same two places; a test checks that the three agree.
def _xdg(var: str, default: Path) -> Path:
    value = os.environ.get(var, "")
    return Path(value) if os.path.isabs(value) else default  # the XDG spec ignores a relative value


def user_paths() -> tuple[Path, Path]:
    """(rose's own virtual environment, the folder the `rose` link goes in)."""
    home = Path.home()
    return (_xdg("XDG_DATA_HOME", home / ".local" / "share") / "rose" / "venv",
            _xdg("XDG_BIN_HOME", home / ".local" / "bin"))


def _tilde(path: Path) -> str:
    home = str(Path.home())
    return "~" + str(path)[len(home):] if str(path) == home or str(path).startswith(home + os.sep) else str(path)


def _points_to(link: Path, target: Path) -> bool:
    """Is ``link`` a symlink to ``target`` (the link `install` makes)?"""
    if not link.is_symlink():
        return False
    dest = Path(os.readlink(link))
    dest = dest if dest.is_absolute() else link.parent / dest
    return os.path.normpath(dest) == os.path.normpath(target) or os.path.realpath(dest) == os.path.realpath(target)


def _runs(python: Path) -> bool:
    try:
        return subprocess.run([str(python), "-c", "import sys; sys.exit(sys.version_info < (3, 10))"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _make_venv(path: Path) -> None:
    _say(f"creating rose's virtual environment in {_tilde(path)}")
    try:
        venv.EnvBuilder(with_pip=True, clear=True, symlinks=True).create(path)
    except Exception as exc:  # noqa: BLE001 - venv/ensurepip fail in many ways; each gets the same advice
        shutil.rmtree(path, ignore_errors=True)
        sys.exit(f"[dev] could not create a virtual environment with pip in it ({exc}); on Debian or Ubuntu, "
                 "`sudo apt install python3-venv` provides what is missing; then run this again")


def _build_copy(into: Path) -> Path:
    """What pip builds from: the clone's top-level files and src/, copied, so the build leaves nothing in the clone
    and a build/ folder in it from an older build cannot slip stale modules into the install."""
    copy = into / "rose"
    copy.mkdir()
    for item in ROOT.iterdir():
        if item.is_file():
            shutil.copy2(item, copy / item.name)
    shutil.copytree(ROOT / "src", copy / "src",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    return copy


def _path_advice(bin_dir: Path, link: Path) -> list[str]:
    entries = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    on_path = any(os.path.realpath(p) == os.path.realpath(bin_dir) for p in entries)
    found = shutil.which("rose")
    if on_path and found and os.path.realpath(found) == os.path.realpath(link):
        return [f"{_tilde(bin_dir)} is on your PATH: `rose` runs this install"]
    if found and os.path.realpath(found) != os.path.realpath(link):
        return [f"another `rose` comes first on your PATH: {found}; remove it, or put {_tilde(bin_dir)} before it"]
    home = str(Path.home())
    shown = "$HOME" + str(bin_dir)[len(home):] if str(bin_dir).startswith(home + os.sep) else str(bin_dir)
    shell = os.path.basename(os.environ.get("SHELL", ""))
    if shell == "fish":
        line = f"fish_add_path {shown}"
    else:
        rc = {"bash": "~/.bashrc", "zsh": "~/.zshrc"}.get(shell, "~/.profile")
        line = f"echo 'export PATH=\"{shown}:$PATH\"' >> {rc}"
    return [f"{_tilde(bin_dir)} is not on your PATH, so your shell does not find `rose` yet; add it with:",
            f"    {line}",
            f"then open a new terminal (until then, run {link} by its full path). The hooks `rose install` writes "
            "name rose by its full path, so they work either way."]


def install(args: list[str]) -> int:
    if args not in ([], ["--agents"]):
        print("usage: python3 dev.py install [--agents]", file=sys.stderr)
        return 2
    if sys.version_info < (3, 10):
        sys.exit(f"rose needs Python 3.10 or newer; this is {sys.version.split()[0]}")
    if os.name == "nt":
        sys.exit("[dev] `dev.py install` supports Linux and macOS (rose's hooks run through a POSIX shell)")
    venv_dir, bin_dir = user_paths()
    python, rose, link = venv_dir / "bin" / "python", venv_dir / "bin" / "rose", bin_dir / "rose"
    if (link.exists() or link.is_symlink()) and not _points_to(link, rose):
        what = f"a link to {os.readlink(link)}" if link.is_symlink() else "not a link"
        sys.exit(f"[dev] {link} already exists ({what}) and is not this install's; remove it (or uninstall "
                 "whatever put it there) and run this again")
    upgrade = python.exists() and _runs(python)
    if not upgrade:
        _make_venv(venv_dir)
    _say(f"upgrading rose in {_tilde(venv_dir)} from {ROOT}" if upgrade else
         f"installing rose in {_tilde(venv_dir)} from {ROOT} (pip fetches PyYAML, wordllama and the MCP SDK unless it has them)")
    with tempfile.TemporaryDirectory(prefix="rose-build-") as tmp:
        # with the mcp extra: `rose install` registers `rose mcp`, which needs the MCP SDK (pyproject.toml says why
        # it is optional for a plain pip install)
        rc = subprocess.call([str(python), "-m", "pip", "install", "--upgrade", "--quiet",
                              "--disable-pip-version-check", f"{_build_copy(Path(tmp))}[mcp]"], cwd=tmp)
    if rc != 0:
        sys.exit(f"[dev] pip install failed with exit code {rc} (see above); it needs PyPI, or the wheels of "
                 "PyYAML, wordllama and mcp (and what they need) in a folder named by PIP_FIND_LINKS")
    try:
        version = subprocess.run([str(rose), "--version"], capture_output=True, text=True, timeout=120,
                                 stdin=subprocess.DEVNULL).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        sys.exit(f"[dev] {rose} does not run after the install: {exc}")
    if not version.startswith("rose "):
        sys.exit(f"[dev] {rose} --version did not answer as rose does (got {version!r})")
    bin_dir.mkdir(parents=True, exist_ok=True)
    if not _points_to(link, rose):
        fresh = link.with_name(f".rose-link-{os.getpid()}")
        fresh.unlink(missing_ok=True)
        os.symlink(rose, fresh)
        os.replace(fresh, link)
    _say(f"{version} {'upgraded' if upgrade else 'installed'}: {link} -> {rose}")
    for line in _path_advice(bin_dir, link):
        _say(line)
    if "--agents" in args:
        _say("wiring the hooks for every repository: rose install --scope user")
        rc = subprocess.call([str(rose), "install", "--scope", "user"], cwd=Path.home())
        if rc != 0:
            return rc
        _say("next: `rose init` in a repository gives it a store of its own; `rose doctor` checks everything")
    else:
        _say("next: `rose install --scope user` wires the hooks for every repository; `rose init` in a repository "
             "gives it a store of its own; `rose doctor` checks everything")
    return 0


def _user_hook_files() -> dict[str, Path]:
    home = Path.home()
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    codex = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    return {"claude": claude / "settings.json", "codex": codex / "hooks.json"}


def uninstall(args: list[str]) -> int:
    if args:
        print("usage: python3 dev.py uninstall", file=sys.stderr)
        return 2
    venv_dir, bin_dir = user_paths()
    python, rose, link = venv_dir / "bin" / "python", venv_dir / "bin" / "rose", bin_dir / "rose"
    if not venv_dir.exists() and not _points_to(link, rose):
        _say(f"nothing to remove: no rose install in {_tilde(venv_dir)}")
        return 0
    # the user-level hooks that run this rose (not those of another rose install): rose removes exactly its own
    wired = {agent: path for agent, path in _user_hook_files().items()
             if path.is_file() and str(rose) in path.read_text(errors="replace")}
    works = rose.exists() and _runs(python)
    for agent, path in wired.items():
        if not works:
            _say(f"{path} still runs {rose}, which no longer works; remove rose's entries (they end in "
                 "`# rose-managed`) by hand")
            continue
        _say(f"removing the hooks in {path} that run this rose: rose uninstall --scope user --agent {agent}")
        rc = subprocess.call([str(rose), "uninstall", "--scope", "user", "--agent", agent], cwd=Path.home())
        if rc != 0:
            sys.exit(f"[dev] rose uninstall failed (exit {rc}); the install is left in place")
    if _points_to(link, rose):
        link.unlink()
        _say(f"removed {link}")
    elif link.exists() or link.is_symlink():
        _say(f"left {link} alone: it is not this install's link")
    shutil.rmtree(venv_dir, ignore_errors=True)
    try:
        venv_dir.parent.rmdir()  # rose's data folder, when nothing else is in it
    except OSError:
        pass
    _say(f"removed {_tilde(venv_dir)}; your lessons stay (~/.rose, and .rose/ in your repositories)")
    _say("hooks that `rose install` wired into a single project (without --scope user) named this rose too: to "
         "remove them, install again and run `rose uninstall` in that project")
    return 0


def docs(args: list[str]) -> int:
    _ensure_venv("")
    return _run([PYTHON, "-m", "rose.docs", *args])


COMMANDS = {"install": install, "uninstall": uninstall, "demo": demo, "test": test, "docs": docs}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__.strip())
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
