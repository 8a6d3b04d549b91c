"""Stages 5 and 6: usage earns a lesson a smaller form, and failure recovers the detail it dropped.

    eligibility.py   when a lesson has earned a compression attempt
    compression.py   one attempt: the compress call, the checks in code, replay validation, the new level
    replay.py        replaying episodes with a candidate (replay_probe, then replay_judge); failures -> preserve
    episodes.py      the regression set over a subtree, the validation / held-out split, the replay sample
    heldout.py       held-out evaluation after acceptance; a node that fails it is demoted
    demote.py        demotion: stop serving a node, serve the nodes it was made from again
    observe.py       which sentences did work, and whether re-attached detail was used (one assess call)
    rank.py          the descent score: judge usefulness + rescue prior - token cost
    descent.py       trials across sessions: attach, rescue, next candidate, escalation to level 0, gaps
    repair.py        folding a claim that keeps rescuing back into the body
    merge.py         a shared parent for lessons used together on successful work
    graph.py         lookups across the layered stores, subtrees, the served form, the trial section
    stage.py         what the learner runs after each episode (after_episode)

See docs/compression.md.
"""
from __future__ import annotations

from rose.compress.stage import Stages, after_episode, only

__all__ = ["Stages", "after_episode", "only"]
