"""The command an agent runs for a rose hook, and how rose tells its own hook entries from everyone else's.

A wired hook is ``<rose> hook <agent> <Event> # rose-managed``:

* ``<rose>`` is an absolute command that keeps resolving after the shell that ran ``rose install`` is gone: the
  ``rose`` console script next to the running interpreter (``python3 dev.py install`` or any other virtual
  environment puts it there), else ``<python> -m rose``. Both are quoted for a POSIX shell, so paths with spaces work.
* ``# rose-managed`` is a shell comment: the agent's shell ignores it, and it marks the entry as written by
  ``rose install``. Only entries with the marker *and* `` hook <agent> `` are rose's to update or remove; a rose hook
  someone wired by hand (no marker) is recognised so it is not doubled, but never edited or removed.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from rose.hooks.adapters import Agent
from rose.typedrecord import Record

MARKER = "# rose-managed"
_HOOK_ARGS = re.compile(r"(?:^|\s)hook\s+(claude|codex)\s+([A-Za-z]+)(?=\s|$)")


# `python -m rose` without the folder it starts in on sys.path, for an interpreter that may lack -P (3.10): with -c,
# sys.path[0] is that folder (''), dropped before rose is imported
NO_CWD_LAUNCH = "import sys; del sys.path[0]; import runpy; runpy.run_module('rose', run_name='__main__', alter_sys=True)"


def rose_argv(python: str | None = None) -> list[str]:
    """The argv prefix that runs rose: ``[<bin>/rose]`` when that console script exists next to ``python`` (default
    ``sys.executable``), else ``[python, "-P", "-m", "rose"]`` (this interpreter, 3.11+) or ``[python, "-c",
    NO_CWD_LAUNCH]``: agents start it in the project folder, which must never be on sys.path (a committed `rose/`
    would run). Paths are absolute but symlinks are kept: a venv's ``python`` is a symlink whose target would lose
    the venv."""
    python = python or sys.executable
    exe = Path(os.path.abspath(python))
    for name in ("rose", "rose.exe") if os.name == "nt" else ("rose",):
        script = exe.parent / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    from rose.environment import safe_path_flag

    if safe_path_flag(str(exe)):
        return [str(exe), "-P", "-m", "rose"]
    return [str(exe), "-c", NO_CWD_LAUNCH]


def user_install(home: Path, env: Mapping[str, str]) -> list[Path]:
    """Where ``python3 dev.py install`` puts the ``rose`` command: the link in ``$XDG_BIN_HOME`` (else
    ``~/.local/bin``), and the console script in its own venv under ``$XDG_DATA_HOME`` (else ``~/.local/share``).
    The plugin's hook (hooks/rose) runs the first of these when ``rose`` is not on PATH; dev.py's ``user_paths`` and
    hooks/rose spell the same rule, and a test holds the three together."""
    def xdg(var: str, default: Path) -> Path:
        value = env.get(var, "")
        return Path(value) if os.path.isabs(value) else default

    return [xdg("XDG_BIN_HOME", home / ".local" / "bin") / "rose",
            xdg("XDG_DATA_HOME", home / ".local" / "share") / "rose" / "venv" / "bin" / "rose"]


INSTALL_HINT = "`python3 dev.py install` in a clone of rose (https://github.com/yiheinchai/rose)"

_EPHEMERAL = ("/.cache/uv/", "/uv/cache/", "/archive-v0/", "/pipx/.cache/", "/pipx/cache/")


def ephemeral(argv: Sequence[str]) -> bool:
    """Is this rose running from a throwaway environment (``uvx``, ``pipx run``) that may vanish with its cache?"""
    return any(part in str(argv[0]).replace(os.sep, "/") for part in _EPHEMERAL) if argv else False


def shell_join(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(str(a)) for a in argv)


def hook_command(argv: Sequence[str], agent: Agent, event: str) -> str:
    """``<rose> hook <agent> <Event> # rose-managed``."""
    return f"{shell_join(argv)} hook {agent.value} {event} {MARKER}"


def display_command(argv: Sequence[str], agent: Agent) -> str:
    return f"{shell_join(argv)} hook {agent.value} <Event>"


class RoseHook(Record, frozen=True):
    """A hook command that runs rose: for which agent and event, and whether ``rose install`` wrote it."""

    agent: Agent
    event: str
    managed: bool


def parse_rose_hook(command: object) -> RoseHook | None:
    """Recognise a rose hook command; None for anything else (including non-strings)."""
    if not isinstance(command, str):
        return None
    found = _HOOK_ARGS.search(command)
    if not found:
        return None
    agent, event = Agent(found.group(1)), found.group(2)
    if command.rstrip().endswith(MARKER):
        return RoseHook(agent, event, managed=True)
    try:
        tokens = shlex.split(command, comments=True)
    except ValueError:
        return None
    if len(tokens) < 4 or tokens[-3:] != ["hook", agent.value, event]:
        return None
    prefix = tokens[:-3]
    launcher = os.path.basename(prefix[-1])
    if launcher in ("rose", "rose.exe") or prefix[-2:] in (["-m", "rose"], ["-c", NO_CWD_LAUNCH]):
        return RoseHook(agent, event, managed=False)
    return None


def command_executable(command: str) -> str | None:
    """The program a hook command starts (its first word), or None when it cannot be split."""
    try:
        tokens = shlex.split(command, comments=True)
    except ValueError:
        return None
    while tokens and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", tokens[0]):  # leading VAR=value assignments
        tokens = tokens[1:]
    return tokens[0] if tokens else None


def executable_resolves(program: str, path_env: str | None = None) -> bool:
    """Does ``program`` (absolute, relative to nothing, or a bare name looked up on PATH) exist and run?"""
    if "${" in program or program.startswith("$"):
        return True  # expanded by the agent (e.g. ${CLAUDE_PLUGIN_ROOT}); cannot be judged from here
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        return path.is_file() and os.access(path, os.X_OK)
    return shutil.which(program, path=path_env) is not None
