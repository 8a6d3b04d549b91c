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
import hashlib
import json
import os
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

IDLE_EXIT_S = 20 * 60
MAX_LIFETIME_S = 12 * 3600
SPAWN_GRACE_S = 30          # do not start a second helper while the first may still be loading
CLIENT_TIMEOUT_S = 0.3      # the hook's whole budget for dense search
MAX_REQUEST_BYTES = 1 << 20


def socket_path(embedder_key: str) -> Path:
    """Short (Unix sockets allow ~100 bytes), per user and per embedder configuration."""
    digest = hashlib.sha256(f"{Path.home()}|{embedder_key}".encode()).hexdigest()[:12]
    folder = Path(tempfile.gettempdir()) / f"rose-{os.getuid() if hasattr(os, 'getuid') else 'u'}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"embed-{digest}.sock"


def query(sock: Path, text: str, dbs: list[str], k: int, timeout: float = CLIENT_TIMEOUT_S) -> dict[str, Any] | None:
    """Ask a running helper; None when there is none or it is too slow (the caller goes lexical-only)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(str(sock))
            client.sendall(json.dumps({"query": text, "dbs": dbs, "k": k}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = client.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data)
        return reply if isinstance(reply, dict) and "ranks" in reply else None
    except (OSError, ValueError):
        return None


def spawn(sock: Path, provider_args: list[str]) -> bool:
    """Start a helper unless one was started moments ago. Returns whether one was started now."""
    marker = sock.with_suffix(".spawn")
    try:
        if time.time() - marker.stat().st_mtime < SPAWN_GRACE_S:
            return False
    except FileNotFoundError:
        pass
    marker.touch()
    log = sock.with_suffix(".log")
    env = {**os.environ, "ROSE_CHILD": "1"}
    with open(os.devnull, "rb") as devnull, open(log, "ab") as out:
        subprocess.Popen([sys.executable, "-m", "rose.embed.daemon", "--socket", str(sock), *provider_args],
                         stdin=devnull, stdout=out, stderr=out, start_new_session=True, env=env, close_fds=True)
    return True


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, embedder: Any):
        self.embedder = embedder
        self.tables: dict[str, Any] = {}
        self.last_request = time.monotonic()
        self.lock = threading.Lock()
        super().__init__(str(path), _Handler)


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
            reply: dict[str, Any] = {"ranks": ranks, "model": server.embedder.name}
        except Exception as exc:  # noqa: BLE001 - a bad request gets an error line, the helper keeps serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(reply).encode() + b"\n")


def serve(sock: Path, embedder: Any) -> None:
    with contextlib.suppress(FileNotFoundError):
        sock.unlink()
    server = _Server(sock, embedder)
    os.chmod(sock, 0o600)
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
        with contextlib.suppress(FileNotFoundError):
            sock.with_suffix(".spawn").unlink()


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
