"""`rose view`: one self-contained HTML page of the lesson graph, written to a file and, with `--serve`, served on
127.0.0.1 only.

    collect(layers) -> dict     everything the page shows, as plain data (also what a test or `--json` reads)
    render(data) -> str         the page: the DAG by level with compression, merge and dispute edges; per lesson its
                                manifest, rescues, held-out score and precision; the token curve over sessions; open
                                conflicts
    write(data, path)           render and write atomically
    serve(path, port)           a loopback-only server for that one file

Lessons are untrusted text (one may have been learned from a hostile repository). Every string from a lesson, an
episode or an event is HTML-escaped where it is written into the page, and the page carries a Content-Security-Policy
that allows no script but its own (pinned by hash), no network and no plug-ins, so a lesson that slips markup past
escaping still could not run. The page's script never writes lesson text into the document: it only shows and hides
what was rendered here.
"""
from __future__ import annotations

import base64
import hashlib
import html
from collections import defaultdict
from pathlib import Path
from typing import Any
from collections.abc import Callable

from rose.model import Node, Origin
from rose.store import Layers

FILE_NAME = "rose-view.html"
HOST = "127.0.0.1"


def default_path(layers: Layers) -> Path:
    """rose-view.html in the project store's machine-local cache/ (git-ignored), else the global store's."""
    stores = layers.require_any()
    return stores[0].cache_dir / FILE_NAME


# -- data ------------------------------------------------------------------------------------------------------------
def _edge_kind(node: Node) -> str:
    if node.origin is Origin.MERGE:
        return "merge"
    if node.origin is Origin.COMPRESSION:
        return "compression"
    return "derived"


def collect(layers: Layers) -> dict[str, Any]:
    from rose.learn.conflicts import open_conflicts
    from rose.store import events as event_log
    from rose.tokens import estimate

    stores = layers.require_any()
    nodes: dict[str, dict[str, Any]] = {}
    served: dict[str, int] = defaultdict(int)
    used: dict[str, int] = defaultdict(int)
    episodes = 0
    sessions: dict[str, dict[str, Any]] = {}
    descent_rescues: dict[str, int] = defaultdict(int)
    for store in stores:
        store.sync()
        for node in store.iter_nodes():
            if node.id in nodes:
                continue
            nodes[node.id] = {
                "id": node.id, "title": node.title, "family": node.family, "level": node.level,
                "status": node.status.value, "scope": store.scope.value, "origin": node.origin.value,
                "memory_type": node.memory_type.value, "gist": node.gist, "body": node.body,
                "tokens": estimate(node.body), "derived_from": list(node.derived_from), "parents": list(node.parents),
                "disputes": list(node.disputes), "conflict": node.conflict, "edge": _edge_kind(node),
                "manifest": [c.to_dict() for c in node.dropped],
                "rescues": node.stats.rescues + sum(c.rescues for c in node.dropped),
                "heldout_passed": node.heldout_passed, "heldout_total": node.heldout_total,
                "stats": node.stats.to_dict(), "trials": len(node.trials), "gaps": len(node.gaps),
                "evidence": list(node.evidence), "path": str(store.node_path(node)),
            }
        found, _bad = store.episodes()
        for ep in found:
            episodes += 1
            for node_id in ep.served:
                served[node_id] += 1
                used[node_id] += node_id in ep.used
        for ev in event_log.read(store.events_path, kind="inject"):
            sid = str(ev.get("session") or "?")
            entry = sessions.setdefault(sid, {"session": sid, "first": str(ev.get("ts", "")), "prompts": 0,
                                               "tokens": 0})
            entry["prompts"] += 1
            entry["tokens"] += int(ev.get("tokens") or 0)
        for ev in event_log.read(store.events_path, kind="update"):
            if ev.get("stage") == "descent" and ev.get("action") == "rescued":
                descent_rescues[str(ev.get("node") or ev.get("id") or "")] += 1
    for node_id, item in nodes.items():
        item["served"], item["used"] = served.get(node_id, 0), used.get(node_id, 0)
        item["precision"] = item["used"] / item["served"] if item["served"] else None
        item["rescues"] += descent_rescues.get(node_id, 0)
    curve = sorted(sessions.values(), key=lambda s: s["first"])
    conflicts = [{"id": c.node.id, "title": c.node.title, "question": c.question, "against": list(c.against),
                  "scope": c.store.scope.value} for c in open_conflicts(layers)]
    total_served, total_used = sum(served.values()), sum(used.values())
    heldout = [n for n in nodes.values() if n["heldout_total"]]
    return {
        "nodes": sorted(nodes.values(), key=lambda n: (-n["level"], n["family"], n["id"])),
        "sessions": curve,
        "conflicts": conflicts,
        "summary": {
            "lessons": len(nodes), "episodes": episodes, "sessions": len(curve),
            "levels": {str(k): v for k, v in sorted(_count(n["level"] for n in nodes.values()).items())},
            "compressed": sum(1 for n in nodes.values() if n["origin"] == "compression"),
            "merged": sum(1 for n in nodes.values() if n["origin"] == "merge"),
            "rescues": sum(n["rescues"] for n in nodes.values()),
            "heldout_passed": sum(n["heldout_passed"] for n in heldout),
            "heldout_total": sum(n["heldout_total"] for n in heldout),
            "precision": total_used / total_served if total_served else None,
            "stores": [{"scope": s.scope.value, "root": str(s.root)} for s in stores],
        },
    }


def _count(values) -> dict[Any, int]:
    out: dict[Any, int] = defaultdict(int)
    for v in values:
        out[v] += 1
    return dict(out)


# -- the page --------------------------------------------------------------------------------------------------------
def e(value: object) -> str:
    """Escaped for HTML text and attribute values alike."""
    return html.escape(str(value), quote=True)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.0f}%"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#2b2f36;color:#fff;padding:14px 22px}header h1{margin:0;font-size:20px}
main{padding:16px 22px;display:grid;gap:18px}section{background:#fff;border:1px solid #dde1e6;border-radius:8px;
padding:12px 16px}h2{font-size:16px;margin:4px 0 10px}.stats{display:flex;flex-wrap:wrap;gap:10px}
.stat{background:#eef1f5;border-radius:6px;padding:6px 10px}.stat b{display:block;font-size:18px}
svg text{font-size:11px;fill:#1d232a}.node circle{stroke:#333;stroke-width:1.2;cursor:pointer}
.node.active circle{fill:#7fc48a}.node.superseded circle{fill:#c9d7e8}.node.disputed circle{fill:#f2b36b}
.node.demoted circle{fill:#e8a3a3}.node.archived circle{fill:#ddd}.node.selected circle{stroke-width:3;stroke:#1b5fd1}
.edge{stroke:#8a96a3;stroke-width:1.3;fill:none}.edge.merge{stroke:#7b4fc4;stroke-dasharray:5 3}
.edge.dispute{stroke:#d1461b;stroke-dasharray:2 3}.legend span{margin-right:14px}
.card{border-top:1px solid #e3e6ea;padding:8px 0}.card[hidden]{display:none}.card pre{white-space:pre-wrap;
background:#f3f4f6;padding:8px;border-radius:6px;max-height:260px;overflow:auto}table{border-collapse:collapse}
td,th{border-bottom:1px solid #e6e8eb;padding:3px 8px;text-align:left;vertical-align:top}
.muted{color:#68707a}.conflict{border-left:4px solid #f2b36b;padding-left:10px;margin:8px 0}
"""

SCRIPT = """
(function(){
  var cards=document.querySelectorAll('.card');
  function show(id){
    for(var i=0;i<cards.length;i++){cards[i].hidden=cards[i].getAttribute('data-id')!==id;}
    var nodes=document.querySelectorAll('.node');
    for(var j=0;j<nodes.length;j++){nodes[j].classList.toggle('selected',nodes[j].getAttribute('data-id')===id);}
    document.getElementById('selected').textContent=id;
  }
  var nodes=document.querySelectorAll('[data-show]');
  for(var k=0;k<nodes.length;k++){
    nodes[k].addEventListener('click',function(ev){show(ev.currentTarget.getAttribute('data-show'));});
    nodes[k].addEventListener('keydown',function(ev){if(ev.key==='Enter'){show(ev.currentTarget.getAttribute('data-show'));}});
  }
  document.body.setAttribute('data-ready','1');
})();
"""


def _script_hash(script: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def csp(header: bool = False) -> str:
    """The page's policy: its own script only (by hash), inline styles, nothing from the network. frame-ancestors
    counts only in an HTTP header (a <meta> policy may not carry it)."""
    policy = (f"default-src 'none'; style-src 'unsafe-inline'; script-src '{_script_hash(SCRIPT)}'; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    return policy + ("; frame-ancestors 'none'" if header else "")


def _dag(nodes: list[dict[str, Any]]) -> str:
    if not nodes:
        return "<p class='muted'>No lessons yet.</p>"
    levels = sorted({n["level"] for n in nodes}, reverse=True)
    rows = {lvl: sorted([n for n in nodes if n["level"] == lvl], key=lambda n: (n["family"], n["id"]))
            for lvl in levels}
    gap_x, gap_y, pad = 150, 90, 60
    width = pad * 2 + gap_x * max(len(r) for r in rows.values())
    height = pad + gap_y * len(levels)
    pos: dict[str, tuple[float, float]] = {}
    for r, lvl in enumerate(levels):
        row = rows[lvl]
        offset = (width - gap_x * len(row)) / 2 + gap_x / 2
        for i, n in enumerate(row):
            pos[n["id"]] = (offset + i * gap_x, pad / 2 + 20 + r * gap_y)
    parts = [f'<svg id="dag" role="img" aria-label="lesson graph" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}">']
    for r, lvl in enumerate(levels):
        parts.append(f'<text x="6" y="{pad / 2 + 24 + r * gap_y}" class="level">L{lvl}</text>')
    drawn = set()
    for n in nodes:
        for child in n["derived_from"]:
            if child in pos and n["id"] in pos:
                (x1, y1), (x2, y2) = pos[n["id"]], pos[child]
                parts.append(f'<line class="edge {e(n["edge"])}" data-from="{e(n["id"])}" data-to="{e(child)}" '
                             f'x1="{x1:.0f}" y1="{y1 + 9:.0f}" x2="{x2:.0f}" y2="{y2 - 9:.0f}"/>')
        for other in n["disputes"]:
            key = tuple(sorted((n["id"], other)))
            if other in pos and key not in drawn:
                drawn.add(key)
                (x1, y1), (x2, y2) = pos[n["id"]], pos[other]
                parts.append(f'<path class="edge dispute" data-from="{e(n["id"])}" data-to="{e(other)}" '
                             f'd="M{x1:.0f},{y1:.0f} Q{(x1 + x2) / 2:.0f},{min(y1, y2) - 40:.0f} {x2:.0f},{y2:.0f}"/>')
    for n in nodes:
        x, y = pos[n["id"]]
        parts.append(f'<g class="node {e(n["status"])}" data-id="{e(n["id"])}" data-show="{e(n["id"])}" '
                     f'tabindex="0"><title>{e(n["title"])} ({e(n["id"])})</title>'
                     f'<circle cx="{x:.0f}" cy="{y:.0f}" r="9"/>'
                     f'<text x="{x:.0f}" y="{y + 24:.0f}" text-anchor="middle">{e(_clip(n["title"], 22))}</text>'
                     f'<text x="{x:.0f}" y="{y + 37:.0f}" text-anchor="middle" class="muted">{e(n["family"])} · '
                     f'{n["tokens"]} tok</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _card(n: dict[str, Any]) -> str:
    rows = [("id", n["id"]), ("family", n["family"]), ("level", f"L{n['level']}"), ("status", n["status"]),
            ("scope", n["scope"]), ("made by", n["origin"]), ("kind", n["memory_type"]),
            ("tokens", n["tokens"]), ("served / used", f"{n['served']} / {n['used']}"),
            ("precision", _pct(n["precision"])),
            ("held-out", f"{n['heldout_passed']}/{n['heldout_total']}" if n["heldout_total"] else "–"),
            ("rescues", n["rescues"]), ("made from", ", ".join(n["derived_from"]) or "–"),
            ("above it", ", ".join(n["parents"]) or "–"), ("file", n["path"])]
    out = [f'<article class="card" data-id="{e(n["id"])}" id="card-{e(n["id"])}" hidden>',
           f'<h3>{e(n["title"])}</h3>', "<table>"]
    out += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows]
    out.append("</table>")
    if n["conflict"]:
        out.append(f'<p class="conflict">Unresolved: {e(n["conflict"])}</p>')
    out.append(f"<pre>{e(n['body'])}</pre>")
    if n["manifest"]:
        out.append("<h4>Manifest: what its compression dropped</h4><table class='manifest'><tr><th>kind</th>"
                   "<th>claim</th><th>held by</th><th>rescues</th><th>tried</th></tr>")
        out += [f"<tr><td>{e(c['kind'])}</td><td>{e(c['claim'])}</td><td>{e(c['holder'])}</td>"
                f"<td>{e(c['rescues'])}</td><td>{e(c['attempts'])}</td></tr>" for c in n["manifest"]]
        out.append("</table>")
    if n["evidence"]:
        out.append("<p class='muted'>evidence: " + ", ".join(e(x) for x in n["evidence"][:8]) + "</p>")
    out.append("</article>")
    return "".join(out)


def _curve(sessions: list[dict[str, Any]]) -> str:
    if not sessions:
        return "<p class='muted'>No prompt has been served yet.</p>"
    width, height, pad = 640, 180, 36
    top = max(s["tokens"] for s in sessions) or 1
    step = (width - 2 * pad) / max(1, len(sessions) - 1)
    points = [(pad + i * step, height - pad - (s["tokens"] / top) * (height - 2 * pad)) for i, s in enumerate(sessions)]
    poly = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    dots = "".join(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{e(s["session"])}: {s["tokens"]} tokens'
                   f"</title></circle>" for (x, y), s in zip(points, sessions))
    svg = (f'<svg id="curve" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="tokens injected per session"><line x1="{pad}" y1="{height - pad}" x2="{width - pad}" '
           f'y2="{height - pad}" class="edge"/><line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" '
           f'class="edge"/><text x="4" y="{pad}">{top}</text><text x="4" y="{height - pad}">0</text>'
           f'<polyline points="{poly}" fill="none" stroke="#1b5fd1" stroke-width="2"/>{dots}</svg>')
    table = ["<table id='sessions'><tr><th>#</th><th>session</th><th>prompts</th><th>tokens injected</th></tr>"]
    table += [f"<tr><td>{i + 1}</td><td>{e(s['session'])}</td><td>{s['prompts']}</td><td>{s['tokens']}</td></tr>"
              for i, s in enumerate(sessions)]
    table.append("</table>")
    return svg + "".join(table)


def render(data: dict[str, Any]) -> str:
    s = data["summary"]
    heldout = f"{s['heldout_passed']}/{s['heldout_total']}" if s["heldout_total"] else "–"
    stats = [("lessons", s["lessons"]), ("compressed", s["compressed"]), ("merged", s["merged"]),
             ("rescues", s["rescues"]), ("held-out", heldout), ("precision", _pct(s["precision"])),
             ("sessions", s["sessions"]), ("episodes", s["episodes"]), ("open conflicts", len(data["conflicts"]))]
    conflicts = "".join(
        f'<div class="conflict" data-id="{e(c["id"])}"><b>{e(c["title"])}</b> <span class="muted">({e(c["id"])}, '
        f'{e(c["scope"])})</span><br>against {e(", ".join(c["against"]) or "?")}<br>? {e(c["question"])}</div>'
        for c in data["conflicts"]) or "<p class='muted'>No open contradictions.</p>"
    lesson_rows = "".join(
        f'<tr data-id="{e(n["id"])}"><td><a href="#card-{e(n["id"])}" data-show="{e(n["id"])}">{e(n["id"])}</a>'
        f'</td><td>L{n["level"]}</td><td>{e(n["family"])}</td><td>{e(n["title"])}</td><td>{e(n["status"])}</td>'
        f'<td>{n["tokens"]}</td><td>{len(n["manifest"])}</td><td>{n["rescues"]}</td>'
        f'<td>{e(str(n["heldout_passed"]) + "/" + str(n["heldout_total"]) if n["heldout_total"] else "–")}</td>'
        f'<td>{_pct(n["precision"])}</td></tr>' for n in data["nodes"])
    stores = ", ".join(f"{e(st['scope'])}: {e(st['root'])}" for st in s["stores"])
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{e(csp())}">
<meta name="referrer" content="no-referrer">
<title>rose · lesson graph</title><style>{STYLE}</style></head>
<body><header><h1>rose · lesson graph</h1><div class="muted">{stores}</div></header><main>
<section id="summary"><h2>At a glance</h2><div class="stats">{"".join(
        f'<div class="stat" data-stat="{e(k)}"><b>{e(v)}</b>{e(k)}</div>' for k, v in stats)}</div></section>
<section id="graph"><h2>The DAG by level</h2><p class="legend"><span>── compression</span>
<span style="color:#7b4fc4">- - merge</span><span style="color:#d1461b">··· contradiction</span>
<span>click a lesson for its manifest</span></p><div style="overflow:auto">{_dag(data["nodes"])}</div>
<p class="muted">selected: <span id="selected">none</span></p>{"".join(_card(n) for n in data["nodes"])}</section>
<section id="tokens"><h2>Tokens injected per session</h2>{_curve(data["sessions"])}</section>
<section id="conflicts"><h2>Open conflicts</h2>{conflicts}</section>
<section id="lessons"><h2>Every lesson</h2><table><tr><th>id</th><th>level</th><th>family</th><th>title</th>
<th>status</th><th>tokens</th><th>manifest</th><th>rescues</th><th>held-out</th><th>precision</th></tr>{lesson_rows}
</table></section></main><script>{SCRIPT}</script></body></html>
"""


def write(data: dict[str, Any], path: Path) -> Path:
    from rose.store.atomic import write_text_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, render(data))
    return path


# -- serving ---------------------------------------------------------------------------------------------------------
def make_server(path: Path, port: int = 0):
    """An HTTP server on 127.0.0.1 that serves the one page at / (and /rose-view.html) and nothing else. Requests
    whose Host is not this loopback address are refused, so a web page elsewhere cannot reach it by DNS rebinding."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's own name
            pass

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            port_now = self.server.server_address[1]  # type: ignore[index]  # a TCP server: (host, port)
            allowed = {f"127.0.0.1:{port_now}", f"localhost:{port_now}"}
            if self.headers.get("Host", "") not in allowed:
                self._send(421, b"misdirected request\n", "text/plain")
                return
            if self.path.split("?")[0] not in ("/", "/" + FILE_NAME):
                self._send(404, b"not found\n", "text/plain")
                return
            try:
                body = path.read_bytes()
            except OSError:
                self._send(404, b"the view file is gone\n", "text/plain")
                return
            self._send(200, body, "text/html; charset=utf-8")

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", csp(header=True))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

    return ThreadingHTTPServer((HOST, port), Handler)


def serve(path: Path, port: int = 0, announce: Callable[[str], Any] = print) -> None:
    server = make_server(path, port)
    announce(f"serving {path} at http://{HOST}:{server.server_address[1]}/ (127.0.0.1 only; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

