"""`python -m rose.learn.run STORE_ROOT`: the detached learner. Started by hooks, never by hand (see `rose learn`).

It works through the store's queue and exits. A learner that hangs is ended by its own deadline: the alarm raises
inside whatever call is running, its cleanup kills any model CLI it started, and the process exits, so no
orphan outlives it.
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

DEADLINE_S = float(os.environ.get("ROSE_LEARNER_DEADLINE_S", 15 * 60))  # a learner never runs longer than this


class Deadline(BaseException):
    """Raised by the alarm: a BaseException so no `except Exception` in a stage can swallow it."""


def _on_alarm(_signum, _frame):
    raise Deadline()


def main(argv: list[str] | None = None) -> int:
    from rose.learn.jobs import log_line
    from rose.learn.learner import run_queue
    from rose.model import Scope
    from rose.store import Store, global_root

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m rose.learn.run STORE_ROOT", file=sys.stderr)
        return 2
    root = Path(argv[0]).resolve()
    store = Store(root, Scope.GLOBAL if root == global_root() else Scope.PROJECT)
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, DEADLINE_S)
    try:
        for result in run_queue(store):
            if not result.done:
                log_line(store, f"{result.job.name}: not done: {result.detail}")
    except Deadline:
        log_line(store, f"deadline of {DEADLINE_S:.0f}s reached: stopping; unfinished jobs stay queued")
        return 3
    finally:
        if hasattr(signal, "SIGALRM"):
            signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
