"""Every environment variable rose reads, besides each setting's own ROSE_<SECTION>_<NAME> (rose.config): declared
here once, each with what it does, so docs/config.md lists them from this table and no module spells a name of its
own. A leaf module with no imports: the per-prompt hook uses it.
"""
from __future__ import annotations

HOME = "ROSE_HOME"
WARM_HELPER = "ROSE_WARM_HELPER"
WARM_IDLE_S = "ROSE_WARM_IDLE_S"
LEARNER_DEADLINE_S = "ROSE_LEARNER_DEADLINE_S"
LEARNER_JOB_DEADLINE_S = "ROSE_LEARNER_JOB_DEADLINE_S"
DEBUG = "ROSE_DEBUG"
CHILD = "ROSE_CHILD"
LEARNER_LOCK_FD = "ROSE_LEARNER_LOCK_FD"
MANAGED = "ROSE_MANAGED"

WARM_IDLE_DEFAULT_S = 20 * 60
LEARNER_DEADLINE_DEFAULT_S = 15 * 60
LEARNER_JOB_DEADLINE_DEFAULT_S = 5 * 60

# (name, default, what it does, set by rose itself rather than by a user)
VARIABLES: tuple[tuple[str, str, str, bool], ...] = (
    (HOME, "~/.rose", "Where the global store (your own lessons and config) lives.", False),
    (WARM_HELPER, "1", "`0`: never start the warm helper; every hook does its work in its own process.", False),
    (WARM_IDLE_S, f"{WARM_IDLE_DEFAULT_S}", "Seconds without a request after which the warm helper exits.", False),
    (LEARNER_DEADLINE_S, f"{LEARNER_DEADLINE_DEFAULT_S}",
     "Seconds a detached learner run may take in all; the job in progress then stays queued.", False),
    (LEARNER_JOB_DEADLINE_S, f"{LEARNER_JOB_DEADLINE_DEFAULT_S}",
     "Seconds one learner job may take; past it the job fails, is counted and backed off.", False),
    (DEBUG, "", "Set (to anything): an internal error of a `rose` command shows its traceback instead of one line.",
     False),
    (CHILD, "", "`1` in every process rose starts (learner, helper, model CLIs): rose's own hooks do nothing there.",
     True),
    (LEARNER_LOCK_FD, "", "The learner lock a hook hands to the learner it starts.", True),
    (MANAGED, "", "Marks the MCP server entries `rose install` writes, so it removes exactly its own.", True),
)


def number(env_value: str | None, default: float) -> float:
    """A numeric variable's value, or the default when it is unset or not a number."""
    try:
        return float(env_value) if env_value else default
    except ValueError:
        return default
