"""Inside the warm helper, the periodic full scan of a store's unchanged folders (one stat per lesson file, 0.5 s of
CPU at 50,000 lessons) runs in the helper's background, never inside a prompt; outside it, the prompt does it."""
from __future__ import annotations

from rose.config import Settings
from rose.model import Node
from rose.recall import recall
from rose.store import Layers, Store
from rose.warm import client, server
from tests.support.waits import wait_until


def _edited_in_place(layers: Layers) -> Store:
    store = layers.project
    node = Node(id=store.new_id(), family="f", title="Retry policy", body="Back off and retry the upload.")
    store.save(node)
    store.sync()   # a full scan: the index holds the file as it is
    path = store.root / str(store.index.path_of(node.id))
    path.write_text(path.read_text(encoding="utf-8").replace("Back off", "Zeppelin: back off"), encoding="utf-8")
    # the periodic scan is due (its interval passed); the folders are unchanged, as an in-place edit leaves them
    store.index.conn.execute("UPDATE meta SET value = '0' WHERE key = 'full_scan'")
    return store


def test_inside_the_helper_a_due_scan_is_handed_to_the_background(layers: Layers, monkeypatch) -> None:
    store = _edited_in_place(layers)
    handed: list[tuple[str, str]] = []
    monkeypatch.setattr(client, "BACKGROUND_SYNC", lambda root, scope: handed.append((root, scope)))
    recall(layers, "zeppelin upload", settings=Settings(), hot=True, record_session=False)
    assert handed == [(str(store.root), "project")]
    assert store.index.search("zeppelin") == []   # the prompt itself did not scan
    # the helper's own background scan: the edit is indexed without a prompt waiting for it
    server.background_sync(str(store.root), "project")

    def indexed() -> bool:
        fresh = Store(store.root, store.scope)
        try:
            return bool(fresh.index.search("zeppelin"))
        finally:
            fresh.close()

    wait_until(indexed, "the background scan to index the in-place edit")


def test_outside_the_helper_the_prompt_scans_as_before(layers: Layers, monkeypatch) -> None:
    store = _edited_in_place(layers)
    monkeypatch.setattr(client, "BACKGROUND_SYNC", None)
    recall(layers, "zeppelin upload", settings=Settings(), hot=True, record_session=False)
    assert store.index.search("zeppelin")   # seen at once: a hook in its own process scans when it is due
