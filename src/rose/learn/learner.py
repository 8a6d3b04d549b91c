"""The learner: runs queued jobs for one store, detached from the session that queued them.

Per session it holds a lock (one session is never processed twice at once) and a record in the session file (an
ended session is attributed once; minting resumes after the last message already learned from).
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rose.learn.jobs import Job, JobKind, log_line, queued
from rose.model import Outcome
from rose.recall.pack import session_path, update_session
from rose.store import Layers, Store
from rose.store.atomic import file_lock
from rose.store.events import EventKind
from rose.errors import LockTimeout

if TYPE_CHECKING:
    from rose.judge import Judge

DIGEST_TOKENS = 3000
MAX_JOB_ATTEMPTS = 5   # a job that keeps failing for reasons other than "no backend" is set aside after this


@dataclass
class JobResult:
    job: Job
    done: bool
    detail: str


def run_queue(store: Store, judge_factory=None) -> list[JobResult]:
    """Process every queued job of this store, oldest first. Jobs that cannot run now stay queued."""
    results = []
    for path, job in queued(store):
        results.append(run_job(store, path, job, judge_factory))
    return results


def run_job(store: Store, path: Path, job: Job, judge_factory=None) -> JobResult:
    from rose.judge import Judge, JudgeFailure

    lock = store.root / "locks" / f"learn-{path.stem}.lock"
    try:
        with file_lock(lock, timeout_s=0.5):
            layers = Layers.discover(Path(job.cwd) if job.cwd and Path(job.cwd).is_dir() else store.root.parent)
            if layers.empty:
                layers.project = store
            settings = layers.settings()
            judge: Judge = judge_factory(store, settings) if judge_factory else Judge.for_store(store, settings)
            if not judge.available:
                log_line(store, f"{job.name}: no model backend: left queued")
                return JobResult(job, False, "no model backend: queued")
            try:
                detail = _process(layers, store, job, judge, settings)
            except JudgeFailure as failure:
                return _failed(store, path, job, f"{failure.kind.value}: {failure}")
            except (OSError, ValueError) as exc:
                return _failed(store, path, job, f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            log_line(store, f"{job.name}: done: {detail}")
            return JobResult(job, True, detail)
    except LockTimeout:
        return JobResult(job, False, "another learner holds this session")


def _failed(store: Store, path: Path, job: Job, why: str) -> JobResult:
    import json

    from rose.store.atomic import write_text_atomic

    job.attempts += 1
    job.last_error = why
    if job.attempts >= MAX_JOB_ATTEMPTS:
        target = store.queue_dir / "failed" / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, json.dumps(job.to_dict(), indent=1))
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    else:
        write_text_atomic(path, json.dumps(job.to_dict(), indent=1))
    log_line(store, f"{job.name}: failed (attempt {job.attempts}): {why}")
    store.event(EventKind.LEARN, session=job.session_id, job_kind=job.kind.value, ok=False, failure=why)
    return JobResult(job, False, why)


def _process(layers: Layers, owner: Store, job: Job, judge: Judge, settings) -> str:
    from rose.learn.attribute import attribute, record_episode
    from rose.learn.consolidate import reconcile_pending
    from rose.learn.mint import mint
    from rose.transcripts import digest, final_summary, read_transcript, task_prompt

    conversation = read_transcript(Path(job.transcript_path), agent=job.agent or None)
    state = owner.read_json(session_path(owner, job.session_id), {})
    state = state if isinstance(state, dict) else {}
    since = int(state.get("learned_upto", 0))
    backend = judge.backend
    fork = job.session_id if job.fork and backend is not None and backend.can_fork and backend.name == job.agent \
        else None
    parts = []
    outcome = Outcome.UNKNOWN
    if job.kind is JobKind.SESSION_END and not state.get("episode"):
        prompt = task_prompt(conversation)
        if prompt:
            text = digest(conversation, DIGEST_TOKENS).text
            result = attribute(layers, owner, job.session_id, prompt, text, final_summary(conversation), judge)
            episode = record_episode(layers, owner, job.session_id, prompt, result)
            update_session(owner, job.session_id, lambda d: d.update({"episode": episode.id}))
            outcome = {"success": Outcome.VERIFIED, "failure": Outcome.FAILED}.get(result.outcome.value,
                                                                                 Outcome.UNKNOWN)
            parts.append(f"episode {episode.id} ({result.outcome.value}, {len(result.used)}/"
                         f"{len(result.used) + len(result.unused)} served lessons used, by {result.source})")
            from rose.compress import after_episode  # stages 5-6: compression, descent, repair, merge

            compressed = after_episode(layers, owner, episode, judge, settings, digest=text)
            if compressed:
                parts.append(compressed)
    last = max((m.n for m in conversation.messages), default=-1)
    if last >= since:
        report = mint(layers, conversation, judge, settings, session_id=job.session_id, outcome=outcome,
                      since=since, fork_session=fork)
        parts.append(f"minted {report.minted}, rejected {len(report.rejected)} ({report.decision})")

        def advance(d: dict) -> None:
            d["learned_upto"] = last + 1
            reflections = d.setdefault("reflections", [])
            reflections.append({"kind": job.kind.value, "minted": report.minted})
            d["empty_reflections"] = 0 if report.minted else int(d.get("empty_reflections", 0)) + 1
        update_session(owner, job.session_id, advance)
    pending = reconcile_pending(layers, judge, settings)
    if pending:
        parts.append(f"reconciled {len(pending)} pending")
    _embed_new(layers, settings)
    owner.event(EventKind.LEARN, session=job.session_id, job_kind=job.kind.value, ok=True, detail="; ".join(parts))
    return "; ".join(parts) or "nothing new"


def _embed_new(layers: Layers, settings) -> None:
    """Vectors for what was just written, so dense recall finds it without waiting for the warm helper."""
    try:
        from rose.embed import make_embedder

        embedder = make_embedder(settings.embed)
        if embedder is not None:
            for store in layers.stores():
                store.embed_missing(embedder)
    except Exception:  # noqa: BLE001 - vectors are derived; the helper or `rose index` catches up later
        pass
