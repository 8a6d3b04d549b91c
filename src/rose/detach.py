"""Start a process that outlives its parent: its own session, stdin from /dev/null, output to a log, ROSE_CHILD=1.

posix_spawn rather than subprocess.Popen: the parent (a hook that exits at once) never waits for the child, and a
Popen object that is dropped while its child runs is reported as a leaked resource.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path


INHERIT_AT = 3   # where a kept descriptor appears in the child


def spawn_detached(argv: list[str], log: Path, cwd: Path | None = None, *, keep_fd: int | None = None,
                   extra_env: dict[str, str] | None = None) -> int | None:
    """Start argv detached; returns its pid, or None if it could not be started (the caller's work stays queued).

    `keep_fd` is handed to the child as fd 3 (the learner's lock travels this way, so it is held from the moment
    the hook takes it until the learner exits)."""
    from rose import environment, envvars
    from rose.store.atomic import private_dir

    env = environment.child({envvars.CHILD: "1", **(extra_env or {})})
    private_dir(log.parent)
    if hasattr(os, "posix_spawn"):
        # the log may sit in a shared runtime folder: never follow a symlink planted where it should be
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600),
                   (os.POSIX_SPAWN_DUP2, 1, 2)]
        spare = None
        if keep_fd is not None:
            if keep_fd == INHERIT_AT:  # dup2(3, 3) is a no-op that would leave close-on-exec set
                spare = keep_fd = os.dup(keep_fd)
            actions.append((os.POSIX_SPAWN_DUP2, keep_fd, INHERIT_AT))  # dup2 clears close-on-exec on the copy
        prior = os.getcwd()
        try:
            if cwd is not None:
                os.chdir(cwd)  # posix_spawn has no cwd argument before Python 3.13's file actions
            return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsid=True)
        except OSError:
            return None
        finally:
            if cwd is not None:
                os.chdir(prior)
            if spare is not None:
                os.close(spare)
    import subprocess  # pragma: no cover - platforms without posix_spawn

    if keep_fd is not None:  # pragma: no cover
        return None   # no way to hand the lock over: the work stays queued for `rose learn`
    try:
        with open(os.devnull, "rb") as devnull, open(log, "ab") as out:
            proc = subprocess.Popen(argv, stdin=devnull, stdout=out, stderr=out, start_new_session=True, env=env,
                                    close_fds=True, cwd=cwd)
        return proc.pid
    except OSError:
        return None


def python_module(module: str, *args: str) -> list[str]:
    """`<this python> -m module args`, never importing from the folder it starts in (environment.safe_path_flag)."""
    from rose.environment import safe_path_flag

    return [sys.executable, *safe_path_flag(sys.executable), "-m", module, *args]


class RedactedStream:
    """stdout/stderr for a detached process (the learner, the warm helper): whole lines, redacted, then written to
    the log it was started with, so a traceback quoting a secret never reaches that log as it was."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.pending = ""

    def write(self, text: str) -> int:
        from rose.redact import redact

        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            self.raw.write(redact(line) + "\n")
        self.raw.flush()
        return len(text)

    def flush(self) -> None:
        if self.pending:
            from rose.redact import redact

            self.raw.write(redact(self.pending))
            self.pending = ""
        self.raw.flush()

    def isatty(self) -> bool:
        return False


def redact_own_output() -> None:
    """Called first thing by a detached process: everything it prints goes through the redactor."""
    sys.stderr = RedactedStream(sys.stderr)
    sys.stdout = RedactedStream(sys.stdout)
