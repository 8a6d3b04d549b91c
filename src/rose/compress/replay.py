"""Validation by replay: each episode is replayed with a candidate lesson and the original prompt, in probe form.

`replay_probe` asks how a fresh agent, holding only the candidate, would approach the old prompt (the CLI backends
run every call in a new process, so the verbose lesson cannot leak in); `replay_judge` asks whether that approach
reproduces the accepted outcome. The candidate goes in without its id, so nothing points the probe back at the
original. The other lessons the episode used are served beside the candidate in their current form, as recall
would serve them, so a lesson is judged on its own part of work that needed several. A judge that does not answer,
or answers unreadably, is a failure, never a pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rose.compress.graph import served_text
from rose.model import Episode

if TYPE_CHECKING:
    from rose.compress.graph import Graph
    from rose.judge import Judge

HINT_CHARS = 300        # a preserve hint is one line a compressor can act on
PROMPT_IN_HINT = 100


@dataclass
class Replay:
    episode: Episode
    passed: bool
    reason: str
    unreadable: bool = False   # the judge failed: counted as a failure

    def hint(self) -> str:
        """The preserve hint a failed replay leaves for the next attempt."""
        prompt = " ".join(self.episode.prompt.split())[:PROMPT_IN_HINT]
        return f"Needed for \u201c{prompt}\u201d: {' '.join(self.reason.split())}"[:HINT_CHARS]


def replay(judge: Judge, title: str, text: str, episodes: list[Episode], graph: Graph | None = None,
           exclude: set[str] | None = None) -> list[Replay]:
    """Replay each episode with the candidate. With `graph`, the other lessons the episode used are served beside
    it in their current form; what the candidate stands in for (`exclude`) and the forms below it are left out."""
    from rose.judge import JudgeFailure, Stage, calls

    out = []
    for episode in episodes:
        body = text
        if graph is not None:
            others = graph.companions(episode.used, exclude or set())
            body = "\n\n".join([text, *(f"Also remembered, {o.title}:\n{served_text(o)}" for o in others)])
        lesson = calls.Lesson("", title, body)
        try:
            probe = judge.ask(calls.REPLAY_PROBE, calls.ReplayProbeRequest(lesson=lesson, prompt=episode.prompt),
                              stage=Stage.PROBE)
            verdict = judge.ask(calls.REPLAY_JUDGE, calls.ReplayJudgeRequest(
                prompt=episode.prompt, accepted_summary=episode.accepted_summary, approach=probe.approach),
                stage=Stage.COMPRESSION)
        except JudgeFailure as failure:
            out.append(Replay(episode, False, f"unreadable judge ({failure.kind.value}): counted as a failure",
                              unreadable=True))
            continue
        out.append(Replay(episode, verdict.passed, verdict.reason))
    return out


def add_hints(preserve: list[str], replays: list[Replay], cap: int = 12) -> list[str]:
    """Failed replays become preserve hints (newest kept when over the cap); unreadable ones teach nothing."""
    hints = list(preserve)
    for r in replays:
        if not r.passed and not r.unreadable:
            hint = r.hint()
            if hint not in hints:
                hints.append(hint)
    return hints[-cap:]
