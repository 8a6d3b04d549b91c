"""The learner: runs queued jobs, detached from the sessions that queued them.

Every job's failure is caught here, whatever it is (a transcript that cannot be read, a store that vanished, a
judge that did not answer, a bug): it is counted, logged (redacted) and backed off, and after MAX_ATTEMPTS the job
moves to `queue/dead/` with its reason. One bad job never blocks another. A job with no backend to ask waits
without counting (model-free mode is not a failure).

A job may be killed at any point (kill -9, a deadline, a reboot) and is then run again from the start, so every
step is idempotent, recorded in the session file or made so by a deterministic id:
    episode      its id derives from the session, and a lesson is credited only if the episode is not already in
                 its `covers_tasks` (the credit and that record are one atomic write)
    compression  marked as started before it runs: a kill loses that attempt, it never repeats one
    minting      each candidate's id derives from the session and its evidence, so a second run finds it stored
    progress     `learned_upto` advances only after a whole mint
    retention    the maintenance pass (rose.retention.maintain) runs last: every move is one atomic rename, so a
                 kill leaves each record in exactly one place, and the next pass completes what was interrupted
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.errors import JobStopped, LearnerDeadline, LockTimeout
from rose.learn import jobs as queue
from rose.learn.jobs import Job, JobKind, log_line, queued
from rose.model import EpisodeOutcome, Outcome
from rose.store.sessions import Learned, SessionState, read_session, update_session
from rose.store import Layers, Store
from rose.store.atomic import file_lock
from rose.store.events import EventKind

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    Timer = Callable[[], AbstractContextManager[None]]   # bounds one job (rose.learn.run arms an alarm)

    from rose.config import Settings
    from rose.judge import Judge

DIGEST_TOKENS = 3000
MAX_JOB_ATTEMPTS = queue.MAX_ATTEMPTS


OUTAGE_STOP = 3   # jobs in a row failed by a backend outage: the learner stops for now (their backoff stands)


@dataclass
class JobResult:
    job: Job
    done: bool
    detail: str
    outage: bool = False    # failed because the model backend is down, not because of this job




def run_queue(store: Store, judge_factory: Callable[[Store, Settings], Judge] | None = None, *,
              due_only: bool = False, skip: set[str] | frozenset[str] = frozenset(),
              timer: Timer | None = None, outages_before: int | None = None) -> list[JobResult]:
    """Process the store's queued jobs, oldest first. Jobs that cannot run now stay queued.

    `due_only` (the detached learner) skips jobs that are backed off; `rose learn` runs everything now. With
    `outages_before` (the outages in a row so far), it stops once OUTAGE_STOP jobs in a row failed by an outage."""
    from rose.store.atomic import clean_stray_temps

    for folder in dict.fromkeys((store.root, store.local)):
        with contextlib.suppress(OSError):
            clean_stray_temps(folder)   # left by writers that were killed between a temp file and its rename
    results = []
    outages = outages_before or 0
    for path, job in queued(store):
        if outages_before is not None and outages >= OUTAGE_STOP:
            break
        if (due_only and not job.due()) or str(path) in skip:
            continue
        results.append(run_job(store, path, job, judge_factory, timer=timer))
        outages = outages + 1 if results[-1].outage else 0
    return results


def run_job(store: Store, path: Path, job: Job,
            judge_factory: Callable[[Store, Settings], Judge] | None = None, *,
            timer: Timer | None = None) -> JobResult:
    from rose.judge import Judge, JudgeFailure

    lock = store.locks_dir / f"learn-{path.stem}.lock"
    try:
        with file_lock(lock, timeout_s=0.5), (timer() if timer else contextlib.nullcontext()):
            try:
                layers = _layers_for(store, job)
                settings = layers.settings()
                judge: Judge = judge_factory(store, settings) if judge_factory else Judge.for_store(store, settings)
                if not judge.available:
                    why = judge.build_failure.detail if judge.build_failure else "no model backend"
                    _wait(path, job, queue.NO_BACKEND_WAIT_S)
                    log_line(store, f"{job.name}: {why}: left queued")
                    return JobResult(job, False, f"{why}: queued")
                detail = _process(layers, store, job, judge, settings)
            except JudgeFailure as failure:
                from rose.judge.errors import OUTAGE

                result = _failed(store, path, job, f"{failure.kind.value}: {failure}")
                result.outage = failure.kind in OUTAGE
                return result
            except JobStopped:
                return _failed(store, path, job, "ran past the time a job may take; its model calls were ended")
            except Exception as exc:  # noqa: BLE001 - any failure is this job's alone: counted, backed off
                why = f"{type(exc).__name__}: {exc}{_healed(store, job, exc)}"
                return _failed(store, path, job, why, permanent=_permanent(exc))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            log_line(store, f"{job.name}: done: {detail}")
            return JobResult(job, True, detail)
    except LockTimeout:
        return JobResult(job, False, BUSY)


def _layers_for(store: Store, job: Job) -> Layers:
    cwd = Path(job.cwd) if job.cwd and Path(job.cwd).is_dir() else store.root.parent
    layers = Layers.discover(cwd)
    if (layers.project is None or layers.project.root.resolve() != store.root.resolve()) \
            and store.scope.value == "project":
        layers.project = store   # the job's own store is the one it learns into
    return layers


def _healed(store: Store, job: Job, exc: BaseException) -> str:
    """A damaged index (derived data) failed the job: discard it, so the job's retry builds it from the files."""
    from rose.store.index import damaged

    if not damaged(exc):
        return ""
    try:
        layers = _layers_for(store, job)
        try:
            healed = layers.heal(exc)
        finally:
            layers.close()
    except Exception:  # noqa: BLE001 - the retry meets the damage again and tries again
        return ""
    return f" (damaged index discarded: {', '.join(str(s.index_db_path) for s in healed)})" if healed else ""


def _permanent(exc: BaseException) -> bool:
    """Failures no retry can fix: the transcript is not there or is not a transcript."""
    from rose.transcripts import TranscriptError

    return isinstance(exc, TranscriptError)


def _wait(path: Path, job: Job, seconds: float) -> None:
    import time

    job.not_before = time.time() + seconds
    with contextlib.suppress(OSError):
        queue.save(path, job)


def _failed(store: Store, path: Path, job: Job, why: str, *, permanent: bool = False) -> JobResult:
    import time

    from rose.redact import redact

    job.attempts += 1
    job.last_error = redact(why)[:2000]  # redacted before the cut, which could leave half a secret unrecognisable
    if permanent or job.attempts >= MAX_JOB_ATTEMPTS:
        with contextlib.suppress(OSError):
            queue.bury(store, path, job)
        log_line(store, f"{job.name}: set aside in {queue.dead_dir(store)} after {job.attempts} attempt(s): {why}")
    else:
        job.not_before = time.time() + queue.backoff_s(job.attempts)
        with contextlib.suppress(OSError):
            queue.save(path, job)
        log_line(store, f"{job.name}: failed (attempt {job.attempts}, next in {queue.backoff_s(job.attempts):.0f}s): "
                        f"{why}")
    with contextlib.suppress(Exception):
        store.event(EventKind.LEARN, session=job.session_id, job_kind=job.kind.value, ok=False, failure=why,
                    attempts=job.attempts, dead=permanent or job.attempts >= MAX_JOB_ATTEMPTS)
    return JobResult(job, False, why)


def episode_id_for(session_id: str) -> str:
    """The episode of a session has one id, so a job run twice writes one episode."""
    import hashlib

    return "e_" + hashlib.sha256(f"episode|{session_id}".encode("utf-8", "surrogateescape")).hexdigest()[:12]


def _process(layers: Layers, owner: Store, job: Job, judge: Judge, settings: Settings) -> str:
    from rose.learn.attribute import attribute, record_episode
    from rose.learn.consolidate import reconcile_pending
    from rose.learn.mint import mint
    from rose.transcripts import (counts, digest, execution_outcome, final_summary, read_transcript, redacted,
                                  task_prompt)

    # redacted once, as it is read: everything below cuts and budgets text that is already redacted
    conversation = redacted(read_transcript(Path(job.transcript_path), agent=job.agent or None))
    executed = execution_outcome(conversation)   # verified / failed only from checks that really ran
    state = read_session(owner, job.session_id)
    since = state.learned_upto
    backend = judge.backend
    fork = job.session_id if job.fork and backend is not None and backend.can_fork and backend.name == job.agent \
        else None
    parts = []
    episode_done = None
    touched: list[str] = []
    if job.kind is JobKind.SESSION_END and not state.episode:
        prompt = task_prompt(conversation)
        if prompt:
            text = digest(conversation, DIGEST_TOKENS).text
            result = attribute(layers, owner, job.session_id, prompt, text, final_summary(conversation) or "", judge,
                               conversation=conversation)
            source: dict[str, Any] = {"outcome_from": "assess", "used_from": result.source}
            if executed.outcome is not Outcome.UNKNOWN:   # a check that ran outranks the judge's reading
                result.outcome = EpisodeOutcome.SUCCESS if executed.outcome is Outcome.VERIFIED \
                    else EpisodeOutcome.FAILURE
                source = {"outcome_from": "execution", "used_from": result.source, "check": executed.check or "",
                          "evidence": list(executed.handles)}
            from rose.credit.record import arms_of, record_session

            arms = arms_of(owner, job.session_id)   # lessons served or withheld to measure them (rose.credit)
            if arms:
                source["arms"] = arms
            episode = record_episode(layers, owner, job.session_id, prompt, result,
                                     episode_id=episode_id_for(job.session_id), extra=source)
            credited = record_session(layers, owner, job.session_id, episode, settings)
            episode_done = episode
            # compression is marked before it runs: a kill loses the attempt, it never makes a second one
            def recorded(s: SessionState) -> None:
                s.episode, s.compressed = episode.id, True
            update_session(owner, job.session_id, recorded)
            parts.append(f"episode {episode.id} ({result.outcome.value}, {len(result.used)}/"
                         f"{len(result.used) + len(result.unused)} served lessons used, by {result.source})")
            if credited:
                parts.append(credited)
            from rose.compress import after_episode  # stages 5-6: compression, descent, repair, merge

            compressed = after_episode(layers, owner, episode, judge, settings, digest=text, seen=result.pieces)
            if compressed:
                parts.append(compressed)
    if job.kind is JobKind.SESSION_END:   # stage 7: where the session's knowledge was, against where it was looked for
        from rose.learn.route import learn_routes

        routed = learn_routes(layers, owner, job.session_id, conversation, judge, settings)
        if routed:
            parts.append(routed)
    # a memory's outcome rests on execution evidence alone (seed 003): the judge's impression of success is not a
    # check that passed, so it never makes a memory `verified`
    outcome = executed.outcome
    last = max((m.n for m in conversation.messages), default=-1)
    stored: list = []
    if last >= since:
        report = mint(layers, conversation, judge, settings, session_id=job.session_id, outcome=outcome,
                      since=since, fork_session=fork)
        parts.append(f"minted {report.minted}, rejected {len(report.rejected)} ({report.decision})")
        stored = report.stored
        touched = [r.node.id for r in report.stored if r.node is not None]

        def advance(s: SessionState) -> None:
            s.learned_upto = last + 1
            s.reflections.append(Learned(kind=job.kind.value, minted=report.minted))
            s.empty_reflections = 0 if report.minted else s.empty_reflections + 1
        update_session(owner, job.session_id, advance)
    from rose.evolve import after_job   # samples for generated skills and guardrails; evolution's one candidate

    evolved = after_job(layers, owner, job.session_id, settings, judge, episode=episode_done,
                        calls=counts(conversation).assistant_turns, stored=stored)
    if evolved:
        parts.append(evolved)
    pending = reconcile_pending(layers, judge, settings)
    if pending:
        parts.append(f"reconciled {len(pending)} pending")
    kept = _maintain(layers, owner, judge, touched)
    if kept:
        parts.append(kept)
    _embed_new(layers, settings)
    owner.event(EventKind.LEARN, session=job.session_id, job_kind=job.kind.value, ok=True, detail="; ".join(parts))
    return "; ".join(parts) or "nothing new"


def _maintain(layers: Layers, owner: Store, judge: Judge, touched: list[str]) -> str:
    """Retention after the learning (never on the prompt path). Its failure is logged and leaves the job done: what
    it did not finish, the next pass completes (a pass never half-moves a record)."""
    from rose.retention.maintain import maintain

    try:
        return maintain(layers, judge, touched=touched).describe()
    except Exception as exc:  # noqa: BLE001 - learning is already recorded; retention is retried next job
        log_line(owner, f"retention pass failed: {type(exc).__name__}: {exc}")
        return f"retention pass failed ({type(exc).__name__})"


def _embed_new(layers: Layers, settings: Settings) -> None:
    """Vectors for what was just written, so dense recall finds it without waiting for the warm helper."""
    try:
        from rose.embed import make_embedder

        embedder = make_embedder(settings.embed)
        if embedder is not None:
            for store in layers.stores():
                store.embed_missing(embedder)
    except Exception as exc:  # noqa: BLE001 - vectors are derived; the helper or `rose index` catches up later
        stores = layers.stores()
        if stores:
            log_line(stores[0], f"vectors for the new lessons not written now ({type(exc).__name__}: {exc}); "
                                "the warm helper or `rose index` catches up")


# -- the detached learner's loop over every store with work --------------------------------------------------------
def serve_pending(lock_fd: int | None, timer: Timer | None = None) -> int:
    """Work through every store marked pending until no job is due anywhere; returns the jobs run.

    Holds the learner lock throughout (`lock_fd`, inherited from the hook that started it); releases it only to
    exit, after one last look at the marks (see rose.learn.jobs for why that order is race-free). A job another
    process is running (its session lock is held) is left to it for the rest of this run."""
    from rose.store.atomic import clean_stray_temps
    from rose.store.layers import sound_store

    with contextlib.suppress(OSError):
        clean_stray_temps(queue.pending_dir())
    ran = 0
    busy: set[str] = set()
    outages = 0
    while True:
        processed = 0
        for root in queue.pending_roots():
            if outages >= OUTAGE_STOP:
                break
            if not (root / "nodes").is_dir():
                queue.clear_pending(root)   # the store is gone: nothing to do for it
                continue
            if not sound_store(root):
                # a link or another owner since its work was queued: its jobs wait, untouched, until a hook
                # (which discovers the store afresh, and says why it refuses one) marks it again
                queue.clear_pending(root)
                continue
            store = _store_at(root)
            try:
                ran_here = 0
                for result in run_queue(store, due_only=True, skip=busy, timer=timer, outages_before=outages):
                    if result.detail == BUSY:
                        busy.add(str(store.queue_dir / result.job.name))
                    else:
                        ran_here += 1
                    outages = outages + 1 if result.outage else 0
                processed += ran_here
                if ran_here:
                    _tidy_fulltext(store, timer)
                queue.clear_pending(root)   # cleared, then the queue is looked at again: a job queued meanwhile
                if queued(store):           # (or backed off, or waiting for a backend) keeps the store marked
                    queue.mark_pending(store)
            except LearnerDeadline:
                log_line(store, "the learner's deadline was reached: stopping; unfinished jobs stay queued")
                raise
            finally:
                store.close()
        ran += processed
        if outages >= OUTAGE_STOP:
            # the model backend is down: stop asking it. Every job keeps its place (and its backoff); the next hook
            # that queues work starts a learner that tries again.
            if lock_fd is not None:
                queue.release(lock_fd)
            return ran
        if processed:
            continue
        if lock_fd is None:
            return ran
        queue.release(lock_fd)
        if not any(_has_due(root, busy) for root in queue.pending_roots()):
            return ran
        lock_fd = queue.try_lock()
        if lock_fd is None:
            return ran   # another learner took over the new work


BUSY = "another learner holds this session"


def _tidy_fulltext(store: Store, timer: Timer | None) -> None:
    """After a store's jobs, its full-text index merged when that is due (rose.store.fulltext), as the warm helper
    does between requests: a user with the helper off, or whose helper never ranked against this store, gets the
    merge here, off every prompt. Bounded like a job; a step cut short rolls back, and the next run goes on."""
    from rose.store.fulltext import merge

    try:
        with timer() if timer else contextlib.nullcontext():
            steps = merge(store.index.conn, store.lock)
        if steps:
            log_line(store, f"full-text index merged ({steps} steps)")
    except JobStopped:
        log_line(store, "merging the full-text index ran past the time a job may take; the next run goes on")
    except LearnerDeadline:
        raise
    except Exception as exc:  # noqa: BLE001 - the index is derived: a merge not done now is done later
        log_line(store, f"merging the full-text index failed: {type(exc).__name__}: {exc}")


def _store_at(root: Path) -> Store:
    from rose.model import Scope
    from rose.store.layers import global_root

    return Store(root, Scope.GLOBAL if root.resolve() == global_root() else Scope.PROJECT)


def _has_due(root: Path, busy: set[str]) -> bool:
    store = _store_at(root)
    if not store.queue_dir.is_dir():
        return False
    return any(j.due() and str(p) not in busy for p, j in queued(store))
