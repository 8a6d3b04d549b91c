"""`python -m rose.warm.server SOCKET`: the warm helper. Started by a hook, never by hand.

It serves three requests over a private Unix socket, each one JSON line:
    {"op": "hook", "argv": [agent, event], "stdin": payload, "cwd", "env"}  -> {"stdout": the hook's JSON}
    {"op": "dense", "embed": {...}, "query", "dbs", "k"}                    -> {"ranks": {db: [[id, cosine], ...]}}
    {"op": "catch_up", "embed": {...}, "dbs", "ids"?}                       -> {"started": bool} (embeds off-line)
    {"op": "command", "argv", "cwd", "env", "streams"}  -> "C code n_out n_err\n" + stdout + stderr bytes, or a
                                                          line that is not (run it in-process): rose.warm.commands
Hooks run here exactly as in a fresh process (the same dispatch, the same fail-open boundary), in the caller's own
environment and working directory (rose.environment); only imports, the embedding model and the vectors are already
warm. One helper per user and installation: a second one started at the same moment finds the first's lock and
exits. Only a peer of the same uid is served (SO_PEERCRED). It exits by itself after IDLE_EXIT_S without a request
and after MAX_LIFETIME_S in any case, so it can never become an orphan that lives forever.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import socketserver
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rose.text import load_json
from rose import envvars, errors

IDLE_EXIT_S = envvars.number(os.environ.get(envvars.WARM_IDLE_S), envvars.WARM_IDLE_DEFAULT_S)  # exit after this long idle
MAX_LIFETIME_S = 12 * 3600
MAX_REQUEST_BYTES = 16 * 1024 * 1024
QUIET_S = 30.0   # a spell without a request after which the helper tidies the indexes it serves (Warm.tidy)
CATCH_UP_EVERY_S = 10.0   # how often a store is checked for lessons without a vector (the hooks sync the files)
CODE_CHECK_EVERY_S = 10.0  # how often the helper checks whether rose's code changed under it (then it exits, and
                           # the next prompt starts a helper with the new code)


Warming = errors.Warming   # the model or a vector table is still loading: lexical results now, never a wait


class Warm:
    """What stays loaded: embedders per configuration, and vector tables per index.

    Nothing is loaded inside a request: what a request needs and is not loaded yet is loaded by a background
    thread (one per thing) while the request is told `Warming` at once, so the first prompts after the helper
    starts are served lexical-only inside their deadline instead of blocking on the model or the vectors."""

    def __init__(self) -> None:
        self.embedders: dict[str, Any] = {}
        self.tables: dict[tuple[str, str], Any] = {}
        self.checked: dict[tuple[str, str], float] = {}
        self.catching_up: set[str] = set()
        # per (index, space): the index's tags (migration 0013) at which a periodic scan found no lesson lacking a
        # vector; while they are still the index's, nothing was written since, and the scan is skipped
        self.complete: dict[tuple[str, str], Any] = {}
        self.seen: set[str] = set()   # every index a ranking was asked of: tidy()'s
        self.loading: set[object] = set()
        self.lock = threading.Lock()        # ranking: the loaded embedders and tables are used one query at a time
        self.load_lock = threading.Lock()   # the `loading` set

    def warming(self) -> bool:
        """The model or a vector table is still loading (or none was asked for yet): a command that ranks would
        load its own model here, inside the request, so it runs in its caller's process instead."""
        with self.load_lock:
            loading = any(isinstance(w, tuple) and w[0] in ("model", "table") for w in self.loading)
        return loading or not self.embedders   # an embedder of None: no model to load (dense is off either way)

    def _in_background(self, what: object, load: Any) -> None:
        with self.load_lock:
            if what in self.loading:
                return
            self.loading.add(what)

        def work() -> None:
            try:
                load()
            except Exception as exc:  # noqa: BLE001 - logged; the next request tries again
                print(f"loading {what} failed: {exc}", file=sys.stderr, flush=True)
            finally:
                with self.load_lock:
                    self.loading.discard(what)

        threading.Thread(target=work, daemon=True).start()

    @staticmethod
    def _key(embed: dict[str, Any]) -> str:
        return json.dumps(embed, sort_keys=True)

    def load_embedder(self, embed: dict[str, Any]) -> Any:
        from rose.config import EmbedProvider, EmbedSettings
        from rose.embed import make_embedder

        key = self._key(embed)
        if key not in self.embedders:
            settings = EmbedSettings(provider=EmbedProvider(embed.get("provider", "auto")),
                                     base_url=str(embed.get("base_url", EmbedSettings().base_url)),
                                     model=str(embed.get("model", EmbedSettings().model)),
                                     api_key_env=str(embed.get("api_key_env", EmbedSettings().api_key_env)))
            self.embedders[key] = make_embedder(settings)
        return self.embedders[key]

    def _load_table(self, db: str, embedder: Any) -> None:
        from rose.embed.dense import VectorTable

        table = VectorTable(Path(db), embedder.name)
        [probe] = embedder.embed(["warm"])
        table.rank(probe, 1)   # reads the vectors (the vector file, or the index and then the file), lays them out
        _log_vector_skips(table)
        self.tables[(db, embedder.name)] = table

    def rank(self, embed: dict[str, Any], query: str, dbs: list[str], k: int) -> dict[str, list]:
        self.seen.update(dbs)
        key = self._key(embed)
        if key not in self.embedders:
            self._in_background(("model", key), lambda: self.load_embedder(embed))
            raise Warming("the embedding model is loading")
        embedder = self.embedders[key]
        if embedder is None:
            raise RuntimeError("no embedding model available")
        waiting = [db for db in dbs if (db, embedder.name) not in self.tables and Path(db).exists()]
        for db in waiting:
            self._in_background(("table", db, embedder.name), lambda db=db: self._load_table(db, embedder))
        if waiting:
            raise Warming("vectors are loading")
        with self.lock:
            [qvec] = embedder.embed([query])
            ranks: dict[str, list] = {}
            for db in dbs:
                table_key = (db, embedder.name)
                table = self.tables.get(table_key)
                if table is None:
                    ranks[db] = []
                    continue
                if table.changed():   # a write since: checked, and reloaded if its vectors changed, off the request
                    self._in_background(("reload", *table_key), lambda t=table, key=table_key: self._reload(key, t))
                ranks[db] = table.rank(qvec, k, refresh=False)   # meanwhile the vectors it has serve
                if time.monotonic() - self.checked.get(table_key, 0.0) > CATCH_UP_EVERY_S:
                    self.checked[table_key] = time.monotonic()
                    self.catch_up(db, embedder)
        return ranks

    def _reload(self, key: tuple[str, str], table: Any) -> None:
        """A table whose index was written to: when its vectors changed, a new table is read and laid out on its own
        connection and swapped in whole; until then requests rank with the old one (at 50,000 lessons a reload is
        a few hundred milliseconds, which a request used to wait for)."""
        from rose.embed.dense import VectorTable

        db, model = key
        with self.lock:
            seen = table.data_version()   # read before the version below: a commit after it is seen next time
        fresh: Any = VectorTable(Path(db), model)   # becomes the old table once swapped: closed either way
        try:
            version = fresh.version()
            with self.lock:
                table.still_current(version, seen)
                if version == table.loaded_version:
                    return   # the commits changed no vector of this space: nothing to reload
            embedder = next((e for e in self.embedders.values() if e is not None and e.name == model), None)
            if embedder is None:
                return
            with self.lock:
                [probe] = embedder.embed(["warm"])
            fresh.rank(probe, 1)   # reads the vectors and lays the matrix out, here
            _log_vector_skips(fresh)
            with self.lock:
                if self.tables.get(key) is table:
                    self.tables[key], fresh = fresh, table   # the old one is closed below
        finally:
            fresh.close()

    def catch_up_now(self, embed: dict[str, Any], dbs: list[str], ids: dict[str, list[str]] | None = None) -> bool:
        """Embed what these indexes lack, in the background (a `rose add` asks, so its process loads no model).
        `ids`: per index, the only lessons to look at (the one an add wrote; the others are the periodic
        catch-up's). False while the model itself is loading: the first ranking catches up then."""
        key = self._key(embed)
        embedder = self.embedders.get(key)
        if embedder is None:
            self._in_background(("model", key), lambda: self.load_embedder(embed))
            return False
        for db in dbs:
            if Path(db).exists() and (ids is None or ids.get(db)):
                self.catch_up(db, embedder, None if ids is None else ids[db])
        return True

    def catch_up(self, db: str, embedder: Any, ids: list[str] | None = None) -> None:
        """Embed lessons written without a vector (hand edits, adds while no model was loaded), off the request;
        `ids`: only these (a scan of every row is 145 ms of CPU at 50,000 lessons, for the one lesson an add
        wrote)."""
        if db in self.catching_up:
            return
        self.catching_up.add(db)

        def work() -> None:
            try:
                store = _beside(db)
                try:
                    self._embed_missing(store, db, embedder, ids)
                finally:
                    store.close()
            except Exception as exc:  # noqa: BLE001 - logged; the next request tries again
                print(f"catch-up of {db} failed: {exc}", file=sys.stderr, flush=True)
            finally:
                self.catching_up.discard(db)

        threading.Thread(target=work, daemon=True).start()

    def tidy(self) -> None:
        """Between bursts of requests (QUIET_S without one): each index rankings were asked of merges its
        full-text segments when that is due (rose.store.fulltext: a rewrite paid once per growth by a share of its
        size), off every request, a bounded step at a time under its store's lock."""
        from rose.store.fulltext import merge

        for db in sorted(self.seen):
            if not Path(db).exists():
                continue
            try:
                store = _beside(db)
                try:
                    merge(store.index.conn, store.lock)
                finally:
                    store.close()
            except Exception as exc:  # noqa: BLE001 - logged; the next quiet spell tries again
                print(f"merging the full-text index of {db} failed: {exc}", file=sys.stderr, flush=True)

    def _embed_missing(self, store: Any, db: str, embedder: Any, ids: list[str] | None) -> None:
        """The catch-up's work. A periodic one (no `ids`) reads the index's tags first: when they are the ones a
        scan of this helper's found nothing lacking at, no lesson or vector was written since (every such write
        replaces a tag, in its own transaction), and the scan (145 ms of CPU at 50,000 lessons, every
        CATCH_UP_EVERY_S while prompts come) is skipped. Tags read before the scan are sound to keep after it: a
        write in between replaces them, so they can never match again."""
        from rose.embed.vecfile import index_tags

        key = (db, embedder.name)
        tags = index_tags(store.index.conn) if ids is None else None
        if tags is not None and self.complete.get(key) == tags:
            return
        done = store.embed_missing(embedder, ids=ids)   # its first query is the check: one scan when nothing is missing
        if tags is not None and done == 0:
            self.complete[key] = tags


WARM = Warm()


def _beside(db: str) -> Any:
    """A Store over the folder holding index `db`: its index and its lock (both in that folder, the store's
    machine-local one) are all the helper's background work touches, never a lesson file."""
    from rose.model import Scope
    from rose.store import Store

    return Store(Path(db).parent, Scope.PROJECT)


def _ids_of(message: dict[str, Any]) -> dict[str, list[str]] | None:
    """A catch_up request's "ids" ({db: [lesson id, ...]}), or None (all that is missing) when absent or not that
    shape."""
    ids = message.get("ids")
    if not isinstance(ids, dict) or not all(isinstance(v, list) and all(isinstance(i, str) for i in v)
                                            for v in ids.values()):
        return None
    return {str(db): list(v) for db, v in ids.items()}


def background_sync(root: str, scope: str) -> None:
    """Used by recall inside the helper: a store's due full scan, in a thread of its own (one per store)."""
    WARM._in_background(("sync", root), lambda: _full_sync(root, scope))


def _full_sync(root: str, scope: str) -> None:
    from rose.model import Scope
    from rose.store import Store

    store = Store(Path(root), Scope(scope))
    try:
        store.sync()
    finally:
        store.close()


def local_dense(embed: dict[str, Any], query: str, dbs: list[str], k: int) -> dict[str, Any] | None:
    """Used by recall when it runs inside the helper: rank here, without a socket round trip to ourselves."""
    try:
        return {"ranks": WARM.rank(embed, query, dbs, k)}
    except Exception:  # noqa: BLE001 - dense is an improvement, never a requirement
        return None


class _Server(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    last_request = time.monotonic()


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        from rose.warm.client import peer_uid

        owner = peer_uid(self.connection)
        if owner is not None and owner != os.getuid():
            return  # another user's process: not a word back
        self.server.last_request = time.monotonic()  # type: ignore[attr-defined]
        from rose.warm.client import RAW_REPLY

        try:
            message = load_json(self.rfile.readline(MAX_REQUEST_BYTES))
            if message.get("op") == "hook" and message.get("reply") == "raw":   # the lean client: no json there
                self.wfile.write(RAW_REPLY + self._hook(message).encode("utf-8", "surrogateescape") + b"\n")
                return
            if message.get("op") == "command":   # an inspection command; anything but its reply means "run it there"
                served = self._command(message)
                self.wfile.write(served if served is not None else b"-not served\n")
                return
            if message.get("op") == "dense":
                reply: dict[str, Any] = {"ranks": WARM.rank(message["embed"], str(message["query"]),
                                                            list(message["dbs"]), int(message.get("k", 50)))}
            elif message.get("op") == "catch_up":
                reply = {"started": WARM.catch_up_now(message["embed"], list(message["dbs"]), _ids_of(message))}
            elif message.get("op") == "hook":
                reply = {"stdout": self._hook(message)}
            else:
                reply = {"error": f"unknown op {message.get('op')!r}"}
        except Exception as exc:  # noqa: BLE001 - the client falls back to doing the work itself
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")

    @staticmethod
    def _command(message: dict[str, Any]) -> bytes | None:
        from rose.warm import commands
        from rose.warm.client import COMMAND_REPLY

        env, streams = message.get("env"), message.get("streams")
        if not isinstance(env, dict) or not isinstance(streams, list):
            return None
        done = commands.run([str(a) for a in message["argv"]], str(message.get("cwd") or "/"),
                            {str(k): str(v) for k, v in env.items()}, [(str(e), str(r)) for e, r in streams],
                            warming=WARM.warming)
        if done is None:
            return None
        code, out, err = done
        return COMMAND_REPLY + f"{code} {len(out)} {len(err)}\n".encode() + out + err

    @staticmethod
    def _hook(message: dict[str, Any]) -> str:
        env = message.get("env")
        return _run_hook(list(message["argv"]), str(message["stdin"]), str(message.get("cwd") or "/"),
                         {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else dict(os.environ))


def _run_hook(argv: list[str], stdin: str, cwd: str, env: dict[str, str]) -> str:
    from rose import environment
    from rose.hooks.entry import run

    out = io.StringIO()
    with environment.using(env, cwd):
        run(argv, io.BytesIO(stdin.encode("utf-8", "surrogateescape")), out, cwd=Path(cwd))
    return out.getvalue()


def _claim(sock: str) -> int | None:
    """Hold the helper lock for this socket, or None when another helper already does (then this one exits)."""
    from rose.store.atomic import lock_or_close
    from rose.warm import client

    try:
        fd = client._open_private(client.sibling(sock, ".lock"), os.O_RDWR | os.O_CREAT)
    except OSError:
        return None
    return lock_or_close(fd)


def _clear_stale(path: str) -> None:
    """Remove our own stale socket or pid file; never follow, never touch what is not ours."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if st.st_uid == os.getuid() and not stat.S_ISDIR(st.st_mode):
        os.unlink(path)


def serve(sock: str) -> None:
    from rose.detach import redact_own_output
    from rose.warm import client

    redact_own_output()
    from rose.warm.commands import route_streams

    route_streams()   # after the redactor: a served command's output is captured whole, the helper's own redacted
    folder = os.path.dirname(sock)
    why = client.sound_folder(folder)
    if why is not None:
        print(f"{folder} {why}: not serving", file=sys.stderr, flush=True)
        return
    lock = _claim(sock)
    if lock is None:
        return  # another helper for this installation runs already
    client.LOCAL_DENSE = local_dense  # recall inside this process ranks here
    from rose.embed import bpe_table

    bpe_table.MAKES_TABLES = False   # the rules stay in this process's memory: the next command makes the table
    client.BACKGROUND_SYNC = background_sync   # ... and leaves a due full scan to a thread
    from rose.store import index
    from rose.store.pool import Pool
    from rose.warm.watch import Watch

    watch = Watch.open()   # unsupported (off Linux, no libc): never healthy, every sync stats every file
    index.WATCH = watch    # a sync with no event under its store since its last full scan stats no file
    pool = Pool()
    index.POOL = pool      # the indexes' connections stay open between requests
    # the imports the hook path needs, before the socket exists: a client meanwhile finds no socket and works
    # in-process at once, instead of waiting in the listen queue of a helper that is still importing
    import rose.hooks.entry
    import rose.recall  # noqa: F401
    from rose.words import everyday

    everyday()   # the general-English table lexical evidence reads: once here, not on the first prompt

    _clear_stale(sock)
    server = _Server(sock, _Handler)
    os.chmod(sock, 0o600)
    pid_path = client.sibling(sock, ".pid")
    _clear_stale(pid_path)
    fd = client._open_private(pid_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    with os.fdopen(fd, "w") as handle:
        handle.write(str(os.getpid()))
    started = time.monotonic()

    stamp = client.code_stamp()
    last_code_check = started
    tidied_after = -1.0   # the last request before the quiet spell the indexes were last tidied in

    def watchdog() -> None:
        nonlocal last_code_check, tidied_after
        while True:
            time.sleep(2)
            now = time.monotonic()
            if now - server.last_request > QUIET_S and tidied_after != server.last_request:
                tidied_after = server.last_request
                WARM._in_background("tidy", WARM.tidy)
            if now - server.last_request > IDLE_EXIT_S or now - started > MAX_LIFETIME_S:
                server.shutdown()
                return
            if now - last_code_check > CODE_CHECK_EVERY_S:   # rose was upgraded: a new helper serves the new code
                last_code_check = now
                if client.code_stamp() != stamp:
                    server.shutdown()
                    return

    threading.Thread(target=watchdog, daemon=True).start()
    # the default embedding model loads in the background; requests meanwhile are served lexical-only
    def preload() -> None:
        from rose.config import EmbedSettings
        from rose.typedrecord import asdict

        defaults = {k: getattr(v, "value", v) for k, v in asdict(EmbedSettings()).items()}
        WARM._in_background(("model", WARM._key(defaults)), lambda: WARM.load_embedder(defaults))

    preload()

    from rose.warm import commands

    WARM._in_background("commands", commands.preload)   # an inspection command's imports, once hooks are served
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        index.WATCH = None
        watch.close()
        index.POOL = None
        pool.close()
        server.server_close()
        for suffix in (".sock", ".spawn", ".pid"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(client.sibling(sock, suffix))
        os.close(lock)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m rose.warm.server SOCKET", file=sys.stderr)
        return 2
    # A request ranks one query vector against one matrix: BLAS threads gain nothing there and their idle workers
    # spin after every product (rose.embed.BLAS_THREADS). The helper is rose's own process, so one thread, always;
    # set before anything loads numpy. A request's own work runs in the caller's environment (rose.environment).
    from rose.embed import BLAS_THREADS

    os.environ.update(BLAS_THREADS)
    serve(argv[0])
    return 0


def _log_vector_skips(table: Any) -> None:
    """A vector file the helper ignored (and wrote again) or could not write: a logged skip in its store's log."""
    from rose.store.events import note_skips

    skips, table.skips = table.skips, []
    note_skips(table.db_path.parent / "events.jsonl", "vector file", skips, 1.0)


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)   # no lingering teardown beside the helper that replaces this one
