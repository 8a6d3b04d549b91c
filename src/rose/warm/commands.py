"""The warm helper answering an inspection command (`rose status`, `search`, `recall --prompt`, `trace --prompt`,
`tree`, `list`, `show`, `conflicts`, `events`, the route, credit and evolution listings) in-process, so its user
does not pay for importing rose and opening its indexes on every command (about 7x a bare interpreter's start by
itself).

A command runs here exactly as in a fresh process: the same parser and dispatch (rose.cli), in the caller's
environment and working directory (rose.environment), its stdout and stderr captured as the bytes the caller's own
streams would have written (their encoding and error handler come with the request). Anything this cannot promise
is "not served" and the caller runs the command itself: a command line argparse rejects or answers (--help), a
route that teaches or forgets, a recall whose selector would ask a model, any failure of the helper's own.
"""
from __future__ import annotations

import contextlib
import contextvars
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

from rose import environment
from rose.terminal import Shown
from rose.warm.client import RANKING_COMMANDS, SERVED_COMMANDS

_CAPTURE: contextvars.ContextVar[tuple[Shown, Shown] | None] = contextvars.ContextVar(
    "rose_captured_streams", default=None)


class _Routed(io.TextIOBase):
    """sys.stdout or sys.stderr inside the helper: a request's own capture while a command runs on this thread
    (the helper serves several requests at once), else the helper's stream (its log) as before."""

    def __init__(self, inner: Any, which: int):
        self._inner = inner
        self._which = which

    def _target(self) -> Any:
        captured = _CAPTURE.get()
        return self._inner if captured is None else captured[self._which]

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return False   # a served command writes to bytes sent over a socket, as it would to a pipe

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self._target().encoding)

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self._target().errors


def route_streams() -> None:
    """Installed once when the helper starts: print() inside a served command reaches that command's capture."""
    if not isinstance(sys.stdout, _Routed):
        sys.stdout = _Routed(sys.stdout, 0)
    if not isinstance(sys.stderr, _Routed):
        sys.stderr = _Routed(sys.stderr, 1)


@contextlib.contextmanager
def _captured(streams: list[tuple[str, str]]) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    (out_enc, out_err), (err_enc, err_err) = streams
    raw_out, raw_err = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding=out_enc, errors=out_err, write_through=True)
    err = io.TextIOWrapper(raw_err, encoding=err_enc, errors=err_err, write_through=True)
    shown = Shown(out), Shown(err)   # as rose.cli.main prints in-process: a lesson's words cannot drive the terminal
    token = _CAPTURE.set(shown)
    try:
        yield raw_out, raw_err
    finally:
        _CAPTURE.reset(token)
        for stream in shown:
            stream.flush()
        for wrapper in (out, err):
            wrapper.detach()


def preload() -> None:
    """What the inspection commands import, loaded once in the helper's background."""
    import rose.cli
    import rose.evolve.commands
    import rose.learn.conflicts
    import rose.render
    import rose.report
    import rose.retention.manage
    import rose.search  # noqa: F401


def _servable(args: Any) -> bool:
    command = getattr(args, "command", None)
    if command not in SERVED_COMMANDS or not getattr(args, "handler", None):
        return False
    if command == "route":
        return not (args.when or args.then or args.forget)   # teaching or forgetting a rule writes it
    if command == "evolution":
        return args.action in ("list", "show")   # approve, reject, rollback, promote write; distill asks a model
    if command in ("recall", "trace"):
        if args.selector:
            return args.selector == "hybrid"
        from pathlib import Path

        from rose.config import Selector
        from rose.store import Layers

        layers = Layers.discover(Path(args.cwd) if args.cwd else None)
        return layers.settings().recall.selector is Selector.HYBRID   # another selector asks a model
    return True




def run(argv: list[str], cwd: str, env: dict[str, str], streams: list[tuple[str, str]],
        warming: Callable[[], bool] = lambda: False) -> tuple[int, bytes, bytes] | None:
    """(exit code, stdout bytes, stderr bytes) of the command, or None: not served here (the caller runs it).
    `warming()`: the helper's model or vectors are still loading, so a command that ranks is not served."""
    from rose import cli

    if len(streams) != 2 or not argv or argv[0] not in SERVED_COMMANDS or (argv[0] in RANKING_COMMANDS and warming()):
        return None
    with environment.using(env, cwd):
        try:
            with _captured(streams):   # argparse's own complaints: the caller prints them itself, in-process
                parser, args = cli.parse(argv)
        except SystemExit:
            return None
        if getattr(args, "cwd", None) and not os.path.isabs(args.cwd):
            args.cwd = os.path.join(cwd, args.cwd)   # the helper's own folder is /, not the caller's
        if not _servable(args):
            return None
        with _captured(streams) as (out, err):
            code = cli.dispatch(parser, args)
            return code, out.getvalue(), err.getvalue()
