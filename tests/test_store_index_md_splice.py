"""index.md after bulk saves: each save_many splices its batch's lines in (never a rewrite of the whole file), the
result is byte for byte what the full rewrite writes, and a process killed between a write's commit and index.md
leaves a debt the next sync pays (files and index are the truth; index.md is made from them)."""
from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest

from rose.model import Node, Scope, Status
from rose.store import Layers, Store
from rose.store.store import _FIND_EACH, _without_lines_of
from tests.support.index_md import full_rewrite

# the last two are a hand-made file's: index.md shows their control characters as escapes, which sorts them elsewhere
# than the index's own order does ("a\x1bz" before "a b", "a\\u001bz" after it)
FAMILIES = ["b", "a", "zz", "a b", "ünï", "a-b", "a\x1bz", "\u202eb"]




def _node(store: Store, rng: random.Random, i: int) -> Node:
    return Node(id=store.new_id(), family=rng.choice(FAMILIES), title=f"t|{i}\x1b[2J\nx", body=f"body {i}",
                gist=f"g | {i}", tags=["x", "y"], level=rng.choice([0, 1, 2]))


def test_batches_splice_index_md_to_exactly_the_full_rewrite(layers: Layers, monkeypatch) -> None:
    store = layers.project
    rng = random.Random(5)
    whole: list[int] = []
    orig = Store._write_index_md
    monkeypatch.setattr(Store, "_write_index_md", lambda self: (whole.append(1), orig(self))[1])

    nodes = [_node(store, rng, i) for i in range(300)]
    for start in range(0, 300, 60):          # batches past _FIND_EACH: the split path
        store.save_many(nodes[start:start + 60])
        assert whole == [] and store.index_md_path.read_bytes() == full_rewrite(store)
        whole.clear()
    small = [_node(store, rng, 1000 + i) for i in range(_FIND_EACH)]
    store.save_many(small)                   # a batch of at most _FIND_EACH: each id found on its own
    assert whole == [] and store.index_md_path.read_bytes() == full_rewrite(store)
    whole.clear()

    again = rng.sample(nodes, 80)            # new families, levels and titles for lessons already listed
    for node in again:
        node.family, node.level, node.title = rng.choice(FAMILIES), rng.choice([0, 1, 2]), f"retitled {node.id}"
    again[0].status = Status.ARCHIVED        # a cold lesson has no line
    store.save_many(again + [_node(store, rng, 2000 + i) for i in range(30)])
    assert whole == []                       # every batch spliced, none written whole
    text = store.index_md_path.read_bytes()
    assert text == full_rewrite(store)
    assert f"\n{again[0].id} | ".encode() not in text
    assert all(text.count(f"\n{n.id} | ".encode()) == 1 for n in again[1:])


@pytest.mark.parametrize("size", [3, _FIND_EACH + 5])
def test_every_line_of_a_saved_id_goes_even_duplicates_a_hand_edit_left(layers: Layers, size: int) -> None:
    store = layers.project
    rng = random.Random(size)
    nodes = [_node(store, rng, i) for i in range(40)]
    store.save_many(nodes)
    data = store.index_md_path.read_bytes()
    victim = nodes[11]
    stray = f"{victim.id} | {victim.family} | L{victim.level} | stale | x | y | nodes/x.md\n".encode()
    head_end = data.index(b"\n\n") + 2
    store.index_md_path.write_bytes(data[:head_end] + stray + data[head_end:] + stray)   # out of order, twice
    batch = [victim] + rng.sample([n for n in nodes if n is not victim], size - 1)
    for node in batch:
        node.title = f"new {node.id}"
    store.save_many(batch)
    text = store.index_md_path.read_bytes()
    assert b"stale" not in text and text.count(f"\n{victim.id} | ".encode()) == 1
    assert text == full_rewrite(store)


def test_removing_lines_finds_the_same_with_either_method() -> None:
    rng = random.Random(9)
    head = b"# h\n\n"
    ids = [f"n_{i:04x}".encode() for i in range(60)]
    lines = [rng.choice(ids) + rng.choice([b" | a | L0 | t", b" |x", b"  | y", b"| z", b" | "]) for _ in range(400)]
    lines += [b"", b"n_0001", b"x n_0002 | q", b"n_00011 | q"]
    rng.shuffle(lines)
    data = head + b"\n".join(lines) + b"\n"
    for k in (1, 3, _FIND_EACH):
        wanted = set(rng.sample(ids, k))
        by_find = _without_lines_of(data, len(head), wanted)
        by_split = _without_lines_of(data, len(head), wanted | {b"absent_%d" % i for i in range(_FIND_EACH)})
        expected = head + b"".join(ln + b"\n" for ln in lines if ln.partition(b" | ")[0] not in wanted)
        assert by_find == by_split == expected


KILLED = """
import os, signal, sys
from pathlib import Path
from rose.model import Node, Scope
from rose.store import Store
from rose.store import store as store_module

# kill -9 right after the batch's commit, before index.md is touched (no timing involved)
store_module.Store._update_index_md = lambda self, ids, whole=False: os.kill(os.getpid(), signal.SIGKILL)
store = Store(Path(sys.argv[1]), Scope.PROJECT)
nodes = [Node(id=f"n_{i:06x}", family=f"f{i % 3}", title=f"lesson {i}", body=f"body {i}", gist="g") for i in range(50)]
if sys.argv[2] == "many":
    store.save_many(nodes)
else:
    store.save(nodes[0])
"""


@pytest.mark.parametrize("how", ["many", "one"])
def test_killed_between_the_commit_and_index_md_the_next_sync_writes_it(layers: Layers, how: str) -> None:
    store = layers.project
    root = store.root
    store.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", KILLED, str(root), how], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()
    before = (root / "index.md").read_text(encoding="utf-8")
    assert "n_000000 | " not in before                   # the kill came before index.md
    fresh = Store(root, Scope.PROJECT)
    assert fresh.index.count() == (50 if how == "many" else 1)   # the lessons and their rows are committed
    assert fresh.index.index_md_owed()
    report = fresh.sync()
    assert not report.changed                              # nothing for the index to catch up: the debt alone
    text = fresh.index_md_path.read_bytes()
    assert text == full_rewrite(fresh) and b"\nn_000000 | " in text
    assert not fresh.index.index_md_owed()
    fresh.close()


def test_each_write_pays_its_debt_and_a_write_that_finds_one_writes_whole(layers: Layers) -> None:
    store = layers.project
    rng = random.Random(2)
    nodes = [_node(store, rng, i) for i in range(20)]
    store.save_many(nodes)
    assert not store.index.index_md_owed()
    store.save(_node(store, rng, 99))
    store.update(nodes[0].id, lambda n: setattr(n, "title", "changed"))
    store.archive([nodes[1].id], "old")
    store.restore([nodes[1].id])
    store.delete(nodes[2].id)
    assert not store.index.index_md_owed()
    assert store.index_md_path.read_bytes() == full_rewrite(store)

    # an index.md that lost a line (a killed write's) with the debt recorded: the next save writes it whole
    data = store.index_md_path.read_bytes()
    lost = f"\n{nodes[3].id} | ".encode()
    at = data.index(lost)
    store.index_md_path.write_bytes(data[:at + 1] + data[data.index(b"\n", at + 1) + 1:])
    store.index.owe_index_md()
    store.save(_node(store, rng, 100))
    assert store.index_md_path.read_bytes() == full_rewrite(store) and lost in store.index_md_path.read_bytes()


SYNC_KILLED = """
import os, signal, sys
from pathlib import Path
from rose.model import Scope
from rose.store import Store
from rose.store import store as store_module

# kill -9 after the sync's commit, before index.md is written
store_module.Store._write_index_md = lambda self: os.kill(os.getpid(), signal.SIGKILL)
Store(Path(sys.argv[1]), Scope.PROJECT).sync()
"""


def test_a_sync_killed_before_index_md_leaves_the_debt_too(layers: Layers) -> None:
    store = layers.project
    rng = random.Random(4)
    store.save_many([_node(store, rng, i) for i in range(10)])
    other = Store(store.root, Scope.PROJECT)   # a lesson file written by hand: a sync catches it up
    hand = _node(other, rng, 50)
    from rose.store.frontmatter import render_node
    path = store.nodes_dir / "hand" / f"{hand.id}.md"
    path.parent.mkdir()
    hand.family = "hand"
    path.write_text(render_node(hand), encoding="utf-8")
    other.close()
    store.close()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, "-c", SYNC_KILLED, str(store.root)], env=env, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()
    assert f"\n{hand.id} | ".encode() not in store.index_md_path.read_bytes()
    fresh = Store(store.root, Scope.PROJECT)
    assert not fresh.sync().changed                       # the row is in; only the debt says index.md lacks it
    assert f"\n{hand.id} | ".encode() in fresh.index_md_path.read_bytes()
    assert fresh.index_md_path.read_bytes() == full_rewrite(fresh)
    fresh.close()


def test_an_index_md_that_is_a_link_to_another_stores_is_replaced_never_read(layers: Layers) -> None:
    """A repository's .rose/index.md linked to the user's global catalogue (the same header) must not have that
    catalogue's lines copied into the project's file: the link is replaced by the whole rewrite, the target kept."""
    glob, project = layers.writable(Scope.GLOBAL), layers.project
    glob.save(Node(id=glob.new_id(), family="private", title="my private global lesson", body="b", gist="g"))
    target = glob.index_md_path.read_bytes()
    assert b"my private global lesson" in target
    project.save(Node(id=project.new_id(), family="f", title="project lesson one", body="b", gist="g"))
    project.index_md_path.unlink()
    project.index_md_path.symlink_to(glob.index_md_path)
    project.save(Node(id=project.new_id(), family="f", title="project lesson two", body="b", gist="g"))
    assert not project.index_md_path.is_symlink()
    written = project.index_md_path.read_bytes()
    assert b"my private global lesson" not in written
    assert b"project lesson one" in written and b"project lesson two" in written
    assert written == full_rewrite(project)
    assert glob.index_md_path.read_bytes() == target
