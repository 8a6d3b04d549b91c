"""The environment and working directory a piece of rose's work runs in.

A hook normally runs in its own process, and `os.environ` is its environment. The warm helper serves many hooks, from
many shells, in one long-lived process, so a request carries the caller's environment and cwd and the helper runs it
under `using(env, cwd)`. Everything in rose that depends on the environment (where the global store is, which model
CLI is on PATH, API keys, what a spawned child inherits) reads it from here, never from `os.environ` directly, so
one helper serves every shell of a user without a new process per distinct environment.

stdlib only, and cheap: the per-prompt hook imports it.
"""
from __future__ import annotations

import contextvars
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

_ENV: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("rose_environment", default=None)
_CWD: contextvars.ContextVar[str | None] = contextvars.ContextVar("rose_cwd", default=None)


def current() -> Mapping[str, str]:
    """The environment of the work in progress: a request's own under `using`, else this process's."""
    env = _ENV.get()
    return os.environ if env is None else env


def get(key: str, default: str = "") -> str:
    value = current().get(key)
    return default if value is None else value


def cwd() -> str:
    """The caller's working directory (a helper itself runs in `/`)."""
    folder = _CWD.get()
    return folder if folder is not None else os.getcwd()


def home() -> Path:
    from pathlib import Path

    value = get("HOME")
    return Path(value).expanduser() if value else Path.home()


def which(command: str, path: str | None = None) -> str | None:
    """`shutil.which` on `path` (default: the current environment's PATH), its absolute folders only: an empty or
    relative entry (`PATH=$PATH:`, `.`) names whatever folder a process runs in, and rose runs in repositories, so
    a `claude` or `codex` committed there would be the program found."""
    import os
    import shutil

    given = (path if path is not None else get("PATH")) or os.defpath
    folders = [folder for folder in given.split(os.pathsep) if os.path.isabs(folder)]
    return shutil.which(command, path=os.pathsep.join(folders)) if folders else None


def safe_path_flag(python: str) -> list[str]:
    """`-P` for this interpreter (3.11+): `python -m` puts the working directory first on sys.path, and a hook or a
    job starts in a folder a repository fills, whose committed `rose/` would be imported instead of rose. An
    interpreter that is not this one may not know the flag: none (the caller picks a folder rose owns)."""
    import os
    import sys

    same = os.path.realpath(python) == os.path.realpath(sys.executable)
    return ["-P"] if same and sys.version_info >= (3, 11) else []


def child(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of the current environment for a process rose starts, with `extra` on top."""
    env = dict(current())
    if extra:
        env.update(extra)
    return env


class using:  # noqa: N801 - used as a context manager, reads like one
    """Run a block of work in `env` (and `cwd`): `with environment.using(request_env, request_cwd): ...`."""

    def __init__(self, env: Mapping[str, str], cwd: str | None = None):
        self._env = {str(k): str(v) for k, v in env.items()}
        self._cwd = cwd
        self._tokens: tuple[contextvars.Token, contextvars.Token] | None = None

    def __enter__(self) -> using:
        self._tokens = (_ENV.set(self._env), _CWD.set(self._cwd))
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._tokens is not None
        _ENV.reset(self._tokens[0])
        _CWD.reset(self._tokens[1])


def bound(fn):
    """`fn` bound to the caller's environment, for a thread to run: threads do not inherit context variables."""
    ctx = contextvars.copy_context()
    return lambda *args, **kwargs: ctx.run(fn, *args, **kwargs)


def iter_keys(prefix: str) -> Iterator[tuple[str, str]]:
    for key, value in current().items():
        if key.startswith(prefix):
            yield key, value
