"""Use at a finer grain than a lesson: which sentences of a lesson did work, and whether the detail attached under
it (sticky patches, detail under trial) was itself used.

Attribution (rose.learn.attribute) answers "was this lesson used?". Compression needs "which of its sentences did
work?" (the spans the compressor keeps), and descent needs "did the re-attached detail bear on the work?" (a rescue
is credited per claim). Both are the question `assess` asks, about smaller pieces, so each is one more `assess`
call with every piece offered as a lesson of its own (ids `<node>~s<n>` for a sentence, `~p<n>` for a sticky patch,
`~t<n>` for a trial); strict, and defaulting to not used, like every attribution.

    attached    per episode, only when a used lesson carries patches or trials: judged on the session's digest
    spans       per compression attempt: the lesson's sentences judged on the accepted work of its validation
                episodes (never the held-out ones), so span evidence costs nothing on sessions that compress nothing
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rose.compress.graph import base_body, sentences
from rose.model import Episode

if TYPE_CHECKING:
    from rose.judge import Judge
    from rose.model import Node

MAX_PIECES = 150      # the assess schema allows 200 entries; leave room
MAX_SPANS = 60        # sentences remembered as doing work, per lesson (newest kept)


@dataclass
class Piece:
    id: str
    node: str
    kind: str      # span | patch | trial
    index: int
    title: str
    text: str


def pieces(node: Node, *, spans: bool, attached: list[list[str]]) -> list[Piece]:
    """What to observe on one used lesson: its sentences (when span evidence is wanted), its sticky patches and
    the text of each trial (`attached[i]` is trial i's attached text)."""
    out: list[Piece] = []
    if spans:
        for i, s in enumerate(sentences(base_body(node.body))):
            out.append(Piece(f"{node.id}~s{i}", node.id, "span", i,
                             f"One sentence of the lesson \u201c{node.title}\u201d ({node.id})", s))
    for i, claim in enumerate(node.dropped):
        if claim.rescues > 0:   # a sticky patch: recall serves it under the lesson
            out.append(Piece(f"{node.id}~p{i}", node.id, "patch", i,
                             f"Detail re-attached under the lesson \u201c{node.title}\u201d ({node.id})", claim.claim))
    for i, texts in enumerate(attached):
        for j, text in enumerate(texts):
            out.append(Piece(f"{node.id}~t{i}c{j}", node.id, "trial", i,
                             f"Detail under trial under the lesson \u201c{node.title}\u201d ({node.id})", text))
    return out


def observe(judge: Judge, episode: Episode, digest: str, found: list[Piece]) -> dict[str, bool] | None:
    """piece id -> used, or None when the judge did not answer (nothing is credited or advanced then)."""
    from rose.judge import JudgeFailure, Stage, calls

    found = found[:MAX_PIECES]
    if not found:
        return {}
    request = calls.AssessRequest(prompt=episode.prompt, digest=digest,
                                  served=[calls.Lesson(p.id, p.title, p.text) for p in found])
    try:
        answer = judge.ask(calls.ASSESS, request, stage=Stage.ATTRIBUTION)
    except JudgeFailure:
        return None
    used = {u.id: u.used for u in answer.lessons}
    return {p.id: bool(used.get(p.id)) for p in found}


MAX_EPISODES_FOR_SPANS = 20   # the most recent validation episodes shown to the span observation
SPANS_PROMPT = "Accepted work this lesson was used on (several episodes); which of its sentences did that work use?"


def observe_spans(judge: Judge, node: Node, episodes: list[Episode]) -> list[str] | None:
    """The lesson's sentences that the accepted work of these episodes used; None when there is no evidence to be
    had (no episodes, or the judge did not answer): the compressor is then told the evidence is absent."""
    found = [p for p in pieces(node, spans=True, attached=[]) if p.kind == "span"]
    recent = episodes[-MAX_EPISODES_FOR_SPANS:]
    if not found or not recent:
        return None
    digest = "\n".join(f"[{i + 1}] task: {' '.join(e.prompt.split())[:300]}\n    accepted: "
                        f"{' '.join(e.accepted_summary.split())[:600]}" for i, e in enumerate(recent))
    probe = Episode(id="spans", session="", prompt=SPANS_PROMPT)
    seen = observe(judge, probe, digest, found)
    if seen is None:
        return None
    return list(dict.fromkeys(p.text for p in found if seen.get(p.id)))[-MAX_SPANS:]
