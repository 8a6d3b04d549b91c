"""One deadline for a piece of work that a user is waiting on (the prompt hook), shared by every step in it.

The prompt hook runs a search, a selector, maybe its fallback and a second pass; each used to have its own
timeout, so a model that never answered cost them all in turn (20 s + 20 s past a 30 s hook timeout). A Deadline
is created once, when the hook starts, and every step asks it how much time is left: a step that cannot finish in
time is skipped, and what is ready is served. stdlib only: the per-prompt path imports it.
"""
from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MIN_STEP_S = 0.5   # a model call given less than this would only fail: skip it instead


class Deadline:
    def __init__(self, seconds: float | None, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.at = None if seconds is None else clock() + max(0.0, seconds)

    @classmethod
    def none(cls) -> Deadline:
        """No deadline (commands a user runs by hand, the detached learner's own steps)."""
        return cls(None)

    def remaining(self) -> float:
        return float("inf") if self.at is None else max(0.0, self.at - self.clock())

    def cap(self, seconds: float) -> float:
        """`seconds`, or less if the deadline is nearer."""
        return min(seconds, self.remaining())

    def allows(self, seconds: float = MIN_STEP_S) -> bool:
        """Is there time for a step that needs at least `seconds`?"""
        return self.remaining() >= seconds

    def __repr__(self) -> str:
        return "Deadline(none)" if self.at is None else f"Deadline({self.remaining():.2f}s left)"
