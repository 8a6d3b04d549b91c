"""Recurrence review opens the stores of other projects the learner has worked in (a registry in the user's own
cache) and archives their instances of a rule it promotes. Those stores were checked when they were found, but a
repository changes after that (a pull brings a link): a store that now holds a link where rose writes, or that
another user owns, is left out of the review like any store discovery refuses, so no archive move lands where a
link points."""
from __future__ import annotations

import shutil
from pathlib import Path

from rose.retention import maintain as m
from tests.retention.test_recurrence import _judge, _projects


def test_a_registered_store_that_now_holds_a_link_is_never_written(tmp_path: Path) -> None:
    api, _web, cli = _projects(tmp_path)
    outside = tmp_path / "outside"       # where a link the repository pulled in points: the user's own folder
    outside.mkdir()
    archive = api.project.archive_dir
    shutil.rmtree(archive, ignore_errors=True)
    archive.symlink_to(outside)
    judge, _backend = _judge(True)
    m.maintain(cli, judge, touched=["n_rule02"])
    assert sorted(outside.rglob("*")) == [], "an archive move went through the repository's link"
    assert any(api.project.nodes_dir.rglob("n_rule00.md"))   # its lesson stays where it was



def test_the_learner_leaves_a_queued_store_that_now_holds_a_link_alone(tmp_path: Path, monkeypatch) -> None:
    """Work queued in a repository that then pulled in a link: the detached learner neither runs nor fails its jobs
    (a failure would count towards setting them aside); they wait, untouched, until the store is sound again."""
    from rose.learn import jobs
    from rose.learn.learner import serve_pending
    from rose.model import Scope
    from rose.store import Store

    repo = tmp_path / "repo"
    store = Store.create(repo / ".rose", Scope.PROJECT)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    jobs.enqueue(store, jobs.Job(jobs.JobKind.SESSION_END, "s-linked", str(transcript), "claude", str(repo)))
    jobs.mark_pending(store)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".rose" / "archive").symlink_to(elsewhere)          # what a later pull brought
    monkeypatch.setenv("ROSE_AGENT_BACKEND", "none")
    assert serve_pending(None) == 0
    [(_path, job)] = jobs.queued(store)
    assert job.attempts == 0 and job.last_error == ""          # neither run nor counted as a failure
    assert list(elsewhere.iterdir()) == [] and jobs.pending_roots() == []
