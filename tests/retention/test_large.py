"""The maintenance pass on a generated store of 10,000 lessons: bounded (one pass moves at most its limit, in
seconds), atomic (every record is at exactly one path, byte for byte what it was), and interrupted by kill -9 at
random points without loss; the passes that follow converge under the soft watermark, the catalog agrees with the
folder, and a rebuilt index knows what is cold."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from rose.model import Node, Scope, Stats
from rose.retention import maintain as m
from rose.retention import rules
from rose.store import Layers, Store, archive, usage
from rose.store.frontmatter import render_node

N = 10_000
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
PASS = """
import os, signal, sys
from datetime import datetime, timezone
from pathlib import Path
import rose.store.store as store_module
from rose.retention.maintain import maintain
from rose.store import Layers

# kill -9 at a chosen point of the pass: just before, or just after, the k-th rename (no timing involved)
k, when = int(sys.argv[2]), sys.argv[3]
real, seen = store_module.move_file, [0]

def move_file(source, dest, **kwargs):
    seen[0] += 1
    if seen[0] == k and when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    real(source, dest, **kwargs)
    if seen[0] == k and when == "after":
        os.kill(os.getpid(), signal.SIGKILL)

store_module.move_file = move_file
layers = Layers.discover(Path(sys.argv[1]))
while True:
    report = maintain(layers, now=datetime(2026, 6, 1, tzinfo=timezone.utc))
    if not report.moves:
        break
print("done", flush=True)
"""

def _generate(root: Path) -> dict[str, bytes]:
    """10,000 lessons in 50 families, written as files (the index is built from them, as after a clone)."""
    rng = random.Random(10_000)
    words = [f"w{i}" for i in range(3000)]
    files: dict[str, bytes] = {}
    for i in range(N):
        created = NOW - timedelta(days=rng.uniform(0, 60))
        node = Node(id=f"n_big{i:05d}", family=f"fam{i % 50:02d}", title=f"Lesson {i} " + " ".join(rng.sample(words, 3)),
                    body=" ".join(rng.sample(words, rng.randint(25, 60))), importance=round(rng.uniform(0.45, 1.0), 2),
                    confidence=rng.choice((0.6, 0.9)), created=created.isoformat().replace("+00:00", "Z"),
                    stats=Stats())
        rel = f"nodes/{node.family}/{node.id}.md"
        data = render_node(node, usage.meaning(node)).encode("utf-8")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        files[node.id] = data
    return files


def _where(store: Store) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for folder in store.record_dirs:
        if folder.is_dir():
            for p in folder.rglob("*.md"):
                out.setdefault(p.stem, []).append(p)
    return out


def _check_nothing_lost(store: Store, originals: dict[str, bytes]) -> None:
    where = _where(store)
    assert set(where) == set(originals), "a record is missing, or one appeared from nowhere"
    doubled = [i for i, paths in where.items() if len(paths) != 1]
    assert not doubled, f"records at two paths at once: {doubled[:5]}"
    changed = [i for i, [p] in where.items() if p.read_bytes() != originals[i]]
    assert not changed, f"a move changed a record's bytes: {changed[:5]}"
    leftovers = [p for folder in store.record_dirs if folder.is_dir() for p in folder.rglob("*.tmp")]
    assert not leftovers


@pytest.mark.slow
def test_ten_thousand_lessons_bounded_atomic_and_killed_without_loss(layers: Layers, tmp_path: Path) -> None:
    store = layers.project
    originals = _generate(store.root)
    store.sync()
    assert store.index.count() == N
    total = sum(t for _s, _m, _h, t, _c, _ct in store.index.buckets())
    marks = rules.watermarks("project", "lesson")
    assert total > 10 * marks.hard                         # far over: many passes of work

    # bounded: one pass moves at most its limit (how long that takes is bench/bench_retention.py's to measure, not a
    # test's: these machines are shared), and leaves every record whole
    first = m.maintain(layers, now=NOW)
    assert first.moves == m.MAX_MOVES_PER_PASS and first.archived == {"budget": m.MAX_MOVES_PER_PASS}
    assert "move limit" in first.over[0]
    _check_nothing_lost(store, originals)
    store.close()

    # atomic under kill -9: passes in another process, killed at random points (just before or just after a rename
    # chosen at random), again and again
    rng = random.Random(9)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    kills = 0
    for _ in range(6):
        k, when = rng.randint(2, 1200), rng.choice(["before", "after"])
        cold_before = sum(1 for paths in _where(store).values() for p in paths if "archive" in p.parts)
        child = subprocess.run([sys.executable, "-c", PASS, str(layers.cwd), str(k), when], env=env,
                               capture_output=True, text=True, timeout=600)
        assert child.returncode == -signal.SIGKILL, child.stderr   # the work left always holds k more moves
        kills += 1
        fresh = Store(store.root, Scope.PROJECT)
        _check_nothing_lost(fresh, originals)
        fresh.close()
        cold_now = sum(1 for paths in _where(store).values() for p in paths if "archive" in p.parts)
        assert cold_now == cold_before + k - (when == "before")    # killed in the middle of moving, every time
    assert kills == 6

    # the passes that follow finish the work and repair what a kill left behind
    after = Layers.discover(layers.cwd)
    for _ in range(10):
        if not m.maintain(after, now=NOW).moves:
            break
    project = after.project
    _check_nothing_lost(project, originals)
    hot = sum(t for _s, _m, _h, t, _c, _ct in project.index.buckets())
    assert hot <= marks.soft
    cold = {r.id for r in project.rows() if r.cold}
    assert len(cold) > N * 0.9
    assert set(archive.read(project.catalog_path)) == cold          # the catalog lists exactly the archive
    project.index_db_path.unlink()
    rebuilt = Store(project.root, Scope.PROJECT)
    rebuilt.rebuild_index()
    assert {r.id for r in rebuilt.rows() if r.cold} == cold          # the folder alone says what is cold
    assert rebuilt.index.servable_totals()[0] == N - len(cold)
    rebuilt.close()
    after.close()
