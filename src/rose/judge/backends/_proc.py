"""Run an agent CLI as a judge: own process group, prompt on stdin, hard deadline, no orphans.

The child starts in a new session (`start_new_session=True`), so it and everything it spawns (codex's node launcher
spawns the native binary; claude may spawn helpers) share one process group. On timeout the whole group is killed
(SIGKILL), and after a normal exit any member still alive is killed too, so a judge call never leaves a process
behind. The prompt goes on stdin, then stdin is closed: no ARG_MAX limit, nothing of the prompt in `ps`, and a CLI
that reads stdin gets EOF instead of waiting on a terminal.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rose import envvars
from rose.judge.errors import FailureKind, JudgeFailure

CHILD_ENV = {envvars.CHILD: "1"}  # rose's own hooks do nothing inside a judge call (no reflector of a reflector)
TAIL_CHARS = 400                 # how much of stderr a failure message quotes


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    ms: int


def child_env(base: Mapping[str, str] | None) -> dict[str, str]:
    """The environment of a model CLI: `base`, else the current request's (rose.environment), plus ROSE_CHILD=1."""
    from rose import environment

    env = dict(environment.current() if base is None else base)
    env.update(CHILD_ENV)
    return env


class _Starting:
    """A child being started has no handle yet: an interruption (the learner's alarm) that lands then is held
    until the handle exists, so the child's group is killed with it instead of being left an orphan."""

    active = False
    pending: BaseException | None = None


def interrupt(exc: BaseException) -> None:
    """For a signal handler: raise `exc` now, or, while a CLI is being started, as soon as it has been."""
    if _Starting.active:
        _Starting.pending = exc
        return
    raise exc


def run(argv: Sequence[str], *, stdin: str, env: Mapping[str, str], cwd: str, timeout_s: float) -> Finished:
    """Run `argv` in `cwd`. A bare program name is found on `env`'s PATH before the child starts, in absolute
    folders only (rose.environment.which): `cwd` may be a repository, and a relative PATH entry would name it."""
    from rose import environment

    if os.sep not in argv[0]:
        found = environment.which(argv[0], path=env.get("PATH", ""))
        if found is None:
            raise JudgeFailure(FailureKind.MISSING_BINARY, f"{argv[0]!r} not found (is it installed and on PATH?)")
        argv = [found, *argv[1:]]
    start = time.monotonic()
    _Starting.active, _Starting.pending = True, None
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(env), cwd=cwd, start_new_session=True)
    except FileNotFoundError:
        raise JudgeFailure(FailureKind.MISSING_BINARY, f"{argv[0]!r} not found (is it installed and on PATH?)") from None
    except PermissionError:
        raise JudgeFailure(FailureKind.MISSING_BINARY, f"{argv[0]!r} is not executable") from None
    finally:
        _Starting.active = False
    held, _Starting.pending = _Starting.pending, None
    if held is not None:   # the interruption came while it was starting: end it now, with its whole group
        kill_group(proc.pid)
        _drain(proc)
        raise held
    try:
        out, err = proc.communicate(stdin.encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid)
        out, err = _drain(proc)
        raise JudgeFailure(FailureKind.TIMEOUT, f"no answer within {timeout_s:g}s; process group killed") from None
    except BaseException:
        kill_group(proc.pid)
        _drain(proc)
        raise
    finally:
        kill_group(proc.pid)  # whatever the CLI left running in its group
    return Finished(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
                    int((time.monotonic() - start) * 1000))


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a grandchild outside the group holds the pipes
        proc.kill()
        return b"", b""


def tail(text: str) -> str:
    """The end of a CLI's output, for an error message. Redacted before it is cut or its lines are joined: a cut
    through a secret leaves a piece no detector knows (the tail of a key without its prefix), and line-based
    credential files stop being lines once joined."""
    from rose.redact import redact

    text = " ".join(redact(text).split())
    return text if len(text) <= TAIL_CHARS else "…" + text[-TAIL_CHARS:]
