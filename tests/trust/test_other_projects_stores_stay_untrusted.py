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

