"""`python -m rose.learn.run [STORE_ROOT]`: the detached learner. Started by hooks, never by hand (see `rose learn`).

It holds the user's learner lock (inherited from the hook that started it, or taken here), works through every
store marked as having work, and exits when no job is due. Time is bounded twice: each job by JOB_DEADLINE_S, the
whole run by DEADLINE_S. The alarm raises inside whatever call is running; the model CLI's cleanup kills its
process group, so no orphan outlives a job. A job cut short counts as a failed attempt; work cut short by the
run's deadline stays queued as it was. Everything this process writes to its log goes through the redactor.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

DEADLINE_S = float(os.environ.get("ROSE_LEARNER_DEADLINE_S", 15 * 60))      # the whole run, at most
JOB_DEADLINE_S = float(os.environ.get("ROSE_LEARNER_JOB_DEADLINE_S", 5 * 60))  # one job, at most


def main(argv: list[str] | None = None) -> int:
    from rose.learn import jobs
    from rose.learn.learner import JobStopped, LearnerDeadline, serve_pending

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1:
        print("usage: python -m rose.learn.run [STORE_ROOT]", file=sys.stderr)
        return 2
    from rose.detach import redact_own_output

    redact_own_output()
    fd_text = os.environ.get(jobs.LOCK_FD_ENV)
    lock_fd = int(fd_text) if fd_text and fd_text.isdigit() else None
    if argv:  # a store named by hand: mark it, and take the lock unless one came with us
        from rose.model import Scope
        from rose.store import Store

        root = Path(argv[0]).resolve()
        if not (root / "nodes").is_dir():
            print(f"{root}: not a rose store; nothing to learn", file=sys.stderr)
            return 0
        jobs.mark_pending(Store(root, Scope.PROJECT))
    if lock_fd is None:
        lock_fd = jobs.try_lock()
        if lock_fd is None:
            return 0   # a learner runs: it takes our work too
    ends = time.monotonic() + DEADLINE_S

    def on_alarm(_signum, _frame):  # type: ignore[no-untyped-def]
        from rose.judge.backends._proc import interrupt

        # held while a model CLI is being started (it has no handle yet), so it is never left behind
        interrupt(LearnerDeadline() if time.monotonic() >= ends - 0.05 else JobStopped())

    @contextlib.contextmanager
    def timer() -> Iterator[None]:
        left = ends - time.monotonic()
        if left <= 0:
            raise LearnerDeadline()
        signal.setitimer(signal.ITIMER_REAL, min(JOB_DEADLINE_S, left))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    has_alarm = hasattr(signal, "SIGALRM")
    if has_alarm:
        signal.signal(signal.SIGALRM, on_alarm)
    try:
        serve_pending(lock_fd, timer if has_alarm else None)
    except LearnerDeadline:
        print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} deadline of {DEADLINE_S:.0f}s reached: stopping; unfinished "
              "jobs stay queued", file=sys.stderr)
        return 3
    finally:
        if has_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stderr.flush()
    return 0


def exit_now(code: int) -> None:
    """Leave at once once the lock is released: a learner that lingers in interpreter teardown would overlap the
    next one (which a hook may start the moment the lock is free)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
