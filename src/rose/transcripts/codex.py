"""Codex rollouts: ~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl, lines {timestamp, type, payload}.

The conversation is in `response_item` lines (messages, reasoning, tool calls and their outputs); `event_msg`
lines mostly repeat them and are read for exit codes and for prompts; `compacted` marks a compaction. Rules
applied here:

* a user-role message mixes the user's text with harness items (environment context, AGENTS.md, skill lists):
  each content item is classified on its own, by the provenance Codex records beside it
  (`internal_chat_message_metadata_passthrough`: kind `user.text`, provenance `user` / `harness`) and, in
  rollouts without that metadata, by its markup;
* a prompt recorded as an `event_msg` of type `user_message` (older rollouts record some prompts only there)
  is a prompt too, unless the same text is also a response_item user message, written just before or after it:
  each typed prompt is one message, whichever of the two lines comes first;
* developer messages are harness instructions; those carrying hook additionalContext become INJECTED;
* an assistant message flagged `compaction_output` is a compaction summary, not the agent speaking;
* item ids name single items, not API responses, so `response_id` stays None (a response is a run of items);
* a tool output fails when its exit code is not 0 ("Process exited with code N", "Exit code: N", the older JSON
  `{"output", "metadata": {"exit_code"}}`, or the matching exec end event), or when it is a harness error
  ("failed to parse function arguments", "apply_patch verification failed", ...).
"""
from __future__ import annotations

import re
from collections import deque
from pathlib import Path
from typing import Any

from rose.text import load_json
from rose.transcripts.markup import classify_user_text, has_rose_block
from rose.transcripts.model import Agent, Conversation, Kind, Message, ToolOutcome
from rose.transcripts.reading import MAX_CHARS, MAX_LINE_BYTES, Builder, as_text, compact_json, feed_all, iter_records

_UUID_TAIL_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)
_WS_RE = re.compile(r"\s+")
_EXIT_RE = re.compile(r"^(?:Process exited with code|Exit code:?)\s+(-?\d+)\s*$")
_HARNESS_ERRORS = (
    "failed to parse function arguments", "execution error", "apply_patch verification failed",
    "unsupported call", "error: ", "aborted", "exec command rejected", "sandbox error", "patch rejected",
)
_CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call", "web_search_call")
_OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output")
_DEFAULT_TOOL_NAMES = {"local_shell_call": "local_shell", "web_search_call": "web_search"}


def read_codex(path: str | Path, *, max_chars: int = MAX_CHARS,
               max_line_bytes: int = MAX_LINE_BYTES) -> Conversation:
    """Read a Codex rollout into one normalized Conversation (see the module docstring)."""
    path = Path(path)
    conv = new_codex_conversation(path)
    reader = CodexReader(Builder(conv, max_chars))
    feed_all(iter_records(path, conv, max_line_bytes), reader.feed, conv)
    reader.finish()
    return conv


def new_codex_conversation(path: Path) -> Conversation:
    m = _UUID_TAIL_RE.search(path.stem)
    return Conversation(agent=Agent.CODEX, session_id=m.group(1) if m else path.stem, path=path)


_PAIR_WINDOW = 16   # prompts remembered while waiting for their twin (the response item or the event)


class CodexReader:
    """Turns Codex rollout records, fed in file order, into messages on the builder's conversation."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.conv = builder.conv
        self.meta_seen = False
        self.tool_names: dict[str, str] = {}
        self.results: dict[str, Message] = {}                 # call id -> its TOOL_RESULT
        self.exit_events: dict[str, tuple[bool, int | None]] = {}  # call id -> (failed, exit code) seen first
        self.open_compaction: Message | None = None
        self.item_prompts: deque[str] = deque(maxlen=_PAIR_WINDOW)   # response-item prompts without their event
        self.event_prompts: deque[str] = deque(maxlen=_PAIR_WINDOW)  # event prompts without their response item

    def finish(self) -> None:
        pass

    def feed(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        payload = rec.get("payload")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if not isinstance(payload, dict):
            return
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            if self.conv.cwd is None and isinstance(payload.get("cwd"), str):
                self.conv.cwd = payload["cwd"]
        elif kind == "response_item":
            self._item(payload, meta if isinstance(meta := rec.get("metadata"), dict) else {}, ts)
        elif kind == "event_msg":
            self._event(payload, ts)
        elif kind == "compacted":
            self._compacted(payload, ts)

    def _session_meta(self, p: dict[str, Any]) -> None:
        if self.meta_seen:
            return  # a resumed or forked rollout repeats the meta of its origin
        self.meta_seen = True
        sid = p.get("id") or p.get("session_id")
        if isinstance(sid, str) and sid:
            self.conv.session_id = sid
        if isinstance(p.get("cwd"), str):
            self.conv.cwd = p["cwd"]
        if isinstance(p.get("cli_version"), str):
            self.conv.version = p["cli_version"]
        source = p.get("source")
        self.conv.subagent = isinstance(source, dict) and "subagent" in source

    # -- response items ---------------------------------------------------------------------------------------

    def _item(self, p: dict[str, Any], meta: dict[str, Any], ts: str | None) -> None:
        kind = p.get("type")
        if kind == "message":
            self._message(p, meta, ts)
        elif kind == "reasoning":
            parts = [as_text(s) for s in (p.get("summary") or []) if isinstance(s, dict)]
            parts += [as_text(c) for c in (p.get("content") or []) if isinstance(c, dict)]
            text = "\n\n".join(t for t in parts if t.strip())
            if text:
                self.b.add(Kind.REASONING, text, timestamp=ts)
        elif kind in _CALL_TYPES:
            self._call(kind, p, ts)
        elif kind in _OUTPUT_TYPES:
            self._output(p, ts)
        elif kind in ("compaction", "compaction_summary"):
            self.open_compaction = self.b.add(Kind.COMPACTION, "", timestamp=ts)

    def _message(self, p: dict[str, Any], meta: dict[str, Any], ts: str | None) -> None:
        role = p.get("role")
        content = p.get("content")
        items = content if isinstance(content, list) else [{"type": "input_text", "text": as_text(content)}]
        passthrough = p.get("internal_chat_message_metadata_passthrough")
        passthrough = passthrough if isinstance(passthrough, dict) else {}
        if role == "assistant":
            text = "\n\n".join(t for t in (as_text(i) for i in items if isinstance(i, dict)) if t)
            if meta.get("compaction_output"):
                self.open_compaction = self.b.add(Kind.COMPACTION, text, timestamp=ts)
            elif text.strip():
                self.b.add(Kind.TEXT, text, timestamp=ts)
        elif role in ("developer", "system"):
            text = "\n\n".join(as_text(i) for i in items if isinstance(i, dict))
            if _is_hook_context(passthrough) or has_rose_block(text) or (
                    not passthrough and not text.lstrip().startswith("<")):
                self.b.add(Kind.INJECTED, text, timestamp=ts)
        elif role == "user":
            self._user_message(items, passthrough, ts)

    def _user_message(self, items: list[Any], passthrough: dict[str, Any], ts: str | None) -> None:
        kinds = passthrough.get("content_item_kinds")
        provenance = passthrough.get("content_item_metadata")
        parts: list[tuple[Kind, str]] = []
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                continue
            if item.get("type") in ("input_image", "image"):
                parts.append((Kind.PROMPT, "[image]"))
                continue
            text = as_text(item.get("text"))
            item_kind = kinds[i] if isinstance(kinds, list) and i < len(kinds) else None
            source = _provenance(provenance, i)
            if item_kind is None and source is None:
                kind, kept = classify_user_text(text)          # no metadata: read the markup
            elif source == "user" or (isinstance(item_kind, str) and item_kind.startswith("user.")):
                kind, kept = classify_user_text(text)          # the user's text, still stripped of our blocks
            elif source == "hook" or "hook" in str(item_kind) or "agents" in str(item_kind).lower() \
                    or has_rose_block(text):
                kind, kept = Kind.INJECTED, text
            else:
                kind, kept = classify_user_text(text)
                if kind in (Kind.PROMPT, Kind.COMMAND):
                    kind = None                                # harness-made: never the user's words
            if kind is not None:
                parts.append((kind, kept))
        merged: list[tuple[Kind, str]] = []
        for kind, text in parts:
            if merged and merged[-1][0] is kind:
                merged[-1] = (kind, f"{merged[-1][1]}\n\n{text}")
            else:
                merged.append((kind, text))
        for kind, text in merged:
            if kind in (Kind.PROMPT, Kind.COMMAND):
                key = _prompt_key(text)
                if _take(self.event_prompts, key):
                    continue   # already added from its user_message event
                self.item_prompts.append(key)
            self.b.add(kind, text, timestamp=ts)

    def _call(self, kind: str, p: dict[str, Any], ts: str | None) -> None:
        name = _str(p.get("name")) or _DEFAULT_TOOL_NAMES.get(kind, "tool")
        call_id = _str(p.get("call_id")) or _str(p.get("id"))
        if kind == "function_call":
            arguments = p.get("arguments")
            try:
                text = compact_json(load_json(arguments)) if isinstance(arguments, str) else compact_json(arguments)
            except ValueError:
                text = as_text(arguments)
        elif kind == "custom_tool_call":
            text = as_text(p.get("input"))
        else:
            text = compact_json(p.get("action", {}))
        if call_id:
            self.tool_names[call_id] = name
        self.b.add(Kind.TOOL_CALL, text, timestamp=ts, tool_name=name, call_id=call_id)

    def _output(self, p: dict[str, Any], ts: str | None) -> None:
        call_id = _str(p.get("call_id"))
        text, exit_code, failed, running = _parse_output(p.get("output"))
        if exit_code is None and call_id in self.exit_events:
            failed_event, exit_code = self.exit_events.pop(call_id)
            failed = failed or failed_event
        if exit_code is not None:
            outcome = ToolOutcome.FAILED if exit_code != 0 or failed else ToolOutcome.SUCCEEDED
        elif failed:
            outcome = ToolOutcome.FAILED
        elif running:
            outcome = ToolOutcome.UNKNOWN
        else:
            outcome = ToolOutcome.SUCCEEDED
        msg = self.b.add(Kind.TOOL_RESULT, text, timestamp=ts, tool_name=self.tool_names.get(call_id or ""),
                         call_id=call_id, outcome=outcome, exit_code=exit_code)
        if call_id:
            self.results[call_id] = msg

    # -- events: exit codes, and prompts recorded only as an event ------------------------------------------------

    def _event(self, p: dict[str, Any], ts: str | None) -> None:
        kind = p.get("type")
        if kind == "user_message":
            self._user_event(p, ts)
        elif kind == "exec_command_end":
            code = p.get("exit_code")
            self._exit(_str(p.get("call_id")), isinstance(code, int) and code != 0, code)
        elif kind == "item_completed" and isinstance(p.get("item"), dict):
            item = p["item"]
            if item.get("type") == "CommandExecution":
                code = item.get("exit_code")
                failed = (isinstance(code, int) and code != 0) or item.get("status") in ("failed", "declined")
                self._exit(_str(item.get("id")), failed, code)
        elif kind == "patch_apply_end":
            self._exit(_str(p.get("call_id")), p.get("success") is False, None)

    def _user_event(self, p: dict[str, Any], ts: str | None) -> None:
        if p.get("kind") not in (None, "plain"):
            return   # older rollouts also sent AGENTS.md and the environment this way; response items carry them
        text = p.get("message")
        if not isinstance(text, str):
            return
        kind, kept = classify_user_text(text)
        if kind not in (Kind.PROMPT, Kind.COMMAND):
            return
        key = _prompt_key(kept)
        if _take(self.item_prompts, key):
            return   # the response item came first
        images = [i for key in ("images", "local_images") if isinstance(p.get(key), list) for i in p[key] if i]
        if images:
            kept = "\n\n".join([kept] + ["[image]"] * len(images))
        self.event_prompts.append(key)
        self.b.add(kind, kept, timestamp=ts)

    def _exit(self, call_id: str | None, failed: bool, code: Any) -> None:
        if not call_id:
            return
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        result = self.results.get(call_id)
        if result is None:
            self.exit_events[call_id] = (failed, code)
            return
        if result.exit_code is None and code is not None:
            result.exit_code = code
        if failed:
            result.outcome = ToolOutcome.FAILED

    def _compacted(self, p: dict[str, Any], ts: str | None) -> None:
        if self.open_compaction is None:
            self.b.add(Kind.COMPACTION, as_text(p.get("message")), timestamp=ts)
        self.open_compaction = None


def _parse_output(raw: Any) -> tuple[str, int | None, bool, bool]:
    """(body text, exit code, failed, still running) of a tool output in any of the shapes Codex has used."""
    failed = False
    if isinstance(raw, dict):
        failed = raw.get("success") is False
        raw = raw.get("content", raw.get("output"))
    if not isinstance(raw, str):
        return as_text(raw), None, failed, False
    if raw.startswith('{"output"') or (raw.startswith("{") and '"metadata"' in raw):
        try:
            obj = load_json(raw)
        except ValueError:
            obj = None
        if isinstance(obj, dict) and "output" in obj:
            meta = found if isinstance(found := obj.get("metadata"), dict) else {}
            code = meta.get("exit_code")
            return as_text(obj["output"]), code if isinstance(code, int) else None, failed, False
    exit_code, running, body = _strip_header(raw)
    if exit_code is None and not running and raw.lstrip().lower().startswith(_HARNESS_ERRORS):
        failed = True
    return body, exit_code, failed, running


def _strip_header(raw: str) -> tuple[int | None, bool, str]:
    """The exec envelope (Chunk ID / Wall time / Process exited with code N / Output:) parsed off the body."""
    if "Output:" not in raw[:600]:
        m = _EXIT_RE.match(raw.split("\n", 1)[0])
        return (int(m.group(1)) if m else None), False, raw
    exit_code: int | None = None
    running: str | None = None
    lines = raw.split("\n", 8)
    for i, line in enumerate(lines[:8]):
        if line.strip() == "Output:":
            body = "\n".join(lines[i + 1:])
            # a command still running keeps that line: a later write_stdin to the session gives its end
            return exit_code, running is not None, f"{running}\n{body}" if running else body
        m = _EXIT_RE.match(line)
        if m:
            exit_code = int(m.group(1))
        elif line.startswith("Process running with session ID"):
            running = line.strip()
        elif not line.startswith(("Chunk ID:", "Wall time:", "Original token count:", "Total output lines:",
                                  "Command:")):
            break
    return exit_code, running is not None, raw


def _provenance(metadata: Any, i: int) -> str | None:
    if not isinstance(metadata, list) or i >= len(metadata) or not isinstance(metadata[i], dict):
        return None
    prov = metadata[i].get("provenance")
    if not isinstance(prov, dict):
        return None
    if prov.get("hook") is True:
        return "hook"
    return _str(prov.get("type"))


def _is_hook_context(passthrough: dict[str, Any]) -> bool:
    kinds = passthrough.get("content_item_kinds")
    if isinstance(kinds, list) and any(isinstance(k, str) and k.startswith("hooks.") for k in kinds):
        return True
    metadata = passthrough.get("content_item_metadata")
    return isinstance(metadata, list) and any(_provenance(metadata, i) == "hook" for i in range(len(metadata)))


def _prompt_key(text: str) -> str:
    """What a prompt's response item and its event have in common: its words, without image placeholders."""
    return _WS_RE.sub(" ", text.replace("[image]", "")).strip()


def _take(pending: deque[str], key: str) -> bool:
    """Remove key from pending (the first occurrence) and say whether it was there."""
    try:
        pending.remove(key)
    except ValueError:
        return False
    return True


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
