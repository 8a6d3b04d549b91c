"""`rose tree` draws delta manifests and trials from the index (no lesson file parsed), exactly as the files and
the usage log say them together, and still reads the file of a row indexed before the index kept manifests."""
from __future__ import annotations

from rose import report
from rose.model import Claim, ClaimKind, Node, Trial
from rose.store import Layers


def _from_files(layers: Layers) -> dict[str, tuple]:
    store = layers.project
    out = {}
    for row in store.rows():
        node = store.get(row.id)
        out[row.id] = ([c.to_dict() for c in node.dropped], [t.to_dict() for t in node.trials],
                       node.heldout_passed, node.heldout_total, len(node.gaps))
    return out


def _drawn(layers: Layers) -> dict[str, tuple]:
    return {line.id: (line.dropped, line.trials, line.heldout_passed, line.heldout_total, line.gaps)
            for line in report.tree(layers) if not line.repeat}


def test_tree_manifests_come_from_the_index_and_follow_the_usage_log(layers: Layers, monkeypatch) -> None:
    store = layers.project
    leaf = Node(id=store.new_id(), family="db", title="Port 5433", body="The test db listens on 5433.")
    top = Node(id=store.new_id(), family="db", title="Test db", body="Use the test db.", level=1,
               derived_from=[leaf.id],
               dropped=[Claim("port 5433", ClaimKind.PARAMETER, holder=leaf.id),
                        Claim("port 5433", ClaimKind.PARAMETER, holder=leaf.id)],   # equal claims, told apart
               trials=[Trial(episode="e_1", attached=["port 5433"], claims=["port 5433"])],
               heldout_passed=2, heldout_total=3, gaps=["which host"])
    leaf.parents = [top.id]
    store.save_many([leaf, top])
    store.update(top.id, lambda n: (setattr(n.dropped[1], "rescues", 2), setattr(n.dropped[0], "attempts", 4),
                                    setattr(n.trials[0], "idle", 1)))
    expected = _from_files(layers)
    assert expected[top.id][0][1]["rescues"] == 2 and expected[top.id][1][0]["idle"] == 1
    reads = []
    original = store.read_node_file
    monkeypatch.setattr(store, "read_node_file", lambda path: reads.append(path) or original(path))
    drawn = _drawn(layers)
    assert reads == []   # nothing parsed
    assert drawn[top.id] == expected[top.id]
    assert drawn[leaf.id] == ([], [], 0, 0, 0)


def test_a_row_indexed_before_manifests_were_kept_is_drawn_from_its_file(layers: Layers) -> None:
    store = layers.project
    top = Node(id=store.new_id(), family="db", title="Test db", body="Use the test db.", level=1,
               dropped=[Claim("port 5433", ClaimKind.PARAMETER, holder="n_gone1")])
    store.save(top)
    with store.index.conn:
        store.index.conn.execute("UPDATE nodes SET manifest = ''")
    assert _drawn(layers)[top.id][0] == _from_files(layers)[top.id][0]
