"""The tokenizer rules' table (rose.embed.bpe_table): the very ids the library gives, read from a small SQLite file
instead of the 1.8 MB config; any table that is stale, foreign, a link or not a table is passed over and made again."""
from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

from rose.embed import bpe_table
from rose.embed.bpe import Rules
from tests.test_embed_cold import _texts


@pytest.fixture
def config(tmp_path: Path, monkeypatch) -> Path:
    from rose.embed.static import TOKENIZER, _package_dir, available

    if not available():
        pytest.skip("wordllama is not installed")
    monkeypatch.setenv("ROSE_HOME", str(tmp_path / "home"))
    copy = tmp_path / "tokenizer.json"
    shutil.copyfile(_package_dir() / TOKENIZER, copy)
    return copy


def _from_table(monkeypatch) -> None:
    """From here on, reading the config itself fails the test: the rules must come from the table."""
    monkeypatch.setattr(Rules, "load", classmethod(lambda cls, path: pytest.fail("the config was read")))


def test_the_tables_rules_give_the_librarys_ids(config: Path, monkeypatch) -> None:
    from tokenizers import Tokenizer

    made = bpe_table.load(config)                      # read from the config, and the table made
    assert made is not None and bpe_table.table_path(config).exists()
    _from_table(monkeypatch)
    rules = bpe_table.load(config)
    assert rules is not None and not isinstance(rules.vocab, dict)
    library = Tokenizer.from_str(config.read_text(encoding="utf-8"))
    library.no_truncation()
    rng = random.Random(3)
    texts = _texts() + ["<s>x</s>", "a<unk>b<s><s>", "</s", "<s", "▁▁ ▁", "\u2581leading", "x" * 3000,
                        " ".join(rng.choice(["deploy", "the", "cache", "ünïcödé", "🚀"]) for _ in range(300))]
    assert [rules.encode(t) for t in texts] == [e.ids for e in library.encode_batch(texts, add_special_tokens=False)]
    assert [made.encode(t) for t in texts[:50]] == [rules.encode(t) for t in texts[:50]]
    st = bpe_table.table_path(config).stat()
    assert st.st_mode & 0o777 == 0o600 and (bpe_table.table_path(config).parent.stat().st_mode & 0o777) == 0o700


def _spoil(path: Path, how: str, config: Path) -> None:
    if how == "stale":
        os.utime(config, ns=(1, 1))                     # another config (its mtime): the table names the old one
    elif how == "mode":
        os.chmod(path, 0o644)
    elif how == "symlink":
        elsewhere = path.with_name("elsewhere.db")
        os.replace(path, elsewhere)
        path.symlink_to(elsewhere)
    elif how == "garbage":
        path.write_bytes(b"not a table at all" * 100)
    elif how == "empty":
        path.write_bytes(b"")
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["stale", "mode", "symlink", "garbage", "empty"])
def test_a_stale_or_foreign_table_is_passed_over_and_made_again(config: Path, monkeypatch, how: str) -> None:
    path = bpe_table.table_path(config)
    truth = bpe_table.load(config).encode("redis cache ttl, naïve 🚀")
    _spoil(path, how, config)
    read = []
    real = Rules.load.__func__
    monkeypatch.setattr(Rules, "load", classmethod(lambda cls, p: read.append(p) or real(cls, p)))
    assert bpe_table.load(config).encode("redis cache ttl, naïve 🚀") == truth
    assert read == [config]                             # the config was read ...
    assert not path.is_symlink() and path.stat().st_mode & 0o777 == 0o600
    _from_table(monkeypatch)
    assert bpe_table.load(config).encode("redis cache ttl, naïve 🚀") == truth   # ... and the table made again


def test_a_config_the_rules_do_not_follow_makes_no_table(config: Path) -> None:
    data = json.loads(config.read_text(encoding="utf-8"))
    data["normalizer"] = {"type": "NFKC"}
    config.write_text(json.dumps(data), encoding="utf-8")
    assert bpe_table.load(config) is None and not bpe_table.table_path(config).exists()


def test_an_unwritable_home_still_tokenizes(config: Path, tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    monkeypatch.setenv("ROSE_HOME", str(blocker / "home"))   # its cache/ cannot be made under a file
    rules = bpe_table.load(config)
    assert rules is not None and rules.encode("cache") == Rules.load(config).encode("cache")


def test_a_table_that_breaks_after_it_opened_is_answered_from_the_config(config: Path) -> None:
    truth = bpe_table.load(config).encode("redis cache ttl, naïve 🚀")
    rules = bpe_table.load(config)                      # opened from the table
    assert not isinstance(rules.vocab, dict)
    path = bpe_table.table_path(config)
    size = path.stat().st_size
    with open(path, "r+b") as f:                        # every page after the first torn, in place
        f.seek(4096)
        f.write(b"\xff" * (size - 4096))
    assert rules.encode("redis cache ttl, naïve 🚀") == truth
    assert not path.exists()                            # removed: the next process makes it again
    assert bpe_table.load(config).encode("redis cache ttl, naïve 🚀") == truth and path.exists()


def test_a_process_that_makes_no_tables_reads_the_config_and_leaves_none(config: Path, monkeypatch) -> None:
    """The warm helper (bpe_table.MAKES_TABLES off) keeps its rules in memory; the next command makes the table."""
    monkeypatch.setattr(bpe_table, "MAKES_TABLES", False)
    rules = bpe_table.load(config)
    assert rules is not None and isinstance(rules.vocab, dict)    # read from the config itself
    assert not bpe_table.table_path(config).exists()
    monkeypatch.setattr(bpe_table, "MAKES_TABLES", True)
    assert bpe_table.load(config) is not None and bpe_table.table_path(config).exists()
