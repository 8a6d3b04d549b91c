"""`rose demo`: the whole story runs offline in seconds, through the real hooks, and leaves nothing behind."""
from __future__ import annotations

import io
import os
import re
import shutil
import time
from pathlib import Path

import rose.learn.jobs as jobs
from rose import model
from rose.demo import run_demo


def test_the_demo_tells_the_whole_story_and_cleans_up(isolated_home: Path) -> None:
    home_before = os.environ["ROSE_HOME"]
    spawn, hexes = jobs.request_learning, model._random_hex
    out = io.StringIO()
    cpu_before = time.process_time()
    assert run_demo(True, out) == 0
    cpu = time.process_time() - cpu_before  # it runs in this process; unlike wall time, its CPU time ignores load
    text = out.getvalue()
    kept = Path(re.search(r"store kept at (\S+)", text).group(1))
    try:
        for expected in ("⋯ ROSE · 3 lessons", "rejected: under-reported", "compressed", "replays passed",
                         "held-out", "descent on", "under trial after a failure", "rescue:", "sticky patch rescued",
                         "repair: folded", "knowledge gap", "merged", "the token curve", "compression "):
            assert expected in text, expected
        assert kept.is_dir() and (kept / "nodes").is_dir()
        assert str(kept).startswith(str(Path(kept).anchor)) and not str(kept).startswith(str(isolated_home))
    finally:
        shutil.rmtree(kept.parent.parent, ignore_errors=True)
    assert cpu < 30                                                 # "in seconds" of work, on any machine
    assert os.environ["ROSE_HOME"] == home_before                   # the user's stores were never pointed at
    assert not (isolated_home / ".rose").exists()
    assert jobs.request_learning is spawn and model._random_hex is hexes


def test_the_demo_removes_its_folder_by_default(tmp_path: Path, monkeypatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert run_demo(False, io.StringIO()) == 0
    assert list(tmp_path.glob("rose-demo-*")) == []
