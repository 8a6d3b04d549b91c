"""A small, scriptable mock model server for tests, bound to 127.0.0.1 on a free port.

It speaks just enough of three wire formats for the real CLIs and rose's own judge backends:

- Anthropic Messages: ``POST /v1/messages`` (any query, e.g. ``?beta=true``), JSON or SSE when ``"stream": true``.
  This is what ``claude`` talks to when ``ANTHROPIC_BASE_URL`` points here.
- OpenAI Responses: ``POST /v1/responses``, SSE when ``"stream": true`` (what ``codex`` sends), JSON otherwise.
- OpenAI Chat Completions: ``POST /v1/chat/completions``, JSON (or SSE chunks when ``"stream": true``).

Anything else (``count_tokens``, telemetry, GETs) is answered ``200 {}``.

Usage::

    with MockModelServer() as mock:
        mock.enqueue(Text("first answer"), ToolUse("Bash", {"command": "echo hi"}))
        mock.handler = lambda req: Structured({"ok": True}) if "judge" in req.body_text else None
        ... run something with mock.url / mock.anthropic_base_url / mock.openai_base_url ...
        assert "MARKER" in mock.model_requests()[0].body_text

For each model request (one of the three formats above) the reply is chosen in this order:
the next queued reply (``enqueue``), else ``handler(request)`` if it returns a reply, else ``default``
(``Text("OK")``). Every request, model or not, is recorded in ``mock.requests`` (thread-safe snapshot).

Reply types are small dataclasses: ``Text``, ``ToolUse``, ``Structured``, ``Error``, ``Delay``. Each API renders them
in its own shape; e.g. ``Structured(obj)`` is a ``StructuredOutput`` tool_use for Anthropic (how
``claude -p --json-schema`` receives structured output) and a JSON text message for the OpenAI formats (how
``codex exec --output-schema`` and a chat-completions judge receive it).
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional, Union
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "Text",
    "ToolUse",
    "Structured",
    "Error",
    "Delay",
    "HELD",
    "Reply",
    "RecordedRequest",
    "MockModelServer",
    "STRUCTURED_OUTPUT_TOOL",
]

STRUCTURED_OUTPUT_TOOL = "StructuredOutput"


# ---------------------------------------------------------------------------------------------------------------------
# Replies


@dataclass(frozen=True)
class Text:
    """A plain assistant text message."""

    text: str = "OK"
    input_tokens: int = 12
    output_tokens: int = 3


@dataclass(frozen=True)
class ToolUse:
    """A tool call. Anthropic: a ``tool_use`` block. Responses / Chat: a ``function_call`` / ``tool_calls`` item.

    ``text`` optionally precedes the call (Anthropic text block / Responses message item)."""

    name: str
    input: dict = field(default_factory=dict)
    id: Optional[str] = None
    text: Optional[str] = None
    input_tokens: int = 12
    output_tokens: int = 3


@dataclass(frozen=True)
class Structured:
    """A structured (JSON) answer: ``StructuredOutput`` tool_use for Anthropic, JSON text for the OpenAI formats."""

    obj: Any
    input_tokens: int = 12
    output_tokens: int = 3


@dataclass(frozen=True)
class Error:
    """An HTTP error. ``body`` may be a dict (sent as JSON) or a string (wrapped in the API's error shape).

    Error answers carry ``x-should-retry: false``; with it claude 2.1.332 does not retry a 500 or 429 (one request),
    but a 400 makes it try 6 request variants (~1 s). codex retries a 500 ~30 times over ~25 s unless its provider
    has ``request_max_retries = 0`` / ``stream_max_retries = 0`` (``write_codex_config`` sets both)."""

    status: int = 400
    body: Union[dict, str] = "mock error"


@dataclass(frozen=True)
class Delay:
    """Wait ``seconds`` (woken early when the server closes), then send ``then`` (``None`` = the default reply)."""

    seconds: float
    then: Optional["Reply"] = None


HELD = 24 * 3600.0
"""``Delay(HELD)``: a reply that never comes while a test runs. Only ``close()`` ends it (the client gets a 503), so a
test that needs "the model has not answered" gets it for certain, not for as long as a timer outlasts a deadline."""

Reply = Union[Text, ToolUse, Structured, Error, Delay]


# ---------------------------------------------------------------------------------------------------------------------
# Requests


@dataclass
class RecordedRequest:
    method: str
    path: str  # without the query string
    query: dict  # {name: [values]}
    headers: dict  # lower-cased names
    body: Any  # parsed JSON, or None when the body was empty / not JSON
    raw: bytes
    time: float

    @property
    def api(self) -> str:
        """``anthropic`` | ``responses`` | ``chat`` | ``other``."""
        return _api_of(self.method, self.path)

    @property
    def body_text(self) -> str:
        """The body as text: handy for ``"MARKER" in req.body_text``."""
        return self.raw.decode("utf-8", "replace")

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def model(self) -> Optional[str]:
        return self.body.get("model") if isinstance(self.body, dict) else None

    def tool_names(self) -> list:
        """Names of the tools offered in this request (all three formats)."""
        if not isinstance(self.body, dict):
            return []
        names = []
        for tool in self.body.get("tools") or []:
            if isinstance(tool, dict):
                name = tool.get("name") or (tool.get("function") or {}).get("name")
                if name:
                    names.append(name)
        return names


def _api_of(method: str, path: str) -> str:
    if method != "POST":
        return "other"
    p = path.rstrip("/")
    if p.endswith("/messages"):
        return "anthropic"
    if p.endswith("/responses"):
        return "responses"
    if p.endswith("/chat/completions"):
        return "chat"
    return "other"


# ---------------------------------------------------------------------------------------------------------------------
# Rendering


def _sse(events: list) -> bytes:
    out = []
    for event in events:
        out.append(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
    return "".join(out).encode()


class _Ids:
    def __init__(self) -> None:
        self._n = itertools.count(1)
        self._lock = threading.Lock()

    def next(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_mock{next(self._n):06d}"


def _anthropic_blocks(reply: Reply, ids: _Ids) -> tuple:
    """-> (content blocks, stop_reason)."""
    if isinstance(reply, Text):
        return [{"type": "text", "text": reply.text}], "end_turn"
    if isinstance(reply, ToolUse):
        blocks = [{"type": "text", "text": reply.text}] if reply.text else []
        blocks.append({"type": "tool_use", "id": reply.id or ids.next("toolu"), "name": reply.name, "input": reply.input})
        return blocks, "tool_use"
    if isinstance(reply, Structured):
        return [{"type": "tool_use", "id": ids.next("toolu"), "name": STRUCTURED_OUTPUT_TOOL, "input": reply.obj}], "tool_use"
    raise TypeError(f"cannot render {reply!r} as an Anthropic message")


def _render_anthropic(reply: Reply, req: RecordedRequest, ids: _Ids) -> tuple:
    blocks, stop_reason = _anthropic_blocks(reply, ids)
    model = req.model or "claude-mock"
    msg_id = ids.next("msg")
    usage = {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    if not req.stream:
        body = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        return 200, "application/json", json.dumps(body).encode()
    events = [
        {
            "type": "message_start",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {**usage, "output_tokens": 1},
            },
        }
    ]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            events.append({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            events.append(
                {
                    "type": "content_block_start",
                    "index": i,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}},
                }
            )
            events.append(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                }
            )
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.output_tokens},
        }
    )
    events.append({"type": "message_stop"})
    return 200, "text/event-stream", _sse(events)


def _responses_items(reply: Reply, ids: _Ids) -> list:
    def message(text: str) -> dict:
        return {
            "type": "message",
            "id": ids.next("msg"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }

    if isinstance(reply, Text):
        return [message(reply.text)]
    if isinstance(reply, Structured):
        return [message(json.dumps(reply.obj))]
    if isinstance(reply, ToolUse):
        items = [message(reply.text)] if reply.text else []
        items.append(
            {
                "type": "function_call",
                "id": ids.next("fc"),
                "call_id": reply.id or ids.next("call"),
                "name": reply.name,
                "arguments": json.dumps(reply.input),
                "status": "completed",
            }
        )
        return items
    raise TypeError(f"cannot render {reply!r} as an OpenAI Responses output")


def _render_responses(reply: Reply, req: RecordedRequest, ids: _Ids) -> tuple:
    items = _responses_items(reply, ids)
    resp_id = ids.next("resp")
    usage = {
        "input_tokens": reply.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    base = {
        "id": resp_id,
        "object": "response",
        "created_at": int(time.time()),
        "model": req.model or "gpt-mock",
    }
    done = {**base, "status": "completed", "output": items, "usage": usage}
    if not req.stream:
        return 200, "application/json", json.dumps(done).encode()
    seq = itertools.count()
    events = [{"type": "response.created", "sequence_number": next(seq), "response": {**base, "status": "in_progress", "output": []}}]
    for i, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(
                {
                    "type": "response.output_item.added",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            events.append(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": next(seq),
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "delta": text,
                }
            )
        else:
            events.append(
                {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": i, "item": item}
            )
        events.append({"type": "response.output_item.done", "sequence_number": next(seq), "output_index": i, "item": item})
    events.append({"type": "response.completed", "sequence_number": next(seq), "response": done})
    return 200, "text/event-stream", _sse(events)


def _render_chat(reply: Reply, req: RecordedRequest, ids: _Ids) -> tuple:
    message: dict = {"role": "assistant", "content": None}
    finish = "stop"
    if isinstance(reply, Text):
        message["content"] = reply.text
    elif isinstance(reply, Structured):
        message["content"] = json.dumps(reply.obj)
    elif isinstance(reply, ToolUse):
        message["content"] = reply.text
        message["tool_calls"] = [
            {
                "id": reply.id or ids.next("call"),
                "type": "function",
                "function": {"name": reply.name, "arguments": json.dumps(reply.input)},
            }
        ]
        finish = "tool_calls"
    else:
        raise TypeError(f"cannot render {reply!r} as a chat completion")
    usage = {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": reply.output_tokens,
        "total_tokens": reply.input_tokens + reply.output_tokens,
    }
    base = {"id": ids.next("chatcmpl"), "created": int(time.time()), "model": req.model or "gpt-mock"}
    if not req.stream:
        body = {
            **base,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, "application/json", json.dumps(body).encode()
    chunk = {**base, "object": "chat.completion.chunk"}
    delta = {k: v for k, v in message.items() if v is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": 0, **c} for c in delta["tool_calls"]]
    lines = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
    ]
    data = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
    return 200, "text/event-stream", data.encode()


def _render_error(reply: Error, api: str) -> tuple:
    if isinstance(reply.body, dict):
        body = reply.body
    elif api == "anthropic":
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": reply.body}}
    else:
        body = {"error": {"message": reply.body, "type": "invalid_request_error", "code": None}}
    return reply.status, "application/json", json.dumps(body).encode()


_RENDERERS = {"anthropic": _render_anthropic, "responses": _render_responses, "chat": _render_chat}


# ---------------------------------------------------------------------------------------------------------------------
# Server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # silence stderr noise
        pass

    def _handle(self) -> None:
        mock = self.server.mock
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not length and self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        if raw and self.headers.get("Content-Encoding", "").lower() in ("gzip", "zstd", "br", "deflate"):
            raw = _decode_body(raw, self.headers.get("Content-Encoding", "").lower())
        try:
            body = json.loads(raw) if raw else None
        except (ValueError, UnicodeDecodeError):
            body = None
        parts = urlsplit(self.path)
        req = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
            time=time.time(),
        )
        mock._record(req)
        if req.api == "other":
            self._send(200, "application/json", b"{}")
            return
        try:
            status, ctype, payload = mock._reply_for(req)
        except Exception as exc:  # a broken handler must show up in the test, not hang the client
            mock._errors.append(exc)
            status, ctype, payload = 500, "application/json", json.dumps({"error": {"message": f"mock handler error: {exc!r}"}}).encode()
        self._send(status, ctype, payload)

    def _read_chunked(self) -> bytes:
        out = b""
        while True:
            size = int(self.rfile.readline().strip() or b"0", 16)
            if size == 0:
                self.rfile.readline()
                return out
            out += self.rfile.read(size)
            self.rfile.readline()

    def _send(self, status: int, ctype: str, payload: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(payload)))
            if ctype == "text/event-stream":
                self.send_header("Cache-Control", "no-cache")
            if status >= 400:
                self.send_header("x-should-retry", "false")
            self.send_header("request-id", "req_mock")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_POST = _handle
    do_GET = _handle
    do_PUT = _handle
    do_PATCH = _handle
    do_DELETE = _handle

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _decode_body(raw: bytes, encoding: str) -> bytes:
    import gzip
    import zlib

    try:
        if encoding == "gzip":
            return gzip.decompress(raw)
        if encoding == "deflate":
            return zlib.decompress(raw)
    except (OSError, zlib.error):
        pass
    return raw


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    mock: "MockModelServer"


class MockModelServer:
    """Threaded mock model server on 127.0.0.1. Use as a context manager (or ``start()`` / ``close()``)."""

    def __init__(self, default: Optional[Reply] = None, handler: Optional[Callable[[RecordedRequest], Optional[Reply]]] = None):
        self.default: Reply = default if default is not None else Text("OK")
        self.handler = handler
        self._queue: deque = deque()
        self._requests: list = []
        self._lock = threading.Lock()
        self._recorded = threading.Condition(self._lock)  # notified on every recorded request (see wait_for)
        self._count = 0  # requests recorded so far, never reset (clear() empties the list, not this)
        self._closing = threading.Event()
        self._errors: list = []
        self._ids = _Ids()
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    # -- lifecycle --------------------------------------------------------------------------------------------------
    def start(self) -> "MockModelServer":
        if self._server is not None:
            return self
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.mock = self
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="mock-model-server", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self._closing.set()  # wakes Delay replies
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "MockModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- addresses --------------------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("mock model server is not running")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash): the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    anthropic_base_url = url

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: the value for an OpenAI-style ``base_url`` (codex provider, openai SDK)."""
        return f"{self.url}/v1"

    # -- scripting --------------------------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> None:
        """Queue replies for the next model requests, in order (before ``handler`` and ``default``)."""
        with self._lock:
            self._queue.extend(replies)

    def clear(self) -> None:
        """Forget recorded requests and queued replies."""
        with self._lock:
            self._queue.clear()
            self._requests.clear()

    # -- inspection -------------------------------------------------------------------------------------------------
    @property
    def requests(self) -> list:
        """A snapshot of every request received so far (model or not), oldest first."""
        with self._lock:
            return list(self._requests)

    def model_requests(self, api: Optional[str] = None) -> list:
        """Requests to the three model endpoints (optionally only ``anthropic`` / ``responses`` / ``chat``)."""
        return [r for r in self.requests if r.api != "other" and (api is None or r.api == api)]

    def wait_for(self, predicate: Callable[[RecordedRequest], bool], timeout: float = 60.0) -> RecordedRequest:
        """Block until a recorded request satisfies ``predicate`` and return it (the first such, oldest first).

        Event-driven: every recorded request wakes the waiter, so this returns as soon as the request arrives.
        ``timeout`` only bounds a hang (a client that never comes); reaching it raises TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            with self._recorded:
                count, snapshot = self._count, list(self._requests)
            for r in snapshot:  # outside the lock: a predicate may look at mock.requests itself
                if predicate(r):
                    return r
            with self._recorded:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"no matching request within {timeout}s; got {[r.path for r in snapshot]}")
                self._recorded.wait_for(lambda: self._count != count, remaining)

    @property
    def handler_errors(self) -> list:
        """Exceptions raised by ``handler`` (each also answered with HTTP 500)."""
        return list(self._errors)

    # -- internals --------------------------------------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._recorded:
            self._requests.append(req)
            self._count += 1
            self._recorded.notify_all()

    def _choose(self, req: RecordedRequest) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.handler is not None:
            reply = self.handler(req)
            if reply is not None:
                return reply
        return self.default

    def _reply_for(self, req: RecordedRequest) -> tuple:
        reply = self._choose(req)
        while isinstance(reply, Delay):
            if self._closing.wait(reply.seconds):
                return 503, "application/json", b'{"error": {"message": "mock server closing"}}'
            reply = reply.then if reply.then is not None else self.default
        if isinstance(reply, Error):
            return _render_error(reply, req.api)
        return _RENDERERS[req.api](reply, req, self._ids)
