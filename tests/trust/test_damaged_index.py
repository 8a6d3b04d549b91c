"""index.db is derived from the lesson files: a damaged page inside it (a disk fault, a killed copy, a file synced
half-way) is discarded and built again from the files, wherever the damage is first met, instead of failing every
prompt and every command until the user deletes it by hand. One damaged store never stops the other serving."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from rose.model import Scope
from rose.store import Layers, Store, global_root
from rose.store.index import Index, damaged
from rose.store.paths import local_root
from tests.conftest import run_rose, run_rose_here
from tests.support.damage import damage_lessons_table as _damage_lessons_table


def _two_stores(project: Path) -> tuple[Path, Path]:
    run_rose_here("init", cwd=project)
    assert run_rose_here("add", "Always tag releases with the date.", "--title", "Release tags",
                         cwd=project).returncode == 0
    assert run_rose_here("add", "Tag every release with ripgrep's version too.", "--title", "Release ripgrep",
                         "--scope", "global", cwd=project).returncode == 0
    return local_root(project / ".rose") / "index.db", global_root() / "index.db"


def _prompt(project: Path, text: str) -> dict:
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": text})
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _damage_is_met(db: Path) -> None:
    index = Index(db.parent, db)
    try:
        with pytest.raises(sqlite3.DatabaseError) as met:
            index.conn.execute("SELECT count(*), sum(length(title)) FROM nodes").fetchone()
        assert damaged(met.value)
    finally:
        index.close()


@pytest.mark.parametrize("which", ["project", "global"])
def test_the_first_prompt_after_damage_is_served_from_both_stores(project: Path, which: str) -> None:
    project_db, global_db = _two_stores(project)
    damaged_db = project_db if which == "project" else global_db
    _damage_lessons_table(damaged_db)
    _damage_is_met(damaged_db)   # the damage is real, and not met by opening the file

    out = _prompt(project, "how do we tag releases")
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Always tag releases with the date." in context and "ripgrep's version" in context
    assert "failed" not in out["systemMessage"]
    conn = sqlite3.connect(damaged_db)   # a new index, whole, made from the files
    assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM nodes").fetchone() == (1,)
    conn.close()
    events = (damaged_db.parent / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert any(json.loads(line).get("discarded") == "damaged" for line in events)


def test_a_command_that_meets_damage_says_so_and_the_next_one_works(project: Path) -> None:
    project_db, _global_db = _two_stores(project)
    _damage_lessons_table(project_db)
    first = run_rose_here("list", cwd=project)
    assert first.returncode == 1
    assert "internal error" not in first.stderr
    assert str(project_db) in first.stderr and "run the command again" in first.stderr.lower()
    again = run_rose_here("list", cwd=project)
    assert again.returncode == 0, again.stderr
    assert "Release tags" in again.stdout and "Release ripgrep" in again.stdout
    assert list((project / ".rose" / "nodes").rglob("*.md"))   # the lesson files were never touched


def test_doctor_names_a_damaged_index_and_rebuild_repairs_it(project: Path) -> None:
    project_db, _global_db = _two_stores(project)
    _damage_lessons_table(project_db)
    doctor = run_rose_here("doctor", cwd=project)
    line = next(line for line in doctor.stdout.splitlines() if "project store" in line)
    assert line.startswith("[FAIL]") and "rose index --rebuild" in line
    rebuilt = run_rose_here("index", "--rebuild", cwd=project)
    assert rebuilt.returncode == 0, rebuilt.stderr
    listed = run_rose_here("list", cwd=project)
    assert listed.returncode == 0 and "Release tags" in listed.stdout
    doctor = run_rose_here("doctor", cwd=project)
    assert next(line for line in doctor.stdout.splitlines() if "project store" in line).startswith("[ok")


def test_the_learner_discards_a_damaged_index_so_its_retry_can_work(project: Path) -> None:
    from rose.learn.jobs import Job, JobKind
    from rose.learn.learner import _healed

    project_db, _global_db = _two_stores(project)
    _damage_lessons_table(project_db)
    store = Layers.discover(project).owner()
    job = Job(JobKind.SESSION_END, "s1", str(project / "missing.jsonl"), "claude", str(project))
    with pytest.raises(sqlite3.DatabaseError) as met:
        store.index.conn.execute("SELECT sum(length(title)) FROM nodes").fetchone()
    assert str(project_db) in _healed(store, job, met.value)
    assert _healed(store, job, sqlite3.OperationalError("database is locked")) == ""
    store.close()
    assert Store(project / ".rose", Scope.PROJECT).index.intact()


def test_only_damage_counts_as_damage() -> None:
    assert not damaged(sqlite3.OperationalError("database is locked"))
    assert not damaged(sqlite3.IntegrityError("UNIQUE constraint failed: nodes.id"))
    assert not damaged(ValueError("database disk image is malformed"))
    conn = sqlite3.connect(":memory:")
    with pytest.raises(sqlite3.OperationalError) as syntax:
        conn.execute("SELEC 1")
    assert not damaged(syntax.value)


def test_a_file_another_process_already_replaced_is_not_discarded_again(tmp_path: Path) -> None:
    store = Store.create(tmp_path / ".rose", Scope.PROJECT)
    first = Index(store.root, store.index_db_path)
    first.conn.execute("SELECT 1").fetchone()
    other = Index(store.root, store.index_db_path)
    other.discard()                                  # another process threw the file away first ...
    other.conn.execute("SELECT count(*) FROM nodes").fetchone()   # ... and made the new one
    made = store.index_db_path.stat().st_ino
    first.discard()                                  # this process's connection was to the old file
    assert store.index_db_path.stat().st_ino == made
    other.close()
    first.close()
