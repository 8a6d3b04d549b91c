"""Does a learner stage pay for itself? The token arithmetic a compression attempt must pass before it is made.

A compression attempt costs model calls now (one `compress`, then a `replay_probe` and a `replay_judge` for each of
up to `replay_k` validation episodes) and pays back later, on every session that serves the shorter form: its
tokens are saved in the pack. (The session's `assess` prompt carries every served lesson too, but it also carries
the detail descent attaches to a short form, and in bench/bench_compression.py it came out no smaller with
compression than without: so the saving is counted once, READS_PER_SERVE = 1. Counted twice, the rule let through
attempts that cost the run about 240 learner tokens a task more than they saved.) A lesson that is rarely served
never earns the attempt back, so it is not attempted:

    cost    = (2 + 2 * replay_k) * (CALL_OVERHEAD_TOKENS + lesson tokens)     (+1: the span observation)
    saving  = lesson tokens * (1 - max_token_ratio) * READS_PER_SERVE * serve rate * HORIZON_SESSIONS
              / (1 + rejections)

`1 - max_token_ratio` is the least an accepted candidate saves. `rejections` counts the candidates in a row that came
back too long (rose.compress.eligibility): a lesson already as short as its evidence allows rarely yields another
accepted form, so the chance an attempt pays is taken as 1 / (1 + rejections).

`serve rate` is the share of the store's most recent episodes (RECENT_EPISODES) that served the lesson or withheld it
to measure it (rose.credit): how often it would be in a pack. The constants were measured in the simulated world
(bench/bench_compression.py: a compression prompt is about 950 tokens for a 250-token lesson, a replay call about
520) and hold for real models to the extent rose's own prompts dominate a call's size.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

CALL_OVERHEAD_TOKENS = 450    # a compression or replay prompt's instructions and framing, beyond the lesson itself
READS_PER_SERVE = 1           # the pack only: the assess prompt did not shrink (see above)
HORIZON_SESSIONS = 200        # sessions an accepted compression is counted on to keep serving
RECENT_EPISODES = 100         # the window the serve rate is measured over
MIN_EPISODES = 10             # below this the store is too young to say: the attempt is allowed


@dataclass(frozen=True)
class Payback:
    worth: bool
    cost: float
    saving: float
    serve_rate: float | None

    @property
    def reason(self) -> str:
        rate = "unknown" if self.serve_rate is None else f"{self.serve_rate:.0%}"
        verdict = "pays for itself" if self.worth else "would not pay for itself"
        return (f"an attempt {verdict}: ~{self.cost:,.0f} tokens now against ~{self.saving:,.0f} saved over "
                f"{HORIZON_SESSIONS} sessions (served in {rate} of recent sessions)")


def attempt_cost(lesson_tokens: int, replay_k: int) -> float:
    return (2 + 2 * max(replay_k, 0)) * (CALL_OVERHEAD_TOKENS + lesson_tokens)


def expected_saving(lesson_tokens: int, max_token_ratio: float, serve_rate: float, rejections: int = 0) -> float:
    return (lesson_tokens * max(0.0, 1.0 - max_token_ratio) * READS_PER_SERVE * serve_rate * HORIZON_SESSIONS
            / (1 + max(rejections, 0)))


def judge(lesson_tokens: int, replay_k: int, max_token_ratio: float, serve_rate: float | None,
          rejections: int = 0) -> Payback:
    """Pure: is one compression attempt on a lesson of this size, served this often, worth its calls?"""
    cost = attempt_cost(lesson_tokens, replay_k)
    if serve_rate is None:
        return Payback(True, cost, float("nan"), None)
    saving = expected_saving(lesson_tokens, max_token_ratio, serve_rate, rejections)
    return Payback(saving >= cost, cost, saving, serve_rate)


def serve_rate(episode_dirs: list[Path], node_id: str) -> float | None:
    """Share of the most recent episodes (across `episode_dirs`) that served or withheld `node_id`; None when there
    are fewer than MIN_EPISODES."""
    found: list[tuple[int, str]] = []
    for folder in episode_dirs:
        try:
            with os.scandir(folder) as entries:
                for e in entries:
                    if e.name.endswith(".json"):
                        try:
                            found.append((e.stat().st_mtime_ns, e.path))
                        except OSError:
                            continue
        except OSError:
            continue
    if len(found) < MIN_EPISODES:
        return None
    recent = sorted(found, reverse=True)[:RECENT_EPISODES]
    hits = total = 0
    for _mtime, path in recent:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        total += 1
        arms = data.get("arms")
        arms = arms if isinstance(arms, dict) else {}
        hits += node_id in (data.get("served") or []) or node_id in arms
    return hits / total if total >= MIN_EPISODES else None
