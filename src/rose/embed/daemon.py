"""The warm helper: keeps the embedding model and the vectors loaded so the per-prompt hook pays ~1 ms for dense search.

The hook connects to a Unix socket, sends one JSON line {"query", "dbs", "k"}, and reads one JSON line back. When no
helper answers within the hook's small budget, the hook goes lexical-only for that prompt and starts one, detached
(its own session, stdio closed, ROSE_CHILD=1). A helper exits by itself after IDLE_EXIT_S without a request and
after MAX_LIFETIME_S in any case, so it can never become an orphan that lives forever.

    python -m rose.embed.daemon --socket PATH [--provider ...]     (normally started by the hook, never by hand)
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import socketserver
import sys
import threading
import time
from pathlib import Path
from typing import Any

IDLE_EXIT_S = 20 * 60
MAX_LIFETIME_S = 12 * 3600
MAX_REQUEST_BYTES = 1 << 20


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, embedder: Any):
        self.embedder = embedder
        self.tables: dict[str, Any] = {}
        self.last_request = time.monotonic()
        self.lock = threading.Lock()
        self.catching_up: set[str] = set()
        self.versions: dict[str, int] = {}   # index version last caught up per db
        super().__init__(str(path), _Handler)

    def catch_up(self, db: str) -> None:
        """Embed lessons written without a vector (hand edits, adds while no model was loaded), off the request."""
        if db in self.catching_up:
            return
        self.catching_up.add(db)

        def work() -> None:
            from rose.model import Scope
            from rose.store import Store

            try:
                store = Store(Path(db).parent, Scope.PROJECT)
                store.sync()
                store.embed_missing(self.embedder)
                store.close()
            except Exception as exc:  # noqa: BLE001 - logged; the next request tries again
                print(f"catch-up of {db} failed: {exc}", file=sys.stderr, flush=True)
            finally:
                self.catching_up.discard(db)

        threading.Thread(target=work, daemon=True).start()


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        from rose.embed.dense import VectorTable

        server: _Server = self.server  # type: ignore[assignment]
        server.last_request = time.monotonic()
        try:
            request = json.loads(self.rfile.readline(MAX_REQUEST_BYTES))
            with server.lock:
                [qvec] = server.embedder.embed([str(request["query"])])
                ranks = {}
                for db in request["dbs"]:
                    table = server.tables.get(db)
                    if table is None and Path(db).exists():
                        table = server.tables[db] = VectorTable(Path(db), server.embedder.name)
                    ranks[db] = table.rank(qvec, int(request.get("k", 50))) if table else []
                    if table and server.versions.get(db) != table.version():
                        server.versions[db] = table.version()
                        server.catch_up(db)
            reply: dict[str, Any] = {"ranks": ranks, "model": server.embedder.name}
        except Exception as exc:  # noqa: BLE001 - a bad request gets an error line, the helper keeps serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(reply).encode() + b"\n")


def serve(sock: Path, embedder: Any) -> None:
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    server = _Server(sock, embedder)
    os.chmod(sock, 0o600)
    sock.with_suffix(".pid").write_text(str(os.getpid()))
    started = time.monotonic()

    def watchdog() -> None:
        while True:
            time.sleep(5)
            now = time.monotonic()
            if now - server.last_request > IDLE_EXIT_S or now - started > MAX_LIFETIME_S:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        with contextlib.suppress(FileNotFoundError):
            sock.unlink()
        for suffix in (".spawn", ".pid"):
            with contextlib.suppress(FileNotFoundError):
                sock.with_suffix(suffix).unlink()


def main(argv: list[str] | None = None) -> int:
    from rose.config import EmbedProvider, EmbedSettings
    from rose.embed import make_embedder

    parser = argparse.ArgumentParser(prog="rose.embed.daemon")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--provider", default="auto")
    parser.add_argument("--base-url", default=EmbedSettings().base_url)
    parser.add_argument("--model", default=EmbedSettings().model)
    parser.add_argument("--api-key-env", default=EmbedSettings().api_key_env)
    args = parser.parse_args(argv)
    settings = EmbedSettings(provider=EmbedProvider(args.provider), base_url=args.base_url, model=args.model,
                             api_key_env=args.api_key_env)
    embedder = make_embedder(settings)
    if embedder is None:
        print("rose embed helper: no embedding model available; exiting", file=sys.stderr)
        return 1
    serve(Path(args.socket), embedder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
