"""`rose doctor`: what is set up, what is broken, and the one thing to do about it. Each check is a typed record."""
from __future__ import annotations

import os
import shutil
import sys

from rose.install.model import Level  # one Level for every check: the wiring checks' and doctor's own
from rose.store import Layers, global_root
from rose.typedrecord import Record, asdict


class Check(Record):
    name: str
    level: Level
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {**asdict(self), "level": self.level.value}


MIN_PYTHON = (3, 10)


def run(layers: Layers, probe: bool = False) -> list[Check]:
    checks: list[Check] = []
    version = ".".join(map(str, sys.version_info[:3]))
    checks.append(Check("python", Level.OK if sys.version_info >= MIN_PYTHON else Level.FAIL,
                        f"{version} at {sys.executable}"))
    checks += _store_checks(layers)
    checks += _orphaned_local(layers)
    checks += _config_checks(layers)
    checks += _backend_checks(layers, probe)
    checks += _wiring_checks(layers)
    checks += _helper_checks()
    checks += _learning_checks(layers)
    return checks


def _orphaned_local(layers: Layers) -> list[Check]:
    """Machine-local folders of repository stores that are gone (the repository moved or was deleted): an index
    and a queue nobody will read again, said so the user can reclaim the space."""
    from rose.store.paths import LOCAL_DIR, store_of_local

    folder = global_root() / LOCAL_DIR
    try:
        names = sorted(os.listdir(folder)) if layers.refused is None else []
    except OSError:
        return []
    gone = [n for n in names if (path := store_of_local(n)) is not None and not os.path.isdir(path)]
    if not gone:
        return []
    shown = ", ".join(str(folder / n) for n in gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
    return [Check("machine-local", Level.INFO, f"{len(gone)} folder(s) of stores that are gone (moved or deleted): "
                  f"{shown}; safe to remove")]


def _helper_checks() -> list[Check]:
    """The warm helper's private folder, and whether a helper answers there."""
    import os

    from rose.warm import client

    if not client.helpers_allowed():
        return [Check("warm helper", Level.INFO, f"off ({client.NO_HELPER_ENV}=0): every hook works in-process")]
    folder, why = client.runtime_dir()
    if folder is None:
        return [Check("warm helper", Level.WARN, why)]
    sock = client.socket_path()
    pid_file = client.sibling(sock, ".pid") if sock else ""
    running = ""
    try:
        if sock and client.request(sock, {"op": "ping"}, 1.0) is None and os.path.exists(sock):
            running = "running"
            if os.path.exists(pid_file):
                with open(pid_file) as handle:
                    running = f"running (pid {handle.read().strip()})"
    except (OSError, client.Timeout):
        running = ""
    return [Check("warm helper", Level.OK, f"{running or 'not running (the next prompt starts one)'}; {why}")]


DAMAGED_HINT = ("derived from the lesson files: the next prompt or command that meets the damage discards it and "
                "builds it again, `rose index --rebuild` does it now")


# what an earlier rose kept inside a repository's .rose/, now under the user's own store (store.paths.local_root)
EARLIER_LOCAL = ("index.db", "sessions", "queue", "judge-cache.json", "events.jsonl", "evolution", "cache", "logs",
                 "locks")


def _store_checks(layers: Layers) -> list[Check]:
    from rose.store.index import damaged
    from rose.store.layers import repository_root, switched_off

    out = []
    repository = repository_root(layers.cwd)
    off = switched_off(repository)
    if off:   # the hooks inject and learn nothing here: the first thing a user asking "why nothing?" needs
        out.append(Check("switched off", Level.WARN, f"rose is off in {repository} ({off}): `rose on` switches it back"))
    if layers.project is None:
        from rose.store.layers import find_project_root

        waiting = find_project_root(layers.cwd) if layers.refused is not None else None
        out.append(Check("project store", Level.WARN, f"{waiting} is not used while your own store is refused (it "
                         "keeps this machine's record of the store)" if waiting else
                         f"none at or above {layers.cwd}: `rose init` creates one"))
    if layers.refused is not None:   # another user's, or open to them: its lessons and settings are not the user's
        out.append(Check("global store", Level.FAIL, layers.refused))
    elif layers.global_ is None:
        out.append(Check("global store", Level.INFO, f"none at {global_root()} (created on first global lesson)"))
    for store in layers.stores():
        name = f"{store.scope.value} store"
        try:
            report = store.sync()
            count = store.index.count()
            whole = store.index.intact()   # a bad page elsewhere fails the first query that reads it
        except Exception as exc:  # noqa: BLE001 - doctor reports every failure rather than stopping at one
            hint = f" ({DAMAGED_HINT})" if damaged(exc) else ""
            out.append(Check(name, Level.FAIL, f"{store.root}: {exc}{hint}"))
            continue
        if not whole:
            out.append(Check(name, Level.FAIL, f"{store.index_db_path} is damaged ({DAMAGED_HINT})"))
            continue
        out.append(Check(name, Level.OK, f"{store.root}: {count} lessons indexed"))
        left = [n for n in EARLIER_LOCAL if store.local != store.root and os.path.lexists(store.root / n)]
        if left:
            out.append(Check("earlier layout", Level.INFO, f"{store.root} holds {', '.join(left)} from an earlier "
                             f"rose: never read now (this machine's record of the store is in {store.local}); "
                             "safe to remove"))
        for rel, reason in report.problems:
            out.append(Check("corrupt file", Level.WARN, f"{store.root / rel}: {reason} (skipped, left as is)"))
        _episodes, bad = store.episodes()
        for problem in bad:
            out.append(Check("corrupt episode", Level.WARN, f"{problem} (skipped, left as is)"))
        from rose.routing import load_rules

        for path, reason in load_rules([store.routing_dir])[1]:
            out.append(Check("corrupt rule", Level.WARN, f"{path}: {reason} (skipped, left as is)"))
    return out


def _config_checks(layers: Layers) -> list[Check]:
    from rose import trust

    settings = layers.settings()
    out = [Check("config", Level.OK if not settings.problems else Level.WARN,
                 (", ".join(str(p) for p in layers.config_paths()) or "defaults")
                 + (f" ({len(settings.problems)} setting(s) not applied, below)" if settings.problems else ""))]
    for problem in settings.problems:
        out.append(Check(f"config {problem.kind.value}", Level.WARN, problem.line()))
    if layers.project is not None and layers.project.config_path.exists():
        path = layers.project.config_path
        state = trust.state(path)
        if state is trust.TrustState.PINNED:
            out.append(Check("config trust", Level.OK, f"{path} is trusted as it is (`rose trust --revoke` undoes)"))
        elif state is trust.TrustState.CHANGED:
            out.append(Check("config trust", Level.WARN, f"{path} changed since you trusted it: its privileged keys "
                             "are ignored until you review it and run `rose trust` again"))
    return out


def _backend_checks(layers: Layers, probe: bool) -> list[Check]:
    from rose import environment

    settings = layers.settings()
    out = []
    for label, command in (("claude CLI", settings.agent.claude_command), ("codex CLI", settings.agent.codex_command)):
        where = environment.which(command) if os.sep not in command else shutil.which(command)
        out.append(Check(label, Level.OK if where else Level.INFO, where or f"{command!r} not on PATH"))
    from rose.judge import JudgeFailure, make_backend

    try:
        backend = make_backend(settings.agent)
    except JudgeFailure as exc:
        return out + [Check("judge backend", Level.FAIL, str(exc))]
    if backend is None:
        out.append(Check("judge backend", Level.WARN, f"{settings.agent.backend.value}: none found, running "
                         "model-free (recall works; learning work waits in the queue)"))
        return out
    out.append(Check("judge backend", Level.OK, f"{settings.agent.backend.value} -> {backend.name}"
                     + (f" ({backend.model})" if backend.model else "")))
    if probe:
        from rose.judge import probe as run_probe

        result = run_probe(backend)
        out.append(Check("probe", Level.OK if result.ok else Level.FAIL, result.line()))
    return out


def _wiring_checks(layers: Layers) -> list[Check]:
    from pathlib import Path

    from rose.install import wiring_checks

    try:
        found = wiring_checks(layers.cwd, Path.home())
    except Exception as exc:  # noqa: BLE001 - doctor reports every failure rather than stopping at one
        return [Check("hook wiring", Level.FAIL, f"could not check: {exc}")]
    return [Check(c.name, Level(c.level.value), c.detail) for c in found]


def _learning_checks(layers: Layers) -> list[Check]:
    """Queued learning work, and the learner's last runs and failures (from its events)."""
    from rose.learn.jobs import queued
    from rose.store import events

    out = []
    for store in layers.stores():
        jobs = queued(store)
        if jobs:
            oldest = jobs[0][1]
            waiting = "; last error: " + oldest.last_error if oldest.last_error else ""
            out.append(Check("learning queue", Level.WARN if len(jobs) > 3 else Level.INFO,
                             f"{len(jobs)} job(s) waiting in {store.queue_dir}, oldest {oldest.created}{waiting}"))
        from rose.learn.jobs import dead, dead_dir

        for path, job in dead(store):
            out.append(Check("learning set aside", Level.WARN, f"{job.kind.value} job of session {job.session_id} "
                             f"set aside after {job.attempts} attempt(s): {job.last_error} ({path}; delete it, or "
                             f"move it back to {store.queue_dir} to try again)"))
        if dead(store):
            out.append(Check("learning set aside", Level.INFO, f"folder: {dead_dir(store)}"))
        runs = [e for e in events.read(store.events_path, kind="learn") if "ok" in e][-3:]
        for e in runs:
            state = "ok" if e.get("ok") else "failed"
            detail = e.get("detail") or e.get("failure") or ""
            out.append(Check("learner run", Level.OK if e.get("ok") else Level.WARN,
                             f"{e.get('ts')} session {e.get('session')}: {state}: {detail}"))
    return out
