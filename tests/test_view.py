"""`rose view` in a real headless browser (Debian's Chromium, driven over its DevTools pipe): what the page renders,
not only that a file exists. The store is the one `rose demo` builds (compressions, a merge, rescues, held-out
replays, sixteen sessions of injected tokens), plus an open contradiction and a hostile lesson.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from rose.model import Node, Status
from tests.conftest import run_rose
from tests.support.chromium import Browser

HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">Deploy notes'
HOSTILE_BODY = ('</pre></article><script>window.__pwned=2</script><svg onload="window.__pwned=3"></svg>'
                "\n{{constructor.constructor('window.__pwned=4')()}} deploys go through make ship")


def _sim_home(project: Path) -> Path:
    """The demo's own global store, which holds this machine's record of its project (events, index)."""
    return project.parent / "global-store"


@contextlib.contextmanager
def _as_the_demo(project: Path):
    before = os.environ.get("ROSE_HOME")
    os.environ["ROSE_HOME"] = str(_sim_home(project))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ROSE_HOME", None)
        else:
            os.environ["ROSE_HOME"] = before


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`rose demo --keep`'s project, with a contradiction and a hostile lesson added."""
    home = tmp_path_factory.mktemp("demo-home")
    env = {**os.environ, "HOME": str(home), "ROSE_HOME": str(home / ".rose"), "ROSE_WARM_HELPER": "0"}
    cp = subprocess.run([sys.executable, "-m", "rose", "demo", "--keep"], capture_output=True, text=True, env=env,
                        timeout=300)
    assert cp.returncode == 0, cp.stderr
    project = Path(re.search(r"store kept at (\S+)/\.rose", cp.stdout).group(1))
    assert f"ROSE_HOME={_sim_home(project)}" in cp.stdout   # where the demo says its record of the project is
    from rose.store import Layers

    with _as_the_demo(project):
        layers = Layers.discover(project)
        store = layers.project
        store.save(Node(id="n_hostile", family="deploy", title=HOSTILE_TITLE, body=HOSTILE_BODY))
        store.save(Node(id="n_tabs", family="style", title="Indent with tabs", body="Indent Go code with tabs.",
                        status=Status.DISPUTED, conflict="Tabs or four spaces for the generated code?",
                        disputes=["n_spaces"]))
        store.save(Node(id="n_spaces", family="style", title="Indent with spaces", body="Indent with four spaces.",
                        status=Status.DISPUTED, conflict="Tabs or four spaces for the generated code?",
                        disputes=["n_tabs"]))
        layers.close()
    return project


@pytest.fixture(scope="module")
def expected(demo_store: Path) -> dict:
    from rose import view
    from rose.store import Layers

    with _as_the_demo(demo_store):
        layers = Layers.discover(demo_store)
        try:
            return view.collect(layers)
        finally:
            layers.close()


@pytest.fixture(scope="module")
def page_file(demo_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("view") / "view.html"
    cp = run_rose("view", "--out", str(out), "--json", cwd=demo_store, env={"ROSE_HOME": str(_sim_home(demo_store))})
    assert cp.returncode == 0, cp.stderr
    assert json.loads(cp.stdout)["path"] == str(out)
    return out


@pytest.fixture(scope="module")
def browser():
    with Browser() as b:
        yield b


def test_the_page_shows_the_graph_by_level_with_every_lesson_and_edge(browser: Browser, page_file: Path,
                                                                    expected: dict) -> None:
    page = browser.open(page_file.as_uri())
    assert page.wait_for("document.body.dataset.ready === '1'")   # the page's own script ran under its policy
    nodes = expected["nodes"]
    assert page.evaluate("document.querySelectorAll('#dag g.node').length") == len(nodes)
    levels = sorted({f"L{n['level']}" for n in nodes})
    assert sorted(page.evaluate("[...document.querySelectorAll('#dag text.level')].map(t => t.textContent)")) == levels
    edges = page.evaluate("[...document.querySelectorAll('#dag line.edge')].map(l => [l.dataset.from, l.dataset.to,"
                          " l.classList.contains('merge') ? 'merge' : l.classList.contains('compression') ? "
                          "'compression' : 'derived'])")
    wanted = sorted([n["id"], c, n["edge"]] for n in nodes for c in n["derived_from"])
    assert sorted(edges) == wanted
    assert any(kind == "merge" for *_ids, kind in edges) and any(kind == "compression" for *_ids, kind in edges)
    # a node higher up is drawn above the lessons it was made from
    y = page.evaluate("Object.fromEntries([...document.querySelectorAll('#dag g.node')].map(g => "
                      "[g.dataset.id, +g.querySelector('circle').getAttribute('cy')]))")
    assert all(y[parent] < y[child] for parent, child, _k in edges)
    stats = page.evaluate("Object.fromEntries([...document.querySelectorAll('.stat')].map(s => [s.dataset.stat, "
                          "s.querySelector('b').textContent]))")
    s = expected["summary"]
    assert stats["lessons"] == str(s["lessons"]) and stats["merged"] == str(s["merged"]) >= "1"
    assert stats["held-out"] == f"{s['heldout_passed']}/{s['heldout_total']}" and s["heldout_total"] > 0
    assert stats["rescues"] == str(s["rescues"]) and s["rescues"] > 0
    assert stats["open conflicts"] == "2"
    assert browser.problems() == []


def test_clicking_a_lesson_shows_its_manifest_held_out_score_and_precision(browser: Browser, page_file: Path,
                                                                         expected: dict) -> None:
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    assert page.evaluate("[...document.querySelectorAll('.card')].filter(c => !c.hidden).length") == 0
    node = max((n for n in expected["nodes"] if n["manifest"]), key=lambda n: len(n["manifest"]))
    page.evaluate(f"document.querySelector('#dag g.node[data-id=\"{node['id']}\"]')"
                  ".dispatchEvent(new MouseEvent('click', {bubbles: true}))")
    shown = page.evaluate("[...document.querySelectorAll('.card')].filter(c => !c.hidden).map(c => c.dataset.id)")
    assert shown == [node["id"]]
    card = f"document.getElementById('card-{node['id']}')"
    claims = page.evaluate(f"[...{card}.querySelectorAll('table.manifest tr')].slice(1).map(r => "
                           "r.children[1].textContent)")
    assert claims == [c["claim"] for c in node["manifest"]]
    fields = page.evaluate(f"Object.fromEntries([...{card}.querySelectorAll('table:first-of-type tr')].map(r => "
                           "[r.children[0].textContent, r.children[1].textContent]))")
    assert fields["held-out"] == f"{node['heldout_passed']}/{node['heldout_total']}"
    assert fields["precision"] == ("–" if node["precision"] is None else f"{node['precision'] * 100:.0f}%")
    assert fields["rescues"] == str(node["rescues"])
    assert page.evaluate("document.querySelector('g.node.selected').dataset.id") == node["id"]


def test_the_token_curve_and_the_open_conflicts(browser: Browser, page_file: Path, expected: dict) -> None:
    page = browser.open(page_file.as_uri())
    rows = page.evaluate("[...document.querySelectorAll('#sessions tr')].slice(1).map(r => "
                         "[r.children[1].textContent, +r.children[3].textContent])")
    assert rows == [[s["session"], s["tokens"]] for s in expected["sessions"]] and len(rows) == 16
    assert rows[-1][1] < rows[0][1]   # the demo's point: fewer tokens as lessons compress
    assert page.evaluate("document.querySelector('#curve polyline').getAttribute('points').split(' ').length") == 16
    conflicts = page.evaluate("[...document.querySelectorAll('#conflicts .conflict')].map(c => c.dataset.id)")
    assert sorted(conflicts) == ["n_spaces", "n_tabs"]
    assert "Tabs or four spaces for the generated code?" in page.evaluate(
        "document.getElementById('conflicts').innerText")
    disputes = page.evaluate("document.querySelectorAll('#dag path.edge.dispute').length")
    assert disputes == 1


def test_a_hostile_lesson_is_text_never_markup_or_script(browser: Browser, page_file: Path) -> None:
    page = browser.open(page_file.as_uri())
    page.wait_for("document.body.dataset.ready === '1'")
    page.evaluate("document.querySelector('[data-show=\"n_hostile\"]').dispatchEvent(new MouseEvent('click', "
                  "{bubbles: true}))")
    time.sleep(0.2)
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 1
    assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert page.evaluate("document.querySelectorAll('#lessons ~ *, main > :not(section)').length") == 0
    card = "document.getElementById('card-n_hostile')"
    assert page.evaluate(f"{card}.querySelector('h3').textContent") == HOSTILE_TITLE
    assert page.evaluate(f"{card}.querySelector('pre').textContent") == HOSTILE_BODY
    assert page.evaluate(f"!{card}.hidden")
    assert page.evaluate("document.querySelectorAll('article.card').length") == \
        page.evaluate("document.querySelectorAll('#dag g.node').length")


def test_serve_binds_loopback_only_and_serves_the_same_page(browser: Browser, demo_store: Path,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "served.html"
    proc = subprocess.Popen([sys.executable, "-m", "rose", "view", "--serve", "--out", str(out)], cwd=demo_store,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
            url = found.group(1) if found else None
        assert url, proc.stderr.read() if proc.poll() is not None else "no URL printed"
        port = int(url.rsplit(":", 1)[1].strip("/"))
        with open("/proc/net/tcp") as tcp:   # the listening socket is 127.0.0.1's, not 0.0.0.0's
            listening = [line.split()[1] for line in tcp.readlines()[1:] if line.split()[3] == "0A"]
        assert f"0100007F:{port:04X}" in listening and f"00000000:{port:04X}" not in listening
        page = browser.open(url)
        page.wait_for("document.body.dataset.ready === '1'")
        assert page.evaluate("document.querySelectorAll('#dag g.node').length") >= 12
        with urllib.request.urlopen(url) as response:
            assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
            assert response.read() == out.read_bytes()
        for path, host, status in (("nope", None, 404), ("", "evil.example", 421)):
            request = urllib.request.Request(url + path, headers={"Host": host} if host else {})
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request)
            assert refused.value.code == status
            refused.value.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        proc.stdout.close()
        proc.stderr.close()


def test_a_view_without_any_store_is_a_one_line_error(project: Path) -> None:
    cp = run_rose("view", cwd=project)
    assert cp.returncode == 1 and cp.stderr.startswith("rose: no rose store")
