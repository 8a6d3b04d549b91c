"""Usage out of the lesson files: a use changes no byte of a lesson, the folded values are the values the node held,
old files keep their numbers, the log survives torn lines and duplicates, the index catches up with a log that
changed underneath, and two clones that both used and both changed lessons merge with real git, without a conflict."""
from __future__ import annotations

import copy
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from rose.learn.attribute import Attribution, record_episode
from rose.model import Claim, ClaimKind, EpisodeOutcome, Node, Scope, Trial
from rose.store import Layers, Store, archive, usage
from rose.store.frontmatter import render_node
from rose.store.index import Index

NEEDS_GIT = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git executable")


def lesson(node_id: str, body: str = "Use port 5433 for the test database.", **kw) -> Node:
    return Node(id=node_id, family=kw.pop("family", "db"), title=kw.pop("title", "Test database port"), body=body,
                **kw)


def credit(layers: Layers, ids: list[str], outcome: EpisodeOutcome = EpisodeOutcome.SUCCESS, session: str = "s",
           episode_id: str | None = None):
    """What the learner does when attribution says these lessons were used: rose.learn.attribute's own credit."""
    return record_episode(layers, layers.project, session, "fix the flaky test",
                          Attribution(outcome, "fixed it", list(ids), [], "reported"), episode_id=episode_id)


def files(store: Store) -> dict[str, bytes]:
    return {p.relative_to(store.root).as_posix(): p.read_bytes() for p in sorted(store.nodes_dir.rglob("*.md"))}


def log_records(store: Store) -> list[dict]:
    return usage.parse_lines(store.usage_path.read_bytes(), final=True)[0]


# -- one store -------------------------------------------------------------------------------------------------
def test_a_credit_changes_no_byte_of_the_lesson_and_is_one_record(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    before = files(store)
    episode = credit(layers, ["n_port01"])
    failed = credit(layers, ["n_port01"], EpisodeOutcome.FAILURE, session="s2")
    assert files(store) == before
    node = store.get("n_port01")
    assert (node.stats.attempts, node.stats.successes, node.stats.failures, node.use_count) == (2, 1, 1, 2)
    assert node.covers_tasks == [episode.id, failed.id] and node.stats.last_used
    [row] = store.rows()
    assert (row.use_count, row.last_used) == (2, node.stats.last_used)        # the index has the folded values
    records = [r for r in log_records(store) if r["id"] == "n_port01"]
    assert [r["sum"] for r in records] == [{"attempts": 1, "successes": 1, "use_count": 1},
                                           {"attempts": 1, "failures": 1, "use_count": 1}]
    text = store.node_path(node).read_text(encoding="utf-8")
    for key in ("stats:", "use_count:", "covers_tasks:", "last_used"):
        assert key not in text
    credit(layers, ["n_port01"], episode_id=episode.id)   # the same job run again: credited once (idempotent)
    assert store.get("n_port01").use_count == 2 and len(log_records(store)) == 2


def test_a_change_of_meaning_rewrites_the_file_and_keeps_the_usage(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    before = files(store)
    store.update("n_port01", lambda n: setattr(n, "body", n.body + " Not 5432."))
    after = files(store)
    assert after != before and b"Not 5432." in after["nodes/db/n_port01.md"]
    assert store.get("n_port01").use_count == 1
    store.update("n_port01", lambda n: setattr(n, "family", "database"))       # a move is a change of meaning
    assert list(files(store)) == ["nodes/database/n_port01.md"]
    assert store.get("n_port01").use_count == 1


def _ts(i: int) -> str:
    return (datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=i)).isoformat().replace("+00:00", "Z")


def _mutations(rng: random.Random, i: int):
    """One random change, as the stages make them: (function, is it usage only?)."""
    ep = f"e_{i:06d}"

    def use(n: Node) -> None:
        n.stats.attempts += 1
        if rng.random() < 0.7:
            n.stats.successes += 1
        else:
            n.stats.failures += 1
        n.stats.last_used = _ts(i)
        n.use_count += 1
        n.covers_tasks.append(ep)

    def gap(n: Node) -> None:
        n.gaps = [*n.gaps, ep][-3:]

    def hint(n: Node) -> None:
        n.preserve = [*n.preserve, f"Needed for \u201ctask {i}\u201d: keep step {i}"][-2:]

    def attempt(n: Node) -> None:
        n.last_attempt, n.last_attempt_successes = _ts(i), n.stats.successes
        n.spans = [f"sentence {rng.randrange(5)}"] if rng.random() < 0.8 else []

    def backoff(n: Node) -> None:
        n.rejections = 0 if rng.random() < 0.3 else n.rejections + 1

    def heldout(n: Node) -> None:
        total = rng.randrange(1, 4)
        n.heldout_passed, n.heldout_total = rng.randrange(total + 1), total

    def claim_counts(n: Node) -> None:
        for c in n.dropped:
            c.attempts += 1
            c.rescues += rng.randrange(2)

    def idle(n: Node) -> None:
        for t in n.trials:
            t.idle += 1

    def rescue_credit(n: Node) -> None:
        n.stats.rescues += 1
        n.stats.expansions += rng.randrange(2)

    def duplicate(n: Node) -> None:
        n.extra["duplicate_hits"] = int(n.extra.get("duplicate_hits", 0)) + 1

    def body(n: Node) -> None:
        n.body += f"\nstep {i}"

    def new_claim(n: Node) -> None:
        n.dropped.append(Claim(f"claim {i}", ClaimKind.STEP, holder="n_holder"))

    def new_trial(n: Node) -> None:
        n.trials.append(Trial(ep, attached=[f"detail {i}"], claims=[f"detail {i}"], opened=_ts(i)))

    def advance(n: Node) -> None:
        if n.trials:
            n.trials[0].tries += 1
            n.trials[0].idle = 0

    def close(n: Node) -> None:
        n.trials = n.trials[1:]

    usage_only = [use, use, use, gap, hint, attempt, backoff, heldout, claim_counts, idle, rescue_credit, duplicate]
    meaning = [body, new_claim, new_trial, advance, close]
    pick = rng.choice(usage_only + meaning)
    only_usage = pick in usage_only and pick is not advance
    return pick, only_usage


def test_the_folded_values_are_exactly_the_values_the_node_held(layers: Layers) -> None:
    """Differential: the old store wrote the in-memory node to its file, so reading back gave that node. Random
    sequences of the stages' changes must read back the same through the log, from a fresh process, after the
    index is deleted and after a rebuild; and a change of usage alone must leave every byte of the file."""
    store = layers.project
    rng = random.Random(7)
    ids = [f"n_diff{i:02d}" for i in range(4)]
    expected = {}
    for node_id in ids:
        expected[node_id] = copy.deepcopy(store.save(lesson(node_id, family=rng.choice(["db", "ci"]))))
    for i in range(240):
        node_id = rng.choice(ids)
        change, only_usage = _mutations(rng, i)
        before = store.node_path(expected[node_id]).read_bytes()
        got = store.update(node_id, change)
        expected[node_id] = copy.deepcopy(got)
        if only_usage:
            assert store.node_path(got).read_bytes() == before, change.__name__
        assert store.get(node_id) == expected[node_id], change.__name__
    fresh = Store(store.root, Scope.PROJECT)
    assert {i: fresh.get(i) for i in ids} == expected
    rows = {r.id: r for r in fresh.rows()}
    assert {i: (rows[i].use_count, rows[i].last_used) for i in ids} == \
        {i: (n.use_count, n.stats.last_used) for i, n in expected.items()}
    fresh.close()
    store.close()
    os.unlink(store.index_db_path)
    again = Store(store.root, Scope.PROJECT)
    again.sync()
    assert {i: again.get(i) for i in ids} == expected
    again.rebuild_index()
    assert {i: again.get(i) for i in ids} == expected
    assert sorted(n.id for n in again.iter_nodes()) == ids and all(n == expected[n.id] for n in again.iter_nodes())
    lines = again.usage_path.read_bytes().splitlines(keepends=True)
    rng.shuffle(lines)                                    # a merge may order the lines any way: the fold does not care
    again.usage_path.write_bytes(b"".join(lines))
    again.rebuild_index()
    assert {i: again.get(i) for i in ids} == expected
    again.close()


# -- files written before the split ------------------------------------------------------------------------------
def _old_format(store: Store, node: Node) -> Path:
    """A file as the store wrote it before usage left the frontmatter: every field, usage included."""
    path = store.node_path(node)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_node(node), encoding="utf-8")
    return path


def _legacy_node() -> Node:
    node = lesson("n_legacy", covers_tasks=["e_000001", "e_000002"], use_count=7, gaps=["e_000003"],
                  preserve=["Needed for \u201cmigrate\u201d: keep the port"], rejections=2, last_attempt=_ts(1),
                  last_attempt_successes=4, heldout_passed=1, heldout_total=2, spans=["Use port 5433."],
                  dropped=[Claim("The port was 5432 before 2025.", holder="n_older", rescues=2, attempts=3)])
    node.stats.attempts, node.stats.successes, node.stats.failures, node.stats.last_used = 7, 5, 2, _ts(2)
    node.extra["duplicate_hits"] = 3
    return node


def test_an_old_file_keeps_its_numbers_and_a_use_does_not_touch_it(layers: Layers) -> None:
    store = layers.project
    old = _legacy_node()
    path = _old_format(store, old)
    store.sync()
    assert store.get(old.id) == old                                    # the frontmatter is the base
    before = path.read_bytes()
    credit(layers, [old.id])
    assert path.read_bytes() == before                                 # even an old file: a use is not a rewrite
    node = store.get(old.id)
    assert (node.use_count, node.stats.attempts, node.stats.successes) == (8, 8, 6)
    assert node.covers_tasks[:2] == ["e_000001", "e_000002"] and len(node.covers_tasks) == 3
    assert (node.dropped[0].rescues, node.extra["duplicate_hits"], node.rejections) == (2, 3, 2)

    store.update(old.id, lambda n: setattr(n, "title", "Test database port (local)"))   # a change of meaning
    text = path.read_text(encoding="utf-8")
    assert "use_count" not in text and "stats:" not in text and "rescues" not in text and "(local)" in text
    moved = store.get(old.id)
    assert (moved.use_count, moved.stats.attempts, moved.stats.failures) == (8, 8, 2)
    assert moved.stats.last_used == node.stats.last_used > _ts(2)
    assert (moved.covers_tasks, moved.gaps, moved.preserve, moved.spans) == \
        (node.covers_tasks, old.gaps, old.preserve, old.spans)
    assert (moved.heldout_passed, moved.heldout_total, moved.last_attempt_successes, moved.dropped[0].attempts) == \
        (1, 2, 4, 3)
    [base] = [r for r in log_records(store) if r.get("base")]
    assert base["at"] == "" and base["sum"]["use_count"] == 7
    store.update(old.id, lambda n: setattr(n, "body", n.body + " Always."))   # moved once, never again
    assert len([r for r in log_records(store) if r.get("base")]) == 1
    assert store.get(old.id).use_count == 8
    store.rebuild_index()
    assert store.get(old.id).use_count == 8


def test_an_old_file_put_back_after_its_values_moved_is_not_counted_twice(layers: Layers) -> None:
    """A merge resolved by taking the old version of a file whose values another clone already moved."""
    store = layers.project
    old = _legacy_node()
    path = _old_format(store, old)
    store.sync()
    legacy_bytes = path.read_bytes()
    store.update(old.id, lambda n: setattr(n, "body", n.body + " Always."))
    path.write_bytes(legacy_bytes)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 5_000_000))
    store.sync()
    assert store.get(old.id).use_count == 7


def test_killed_between_the_log_and_the_file_an_old_files_numbers_still_count_once(layers: Layers,
                                                                                   monkeypatch) -> None:
    import rose.store.store as store_module

    store = layers.project
    old = _legacy_node()
    path = _old_format(store, old)
    store.sync()
    before = path.read_bytes()

    def killed(*_a, **_kw):
        raise KeyboardInterrupt   # as far as this save goes, the process died here
    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):   # (the test's isolation stays)
        patched.setattr(store_module, "write_text_atomic", killed)
        store.update(old.id, lambda n: setattr(n, "title", "Test database port (local)"))
    assert path.read_bytes() == before and any(r.get("base") for r in log_records(store))   # in both now
    fresh = Store(store.root, Scope.PROJECT)
    assert fresh.get(old.id) == old                                     # ... and counted once
    fresh.update(old.id, lambda n: setattr(n, "title", "Test database port (local)"))
    assert fresh.get(old.id).use_count == 7 and len([r for r in log_records(store) if r.get("base")]) == 1
    fresh.close()


# -- the log -----------------------------------------------------------------------------------------------------
def test_torn_lines_and_junk_are_skipped_never_fatal(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"], session="s1")
    with open(store.usage_path, "ab") as f:          # a writer killed mid-line, junk, a wrong-typed field
        f.write(b'{"rid":"ujunk1","id":"n_port01","sum":{"use_count":"many"}}\nnot json\n\xff\xfe\n')
        f.write(b'{"rid":"utorn","id":"n_port01","sum":{"use_cou')
    assert store.get("n_port01").use_count == 1
    credit(layers, ["n_port01"], session="s2")       # the next append starts on a line of its own
    lines = store.usage_path.read_bytes().split(b"\n")
    assert lines[-2].startswith(b'{"rid":"u') and b'"use_count":1' in lines[-2]
    assert lines[-3] == b'{"rid":"utorn","id":"n_port01","sum":{"use_cou'
    assert Store(store.root, Scope.PROJECT).get("n_port01").use_count == 2
    store.rebuild_index()
    assert store.get("n_port01").use_count == 2


def test_a_whole_record_missing_only_its_newline_counts_once(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    rec = {"rid": "uabc", "id": "n_port01", "at": "2026-01-01T00:00:00.000Z", "sum": {"use_count": 1}}
    store.usage_path.write_bytes(usage.encode([rec])[:-1])         # killed between the record and its newline
    assert store.get("n_port01").use_count == 1
    credit(layers, ["n_port01"])
    assert store.get("n_port01").use_count == 2
    store.rebuild_index()
    assert store.get("n_port01").use_count == 2


def test_a_line_that_appears_twice_counts_once(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    line = store.usage_path.read_bytes()
    with open(store.usage_path, "ab") as f:          # what a criss-cross merge can leave
        f.write(line)
    assert store.get("n_port01").use_count == 1
    store.rebuild_index()
    assert store.get("n_port01").use_count == 1


KILLED_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from rose.model import Scope
    from rose.store import Store
    store = Store(Path(sys.argv[1]), Scope.PROJECT)
    i = int(sys.argv[2])
    while True:
        i += 1
        def bump(n, i=i):
            n.use_count += 1
            n.covers_tasks.append(f"e_{i:06d}")
        store.update("n_port01", bump)
        if i % 1000 == 1:
            print("writing", flush=True)
""")


def test_a_writer_killed_at_any_moment_leaves_a_readable_log(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for attempt in range(6):
        with subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(store.root), str(attempt * 1000)],
                              stdout=subprocess.PIPE, env=env) as proc:
            try:
                assert proc.stdout.readline().strip() == b"writing"
                time.sleep(0.05 + 0.07 * attempt)
            finally:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
        fresh = Store(store.root, Scope.PROJECT)
        node = fresh.get("n_port01")
        complete = [r for r in log_records(fresh) if r["id"] == "n_port01" and "sum" in r]
        assert node.use_count == sum(r["sum"]["use_count"] for r in complete) == len(node.covers_tasks)

        def after(n: Node, attempt: int = attempt) -> None:
            n.use_count += 1
            n.covers_tasks.append(f"e_after{attempt}")
        fresh.update("n_port01", after)                         # the next writer carries on from there
        assert Store(store.root, Scope.PROJECT).get("n_port01").use_count == node.use_count + 1
        fresh.close()
    assert node.use_count > 0


# -- the index and the log -----------------------------------------------------------------------------------------
def _foreign(node_id: str, n: int, rid: str) -> dict:
    """A record another clone wrote (what a pull brings in)."""
    return {"rid": rid, "id": node_id, "at": "2026-01-01T00:00:00.000Z", "sum": {"use_count": n}}


def test_the_index_catches_up_with_a_log_that_changed_underneath(layers: Layers, monkeypatch) -> None:
    store = layers.project
    store.save_many([lesson("n_port01"), lesson("n_port02", title="Other")])
    credit(layers, ["n_port01"], session="s1")
    other = Store(store.root, Scope.PROJECT)           # another process: its own handle on the same store
    credit(Layers(project=other, global_=None, cwd=layers.cwd), ["n_port01", "n_port02"], session="s2")
    store.sync()
    assert {r.id: r.use_count for r in store.rows()} == {"n_port01": 2, "n_port02": 1}
    other.close()

    folded: list[str] = []
    real_fold = usage.fold
    monkeypatch.setattr(usage, "fold", lambda state, rec: (folded.append(rec["rid"]), real_fold(state, rec)))
    with open(store.usage_path, "ab") as f:            # a pull that added lines at the end
        f.write(usage.encode([_foreign("n_port01", 1, "ua1"), _foreign("n_port02", 2, "ua2")]))
    store.sync()
    assert folded == ["ua1", "ua2"]                     # only the new lines were folded
    assert {r.id: r.use_count for r in store.rows()} == {"n_port01": 3, "n_port02": 3}

    lines = store.usage_path.read_bytes().splitlines(keepends=True)   # a merge that inserted a line mid-file
    store.usage_path.write_bytes(lines[0] + usage.encode([_foreign("n_port02", 5, "ub1")]) + b"".join(lines[1:]))
    folded.clear()
    store.sync()
    assert folded == ["ub1"]                             # the prefix changed: lines folded before are skipped
    assert {r.id: r.use_count for r in store.rows()} == {"n_port01": 3, "n_port02": 8}
    assert store.get("n_port02").use_count == 8

    store.usage_path.write_bytes(b"".join(lines[1:]))   # a folded line is gone (a checkout): everything again
    folded.clear()
    store.sync()
    assert len(folded) == len(lines) - 1
    assert {r.id: r.use_count for r in store.rows()} == {"n_port01": 2, "n_port02": 3}

    store.usage_path.unlink()                            # checked out to before the log existed
    store.sync()
    assert {r.id: r.use_count for r in store.rows()} == {"n_port01": 0, "n_port02": 0}


def test_the_per_prompt_sync_never_folds_the_log(layers: Layers, monkeypatch) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    with open(store.usage_path, "ab") as f:
        f.write(usage.encode([{"rid": "upulled", "id": "n_port01", "at": "", "sum": {"use_count": 1}}]))

    def refuse(*_a, **_kw):
        raise AssertionError("the quick sync folded the log")
    with monkeypatch.context() as patched:
        patched.setattr(Index, "catch_up_usage", refuse)
        store.sync(quick=True)
    store.sync()
    assert store.rows()[0].use_count == 2


def test_rebuild_recomputes_the_usage_the_index_caches(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    credit(layers, ["n_port01"], session="s2")
    store.index.conn.execute("UPDATE usage SET fold = '{}'")          # a damaged cache
    store.rebuild_index()
    assert store.get("n_port01").use_count == store.rows()[0].use_count == 2


def test_an_existing_store_gets_the_union_merge_line_on_its_next_write(layers: Layers) -> None:
    store = layers.project
    assert usage.GITATTRIBUTES_LINE in (store.root / ".gitattributes").read_text(encoding="utf-8")
    (store.root / ".gitattributes").write_text("*.png binary\n", encoding="utf-8")   # the user's own, without it
    fresh = Store(store.root, Scope.PROJECT)
    fresh.save(lesson("n_port01", use_count=1))
    assert (store.root / ".gitattributes").read_text(encoding="utf-8") == \
        f"*.png binary\n{usage.GITATTRIBUTES_LINE}\n{archive.GITATTRIBUTES_LINE}\n"
    fresh.close()


def test_secrets_in_usage_never_reach_the_log(layers: Layers) -> None:
    store = layers.project
    key = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4
    store.save(lesson("n_port01"))
    store.update("n_port01", lambda n: n.preserve.append(f"Needed for \u201cdeploy with {key}\u201d"))
    old = _legacy_node()
    old.preserve = [f"keep {key}"]
    _old_format(store, old)
    store.sync()
    store.update(old.id, lambda n: setattr(n, "title", "moved"))
    assert key not in store.usage_path.read_text(encoding="utf-8")
    assert "[REDACTED" in store.usage_path.read_text(encoding="utf-8")


def test_rose_init_moves_a_personal_stores_usage_with_its_lessons(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    layers = Layers.discover(repo)
    personal = layers.writable(Scope.PROJECT)          # a repository without .rose/: the user's own store for it
    personal.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    credit(layers, ["n_port01"], session="s2")
    store, moved = layers.init_project()
    assert moved >= 1 and store.root == repo / ".rose"
    store.sync()
    assert store.get("n_port01").use_count == 2 and len(store.get("n_port01").covers_tasks) == 2
    assert usage.GITATTRIBUTES_LINE in (store.root / ".gitattributes").read_text(encoding="utf-8")
    layers.close()


# -- two clones, real git --------------------------------------------------------------------------------------------
GIT = ["git", "-c", "user.name=rose test", "-c", "user.email=rose@example.invalid", "-c", "init.defaultBranch=main",
       "-c", "pull.rebase=false", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false"]


def git(cwd: Path, *args: str) -> str:
    cp = subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True,
                        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    assert cp.returncode == 0, f"git {' '.join(args)} failed:\n{cp.stdout}\n{cp.stderr}"
    return cp.stdout


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@NEEDS_GIT
def test_two_clones_that_used_and_changed_lessons_merge_cleanly(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    layers = Layers.discover(seed)
    store, _ = layers.init_project()
    store.save_many([lesson("n_shared", "Run the suite with -p no:randomly."),
                     lesson("n_alpha1", "Alpha: the cache lives in /var/cache/app.", title="Alpha"),
                     lesson("n_beta01", "Beta: restart the worker after a schema change.", title="Beta")])
    credit(layers, ["n_shared", "n_alpha1", "n_beta01"], session="seed")
    layers.close()
    _commit(seed, "lessons")
    gitattributes = (seed / ".rose" / ".gitattributes").read_text(encoding="utf-8")
    assert "usage.jsonl merge=union" in gitattributes
    tracked = git(seed, "ls-files", ".rose").split()
    assert ".rose/usage.jsonl" in tracked and not any("index.db" in t for t in tracked)

    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(seed), str(a))
    git(tmp_path, "clone", "-q", str(seed), str(b))

    la = Layers.discover(a)                   # clone A: uses lessons, changes alpha's meaning
    la.sync()                                 # (the prompt hook that served them indexed the fresh clone)
    for i in range(2):
        credit(la, ["n_shared"], session=f"a{i}")
    credit(la, ["n_alpha1"], EpisodeOutcome.FAILURE, session="a2")
    la.project.update("n_alpha1", lambda n: setattr(n, "body", n.body + "\nClear it after upgrading."))
    _commit(a, "clone a: used lessons, alpha says more")
    _ = la.project.rows()                     # A's index is warm from before the merge

    lb = Layers.discover(b)                   # clone B: uses lessons, changes beta's meaning, adds a lesson
    lb.sync()
    credit(lb, ["n_shared", "n_beta01"], session="b0")
    lb.project.update("n_beta01", lambda n: setattr(n, "body", "Beta: restart the worker and the scheduler."))
    lb.project.save(lesson("n_gamma1", "Gamma: the staging database is read-only on Fridays.", title="Gamma"))
    credit(lb, ["n_gamma1"], session="b1")
    _commit(b, "clone b: used lessons, beta changed, gamma added")
    lb.close()

    out = git(a, "pull", "--no-edit", str(b), "main")          # a real merge of both histories
    assert "CONFLICT" not in out
    assert git(a, "status", "--porcelain") == ""
    assert git(a, "diff", "--name-only", "--diff-filter=U") == ""
    assert b"<<<<<<<" not in (a / ".rose" / "usage.jsonl").read_bytes()
    assert git(a, "diff", "HEAD~2", "HEAD", "--", ".rose/nodes/db/n_shared.md") == ""   # only used: never touched

    store_a = la.project                     # the same handle and index as before the pull: it catches up
    store_a.sync()
    shared = store_a.get("n_shared")
    assert (shared.use_count, shared.stats.attempts, shared.stats.successes) == (4, 4, 4)   # 1 + 2 (a) + 1 (b)
    assert len(set(shared.covers_tasks)) == 4 == len(shared.covers_tasks)
    alpha, beta, gamma = (store_a.get(i) for i in ("n_alpha1", "n_beta01", "n_gamma1"))
    assert "Clear it after upgrading." in alpha.body and (alpha.use_count, alpha.stats.failures) == (2, 1)
    assert beta.body == "Beta: restart the worker and the scheduler." and beta.use_count == 2
    assert gamma.title == "Gamma" and gamma.use_count == 1
    rows = {r.id: r.use_count for r in store_a.rows()}        # what `rose status` and the hook read
    assert rows == {"n_shared": 4, "n_alpha1": 2, "n_beta01": 2, "n_gamma1": 1}

    git(b, "pull", "--no-edit", str(a), "main")                # and back: a fast-forward swaps the log under B
    lb = Layers.discover(b)
    store_b = lb.project
    store_b.sync()
    assert {r.id: r.use_count for r in store_b.rows()} == rows
    assert {n.id: n for n in store_b.iter_nodes()} == {n.id: n for n in store_a.iter_nodes()}

    credit(la, ["n_shared"], session="a3")                     # once more, rebasing instead of merging
    _commit(a, "clone a: one more use")
    credit(lb, ["n_shared", "n_gamma1"], session="b2")
    _commit(b, "clone b: one more use")
    git(a, "pull", "--rebase", str(b), "main")
    assert git(a, "status", "--porcelain") == ""
    store_a.sync()
    assert (store_a.get("n_shared").use_count, store_a.get("n_gamma1").use_count) == (6, 2)
    lb.close()
    la.close()


@NEEDS_GIT
def test_two_clones_that_each_rewrite_an_old_file_count_its_old_numbers_once(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    layers = Layers.discover(seed)
    store, _ = layers.init_project()
    old = _legacy_node()
    old.body = "first paragraph\n\nsecond paragraph\n\nthird paragraph"
    _old_format(store, old)
    layers.close()
    _commit(seed, "a lesson written by an older rose")
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", str(seed), str(a))
    git(tmp_path, "clone", "-q", str(seed), str(b))
    for clone, edit in ((a, ("first paragraph", "first paragraph, edited in a")),
                        (b, ("third paragraph", "third paragraph, edited in b"))):
        lc = Layers.discover(clone)
        lc.sync()
        credit(lc, [old.id], session=clone.name)
        lc.project.update(old.id, lambda n, e=edit: setattr(n, "body", n.body.replace(*e)))
        lc.close()
        _commit(clone, f"clone {clone.name}")
    out = git(a, "pull", "--no-edit", str(b), "main")
    assert "CONFLICT" not in out and git(a, "status", "--porcelain") == ""
    merged = Layers.discover(a)
    merged.project.sync()
    node = merged.project.get(old.id)
    assert "edited in a" in node.body and "edited in b" in node.body
    assert node.use_count == 7 + 2 and node.stats.attempts == 7 + 2        # the old 7 once, a use from each
    assert len(node.covers_tasks) == 4
    assert sum(1 for line in (a / ".rose" / "usage.jsonl").read_text().splitlines() if '"base":true' in line) == 1
    merged.close()


def test_records_are_one_json_object_a_line_with_ids_and_numbers(layers: Layers) -> None:
    store = layers.project
    store.save(lesson("n_port01"))
    credit(layers, ["n_port01"])
    [line] = store.usage_path.read_text(encoding="utf-8").splitlines()
    rec = json.loads(line)
    assert set(rec) == {"rid", "id", "at", "sum", "max", "add", "set"}
    assert rec["id"] == "n_port01" and rec["add"] == {"covers_tasks": [store.get("n_port01").covers_tasks[0]]}
    assert rec["set"] == {"importance": 0.7}    # evidence moved importance: usage, never the file


def test_rose_init_in_the_home_folder_is_refused_and_the_global_store_is_left_as_it_is(isolated_home: Path) -> None:
    from rose.errors import RoseError

    layers = Layers.discover(isolated_home)   # a new terminal's folder: its .rose/ is the user's global store
    layers.writable(Scope.GLOBAL).save(lesson("n_mine01"))
    root = isolated_home / ".rose"
    before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    with pytest.raises(RoseError, match="global store"):
        layers.init_project()
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*")) == before
    layers.close()


def _personal_store_with_a_setting(tmp_path: Path) -> tuple[Path, Layers, Store]:
    """A repository without .rose/: one lesson in the user's own store for it, and recall switched off there (the
    README's "Switch it off")."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    layers = Layers.discover(repo)
    personal = layers.writable(Scope.PROJECT)
    personal.save(lesson("n_port01"))
    layers.set_setting("recall.enabled", "false", Scope.PROJECT)
    return repo, layers, personal


def test_rose_init_carries_the_users_settings_and_queued_learning_with_the_lessons(tmp_path: Path) -> None:
    from rose.learn import jobs

    repo, layers, personal = _personal_store_with_a_setting(tmp_path)
    job = jobs.Job(jobs.JobKind.SESSION_END, "s1", str(tmp_path / "t.jsonl"), "claude", str(repo))
    jobs.enqueue(personal, job)
    old_root = personal.root
    layers.init_project()
    layers.close()
    again = Layers.discover(repo)
    assert again.project is not None and again.project.root == repo / ".rose"
    assert again.settings().recall.enabled is False, "the user's setting stays in force"
    assert [j.session_id for _p, j in jobs.queued(again.project)] == ["s1"]
    assert not old_root.exists()
    again.close()


def test_rose_init_tells_the_learner_where_the_queued_sessions_wait_now(tmp_path: Path) -> None:
    from rose.learn import jobs
    from tests.conftest import run_rose_here

    repo, layers, personal = _personal_store_with_a_setting(tmp_path)
    jobs.enqueue(personal, jobs.Job(jobs.JobKind.SESSION_END, "s1", str(tmp_path / "t.jsonl"), "claude", str(repo)))
    jobs.mark_pending(personal)   # what the SessionEnd hook's request_learning leaves for the learner
    layers.close()
    assert run_rose_here("init", cwd=repo).returncode == 0
    assert jobs.pending_roots() == [(repo / ".rose").resolve()]


def test_rose_init_keeps_the_personal_settings_where_the_repository_has_its_own(tmp_path: Path) -> None:
    repo, layers, personal = _personal_store_with_a_setting(tmp_path)
    mine = personal.config_path.read_bytes()
    (repo / ".rose").mkdir()
    (repo / ".rose" / "config.yaml").write_text("recall:\n  max_lessons: 3\n", encoding="utf-8")   # committed
    layers.init_project()
    assert personal.config_path.read_bytes() == mine   # not thrown away: left where it was
    assert (repo / ".rose" / "config.yaml").read_text(encoding="utf-8") == "recall:\n  max_lessons: 3\n"
    layers.close()


def test_text_that_is_no_time_never_becomes_the_latest_use() -> None:
    state = usage.new_state()
    for rid, stamp in (("r1", "2026-05-01T10:00:00Z"), ("r2", "zzzz-not-a-time"), ("r3", "2026-06-01T10:00:00Z")):
        usage.fold(state, {"rid": rid, "at": stamp if rid != "r2" else "", "max": {"last_used": stamp}})
    assert state["max"]["last_used"] == "2026-06-01T10:00:00Z"
