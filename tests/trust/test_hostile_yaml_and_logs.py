"""A repository's committed .rose/ cannot make rose expand YAML aliases (a few hundred bytes standing for billions
of values) or write its learner log through a link or block on a FIFO there."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rose.config import read_overrides
from rose.errors import ConfigError
from rose.learn import jobs
from rose.model import Scope
from rose.store.frontmatter import load_yaml, split_frontmatter
from rose.store.store import Store

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))


def test_yaml_aliases_are_refused_in_every_reader() -> None:
    for text in (LAUGHS, "recall: &a [*a]\n", "x: &t hi\ny: *t\n"):
        with pytest.raises(Exception, match="alias"):
            load_yaml(text)
    with pytest.raises(ValueError, match="alias"):
        split_frontmatter(f"---\nid: n_bomb01\ntitle: t\nfamily: f\n{LAUGHS}tags: *i\n---\nbody\n")
    assert load_yaml("a: '*not an alias*'\nb: x * y\n") == {"a": "*not an alias*", "b": "x * y"}


def test_a_config_of_aliases_is_an_unreadable_file_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(LAUGHS, encoding="utf-8")
    with pytest.raises(ConfigError, match="alias"):
        read_overrides(path)


def test_a_lesson_of_aliases_is_a_corrupt_file_skipped_and_the_rest_indexed(tmp_path: Path) -> None:
    store = Store.create(tmp_path / ".rose", Scope.PROJECT)
    (store.root / "nodes" / "deploy").mkdir(parents=True)
    (store.root / "nodes" / "deploy" / "n_bomb01.md").write_text(
        f"---\nid: n_bomb01\nfamily: deploy\ntitle: bomb\n{LAUGHS}tags: *i\n---\nbody\n", encoding="utf-8")
    (store.root / "nodes" / "deploy" / "n_good01.md").write_text(
        "---\nid: n_good01\nfamily: deploy\ntitle: good\n---\nfine\n", encoding="utf-8")
    report = store.index.sync(store.record_dirs, store._parse_for_index)
    assert store.has("n_good01") and not store.has("n_bomb01")
    assert any("alias" in reason for _rel, reason in report.problems)


def test_the_learner_log_is_never_written_through_a_link_nor_blocked_by_a_fifo(tmp_path: Path) -> None:
    store = Store.create(tmp_path / ".rose", Scope.PROJECT)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine\n", encoding="utf-8")
    store.logs_dir.mkdir(parents=True, exist_ok=True)
    log = store.logs_dir / "learner.log"
    log.symlink_to(victim)
    jobs.log_line(store, "a line")
    assert victim.read_text(encoding="utf-8") == "mine\n"
    log.unlink()
    os.mkfifo(log)   # no reader: an open for writing would wait forever without O_NONBLOCK (it fails at once)
    jobs.log_line(store, "a line")
    log.unlink()
    store.logs_dir.rmdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    store.logs_dir.symlink_to(outside)
    jobs.log_line(store, "a line")
    assert list(outside.iterdir()) == []
    store.logs_dir.unlink()
    jobs.log_line(store, "a line")
    assert "a line" in log.read_text(encoding="utf-8")


def test_rose_writes_no_alias_for_a_value_it_holds_twice() -> None:
    from rose.store.frontmatter import dump_yaml

    shared = ["a very long value " * 8, {"k": "v"}]
    text = dump_yaml({"one": shared, "two": shared})
    assert "*" not in text and load_yaml(text) == {"one": shared, "two": shared}
