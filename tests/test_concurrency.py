"""Eight processes writing and updating lessons at once: every write survives, intact, and nothing tears."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from rose.model import Node, Scope
from rose.store import Store

WORKERS = 8
ADDS_PER_WORKER = 25
UPDATES_PER_WORKER = 25
HANG_S = 300  # the whole run's bound; a worker's wait for the store lock gets the same (see WORKER)

WORKER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from rose.model import Node, Scope
    from rose.store import Store
    root, worker, go = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    while not go.exists():
        time.sleep(0.001)
    store = Store(root, Scope.PROJECT)
    # The store lock's 30 s default means "another rose is stuck". Here eight writers take turns on purpose, and on
    # a loaded machine one of them can wait its turn longer than that; what is tested is that nothing is lost.
    store.bound_waits(float(sys.argv[5]))
    for i in range(int(sys.argv[4])):
        node = Node(id=store.new_id(), family=f"fam{i % 3}", title=f"w{worker} lesson {i}",
                    body=f"worker {worker} wrote lesson {i}: \\"quoted\\", colon: yes\\n" * 20)
        store.save(node)
        def bump(n, i=i):
            n.stats.attempts += 1
            n.body += f"\\nmark w{worker}-{i}"
        store.update("n_shared", bump)
""")


def test_eight_writers_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / ".rose"
    store = Store.create(root, Scope.PROJECT)
    store.save(Node(id="n_shared", family="shared", title="shared", body="start"))
    go = tmp_path / "go"
    assert ADDS_PER_WORKER == UPDATES_PER_WORKER  # the worker does one add and one update per step
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(root), str(w), str(go), str(ADDS_PER_WORKER),
                               str(HANG_S)], stderr=subprocess.PIPE, text=True) for w in range(WORKERS)]
    go.touch()
    for p in procs:
        _out, err = p.communicate(timeout=HANG_S)
        assert p.returncode == 0, err

    fresh = Store(root, Scope.PROJECT)
    report = fresh.sync()
    assert not report.problems
    nodes = list(fresh.iter_nodes())
    assert len(nodes) == 1 + WORKERS * ADDS_PER_WORKER
    titles = {n.title for n in nodes}
    for w in range(WORKERS):
        for i in range(ADDS_PER_WORKER):
            assert f"w{w} lesson {i}" in titles
    for n in nodes:
        if n.id != "n_shared":
            assert n.body == f"worker {n.title.split()[0][1:]} wrote lesson {n.title.split()[-1]}: \"quoted\", colon: yes\n" * 20
    shared = fresh.get("n_shared")
    assert shared.stats.attempts == WORKERS * UPDATES_PER_WORKER
    marks = {line for line in shared.body.splitlines() if line.startswith("mark ")}
    assert len(marks) == WORKERS * UPDATES_PER_WORKER
    index_lines = [ln for ln in fresh.index_md_path.read_text(encoding="utf-8").splitlines() if ln.startswith("n_")]
    assert len(index_lines) == len(nodes)
    assert not list(root.rglob("*.tmp"))
