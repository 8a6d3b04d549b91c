"""Waiting in tests without racing the wall clock.

Rule: no test may depend on a wall-clock race (one did, and failed CI on a loaded machine). So a test waits for a
*condition* (a file, a request reaching the mock, a process ending), and the only time limit is a generous bound
that catches a hang; and a deadline that the test is about starts when the test says so, not when a child happens
to be started.

- `wait_until(predicate, what)`: poll a condition until it holds; fail after `bound_s` (a hang, never a verdict).
- `hold_deadline(monkeypatch, ready)`: the judge's child deadline (`rose.judge.backends._proc.run`, which calls
  `proc.communicate(timeout=timeout_s)`) starts counting only once `ready()` is true.
"""
from __future__ import annotations

import subprocess
import time
import types
from typing import Callable, List, Union

HANG_S = 120.0   # the bound on any wait: long enough that only a hang reaches it, on any machine
POLL_S = 0.05


def wait_until(predicate: Callable[[], object], what: Union[str, Callable[[], str]], bound_s: float = HANG_S) -> None:
    """Return as soon as `predicate()` is true; fail the test if it is still false after `bound_s` seconds.
    `what` names the condition in the failure (a callable is asked then, so it can show the state at that moment)."""
    import pytest

    give_up = time.monotonic() + bound_s
    while not predicate():
        if time.monotonic() > give_up:
            pytest.fail(f"still waiting after {bound_s:g}s for {what() if callable(what) else what}")
        time.sleep(POLL_S)


class DeadlineGate:
    """What `hold_deadline` saw: every child `_proc.run` started, and the deadline each one was given."""

    def __init__(self, ready: Callable[[], bool], bound_s: float):
        self.ready = ready
        self.bound_s = bound_s
        self.children: List[subprocess.Popen] = []
        self.deadlines: List[float] = []


def hold_deadline(monkeypatch, ready: Callable[[], bool], bound_s: float = HANG_S) -> DeadlineGate:
    """Make the judge's deadline for a CLI child start only when `ready()` is true.

    `rose.judge.backends._proc.run` starts the child and then waits `proc.communicate(stdin, timeout=timeout_s)`:
    the deadline runs from the child's start. A test of "past its deadline, the child is killed with everything it
    started" needs the child to have started everything first, and on a loaded machine a CLI can take longer than
    any short deadline just to get there. So here, until `ready()` (e.g. "the CLI has reached the mock"), the child
    is served exactly as `communicate` serves it (stdin written, stdout and stderr drained) without any deadline;
    then the real `communicate(timeout=...)` runs with the deadline the judge asked for, and its expiry goes down
    rose's own path (kill the process group, raise TIMEOUT). `ready()` still false after `bound_s`: the test fails.

    Only `_proc`'s view of `subprocess` is replaced, for this test (monkeypatch undoes it)."""
    from rose.judge.backends import _proc

    gate = DeadlineGate(ready, bound_s)

    class GatedPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            self._gate_passed = False
            super().__init__(*args, **kwargs)
            gate.children.append(self)

        def communicate(self, input=None, timeout=None):
            if timeout is None or self._gate_passed:
                return super().communicate(input, timeout)
            self._gate_passed = True
            gate.deadlines.append(timeout)
            give_up = time.monotonic() + gate.bound_s
            while not gate.ready():
                if time.monotonic() > give_up:
                    raise AssertionError(f"the condition that starts the deadline never held within {gate.bound_s:g}s")
                try:  # a child that ends on its own meanwhile returns here, and the test sees how it ended
                    return super().communicate(input, timeout=POLL_S)
                except subprocess.TimeoutExpired:
                    input = None  # already handed to communicate, which keeps writing it on the next call
            return super().communicate(input, timeout=timeout)

    view = types.ModuleType("subprocess")
    view.__dict__.update(vars(subprocess))
    view.Popen = GatedPopen
    monkeypatch.setattr(_proc, "subprocess", view)
    return gate
