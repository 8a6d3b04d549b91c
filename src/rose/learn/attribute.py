"""Stage 3, attribution: which served lessons actually bore on the work, and an episode of what happened.

Serving is a retrieval decision; using is an outcome. Only lessons attributed as used earn credit: served but unused
is scored neither success nor failure. Two sources, best first: the in-session reflector's own report
(`rose used`), then the digest judge (`assess`), whose prompt is strict and defaults to not used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rose.errors import CorruptFile, NodeNotFound
from rose.model import Episode, EpisodeOutcome, Node, Status, now_iso
from rose.recall.pack import USED_MARKER
from rose.store import Layers, Store
from rose.store.events import EventKind
from rose.store.sessions import Reported, SessionState, read_session, update_session

if TYPE_CHECKING:
    from rose.judge import Judge


@dataclass
class Attribution:
    outcome: EpisodeOutcome
    summary: str
    used: list[str]
    unused: list[str]
    source: str   # "reported" (rose used), "self-report" (the agent's rose-used: line) or "assess"
    pieces: dict[str, bool] | None = None   # the detail attached under served lessons (rose.compress.observe ids):
                                            # used or not, judged in the same call; None when none was asked


def served_in_session(owner: Store, session_id: str) -> list[str]:
    return list(read_session(owner, session_id).served_ever)


@dataclass
class UseReport:
    """What `rose used` recorded, and what it could not place."""
    session: str
    used: list[str]
    unused: list[str]
    unknown: list[str]   # names that are no ref of this session and no lesson in the stores: not recorded
    session_seen: bool   # rose served this session something (else refs cannot be resolved, and ids may be a typo)


def report_use(layers: Layers, owner: Store, session_id: str, used: list[str], unused: list[str]) -> UseReport:
    """`rose used`: the in-session report (ids or the pack-local refs M1, M2 the block showed). It wins over the
    digest judge. Names that resolve to no lesson (a ref the session was never shown, an id no store holds) are
    returned as unknown and not recorded: a credit for nothing would count as a report that was made."""
    from rose.errors import RoseError
    from rose.store.sessions import resolve_refs

    session_id = session_id.strip()
    if not session_id:
        raise RoseError("which session? name it (the session id the agent's hook was given)")
    state = read_session(owner, session_id)

    def known(names: list[str]) -> tuple[list[str], list[str]]:
        ids, unknown = [], []
        for name in names:
            found = resolve_refs(owner, session_id, [name])
            if found and (found[0] in state.served_ever or layers.id_taken(found[0])):
                ids += [i for i in found if i not in ids]
            else:
                unknown.append(name)
        return ids, unknown

    used_ids, unknown = known(used)
    unused_ids, unknown_unused = known(unused)
    unused_ids = [i for i in unused_ids if i not in used_ids]
    if used_ids or unused_ids or not (used or unused):   # no names at all is a report too: nothing was used
        def put(state: SessionState) -> None:
            state.reported = Reported(used=sorted(used_ids), unused=sorted(unused_ids), ts=now_iso())
        update_session(owner, session_id, put)
    return UseReport(session_id, used_ids, unused_ids, unknown + unknown_unused,
                     bool(state.served_ever or state.refs))


def use_report_problems(report: UseReport) -> list[str]:
    """What a person (or agent) reporting use should be told was not recorded."""
    lines = []
    if report.unknown:
        lines.append(f"{', '.join(report.unknown)}: no lesson this session was shown and no lesson id in the stores;"
                     " not recorded")
    if not report.session_seen:
        lines.append(f"rose has served nothing in a session {report.session!r}: check the session id")
    return lines


_MARKER = re.compile(r"^\s*" + re.escape(USED_MARKER) + r"\s*(.*)$", re.IGNORECASE | re.MULTILINE)


def self_reported(owner: Store, session_id: str, conversation: Any) -> list[str] | None:
    """What the agent said it used, in its replies' `rose-used: M1 M3` lines (None when it never said)."""
    from rose.store.sessions import resolve_refs
    from rose.transcripts import Role

    names: list[str] | None = None
    for message in getattr(conversation, "messages", []):
        if message.role is not Role.ASSISTANT:
            continue
        for found in _MARKER.finditer(message.text):
            names = (names or []) + [n for n in re.split(r"[\s,;]+", found.group(1).strip().strip("`.")) if n]
    if names is None:
        return None
    return resolve_refs(owner, session_id, [n for n in names if n.lower() not in ("none", "-")])


def attribute(layers: Layers, owner: Store, session_id: str, prompt: str, digest: str, summary_hint: str,
              judge: Judge, conversation: Any = None) -> Attribution:
    """Raises JudgeFailure when the judge does not answer: the session then stays queued, nothing is guessed.

    Which lessons were used: the session's own report first (`rose used`), then the agent's `rose-used:` lines in
    its replies, then the digest judge (`assess`, strict, defaulting to not used). Exposure alone earns nothing."""
    from rose.judge import Stage, calls

    served = served_in_session(owner, session_id)
    reported = read_session(owner, session_id).reported
    lessons = []
    nodes = []
    for node_id in served:
        try:
            _store, node = layers.locate(node_id)
        except NodeNotFound as exc:
            # deleted since it was served: the judge cannot read it, so its use (and credit) is lost; said on record
            owner.event(EventKind.SKIP, what="attribution", id=node_id, session=session_id, reason=str(exc))
            continue
        lessons.append(calls.Lesson(node.id, node.title, node.body))
        nodes.append(node)
    asked = attached_pieces(layers, nodes)
    said = self_reported(owner, session_id, conversation) if reported is None and conversation is not None else None
    # Use already reported (by the session, or the agent's rose-used: line) outranks the judge's verdict on a lesson,
    # so the judge is not shown the lessons' texts to rule on: it is asked for the outcome, and about the detail
    # attached under them, which no report covers.
    shown = lessons if reported is None and said is None else []
    answer = judge.ask(calls.ASSESS, calls.AssessRequest(prompt=prompt, digest=digest,
                                                         served=shown + [calls.Lesson(p.id, p.title, p.text)
                                                                         for p in asked]),
                       stage=Stage.ATTRIBUTION)
    outcome = EpisodeOutcome(answer.outcome.value)
    verdicts = {u.id: bool(u.used) for u in answer.lessons}
    pieces = {p.id: verdicts.get(p.id, False) for p in asked} if asked else None
    if reported is not None:
        used = [i for i in reported.used if i in served]
        return Attribution(outcome, answer.accepted_summary or summary_hint, used,
                           [i for i in served if i not in used], "reported", pieces)
    if said is not None:
        used = [i for i in said if i in served]
        return Attribution(outcome, answer.accepted_summary or summary_hint, used,
                           [i for i in served if i not in used], "self-report", pieces)
    used = [u.id for u in answer.lessons if u.used and u.id in served]
    return Attribution(outcome, answer.accepted_summary or summary_hint, used, [i for i in served if i not in used],
                       "assess", pieces)


def attached_pieces(layers: Layers, nodes: list[Node]) -> list[Any]:
    """The sticky patches and detail under trial of the served lessons, asked about in the same `assess` call as
    the lessons themselves: descent needs to know whether that detail was used, and a second call asking only that
    cost every session that used a patched lesson a whole extra call (rose.compress.observe)."""
    from rose.compress import descent, observe
    from rose.compress.graph import Graph

    out: list[Any] = []
    graph = None
    for node in nodes:
        if not node.trials and not any(c.rescues > 0 for c in node.dropped):
            continue
        graph = graph or Graph(layers)
        texts = descent.node_texts(graph, descent.referenced(node.trials))
        out += observe.pieces(node, spans=False, attached=[descent.attached_texts(t, texts) for t in node.trials])
    return out[:observe.MAX_PIECES]


def record_episode(layers: Layers, owner: Store, session_id: str, prompt: str, result: Attribution, *,
                   episode_id: str | None = None, extra: dict[str, Any] | None = None) -> Episode:
    """Write the episode and credit each used lesson; unused lessons are left exactly as they were.

    Credit moves importance with the evidence (rose.retention.rules.next_importance: up on a successful session,
    down on a failed one; exposure alone is neutral). A cold record attributed as used is first promoted back to
    the hot store; one whose importance negative credit brings to the floor is archived at once.

    Idempotent for a given `episode_id`: a lesson is credited only if the episode is not yet in its
    `covers_tasks`, and the credit and that record are one atomic write, so a job killed half-way and run again
    credits each lesson once."""
    from rose.retention import maintain, rules

    episode = Episode(id=episode_id or owner.new_episode_id(), session=session_id, prompt=prompt,
                      outcome=result.outcome, served=result.used + result.unused, used=result.used,
                      accepted_summary=result.summary, extra=dict(extra or {}))
    owner.save_episode(episode)
    now = now_iso()
    for node_id in result.used:
        try:
            store, node = layers.locate(node_id)
        except (NodeNotFound, CorruptFile) as exc:
            owner.event(EventKind.SKIP, what="credit", id=node_id, session=session_id, reason=str(exc))
            continue  # deleted or broken since it was served: nothing to credit, and the skip is on record
        if node.status is Status.ARCHIVED:   # paged in from the archive and used: hot again before the credit
            maintain.promote(store, node_id, f"used in session {session_id} (episode {episode.id})")
        fresh = False

        def credit(n: Node) -> None:
            nonlocal fresh
            if episode.id in n.covers_tasks:
                return  # credited by an earlier run of this same job
            n.stats.attempts += 1
            if result.outcome is EpisodeOutcome.SUCCESS:
                n.stats.successes += 1
            elif result.outcome is EpisodeOutcome.FAILURE:
                n.stats.failures += 1
            n.stats.last_used = now
            n.use_count += 1
            n.learned_importance = rules.next_importance(
                rules.effective_importance(n.importance, n.learned_importance), result.outcome.value)
            if episode.id not in n.covers_tasks:
                n.covers_tasks.append(episode.id)
            fresh = True
        credited = store.update(node_id, credit)
        if fresh and result.outcome is EpisodeOutcome.FAILURE and credited.status is not Status.DISPUTED and \
                maintain.may_archive() and \
                rules.archive_now(rules.effective_importance(credited.importance, credited.learned_importance)):
            maintain.archive_unit(store, node_id, f"negative credit brought its importance to the floor "
                                                  f"({rules.IMPORTANCE_FLOOR}) in episode {episode.id}")
    owner.event(EventKind.EPISODE, id=episode.id, session=session_id, outcome=result.outcome.value,
                served=episode.served, used=episode.used, source=result.source)
    return episode
