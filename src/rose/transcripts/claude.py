"""Claude Code transcripts: ~/.claude/projects/<cwd with / as ->/<session_id>.jsonl.

Only `user`, `assistant`, `attachment` (hook context) and `system` (compaction) lines carry the conversation;
queue operations, API request records, prompt snapshots and the rest are bookkeeping. Rules applied here:

* sidechain lines (`isSidechain: true`: sub-agents, the compaction agent) are dropped from a session's transcript;
  a sub-agent's own file (`agent-<id>.jsonl`, every line a sidechain line) is read as that sub-agent's
  conversation: session id (the parent session's), cwd, version and agent id come from its lines, and its "user"
  text, written by the parent agent, is SYNTHETIC, never the user's words;
* the blocks of one assistant API message arrive one per line, sharing `message.id`: consecutive text (or
  thinking) blocks of one message become one message; each `tool_use` is its own TOOL_CALL;
* a `user` line made of `tool_result` blocks is tool output (role tool), never the user's words; `is_error`
  gives the outcome;
* `isMeta` user lines (command caveats, expanded skill text) and harness markup are SYNTHETIC, never prompts;
* `system` `compact_boundary` opens a COMPACTION marker, and the next `isCompactSummary` user line is its text;
* `attachment` lines of type `hook_additional_context` are INJECTED context;
* assistant lines the CLI made itself (model `<synthetic>`, API error notices) are dropped.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rose.transcripts.markup import classify_user_text
from rose.transcripts.model import Agent, Conversation, Kind, Message, ToolOutcome
from rose.transcripts.reading import MAX_CHARS, MAX_LINE_BYTES, Builder, as_text, compact_json, feed_all, iter_records

_EXIT_CODE_RE = re.compile(r"\A(?:Error: )?Exit code (-?\d+)\b")
_ATTACHMENT_BLOCKS = ("image", "document")


def read_claude(path: str | Path, *, max_chars: int = MAX_CHARS,
                max_line_bytes: int = MAX_LINE_BYTES) -> Conversation:
    """Read a Claude Code transcript into one normalized Conversation (see the module docstring)."""
    path = Path(path)
    conv = new_claude_conversation(path)
    reader = ClaudeReader(Builder(conv, max_chars))
    feed_all(iter_records(path, conv, max_line_bytes), reader.feed, conv)
    reader.finish()
    return conv


def new_claude_conversation(path: Path) -> Conversation:
    return Conversation(agent=Agent.CLAUDE, session_id=path.stem, path=path)


class ClaudeReader:
    """Turns Claude Code records, fed in file order, into messages on the builder's conversation."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.conv = builder.conv
        self.seen_uuids: set[str] = set()
        self.tool_names: dict[str, str] = {}   # tool_use id -> tool name
        self.open_compaction: Message | None = None
        self.session_known = False
        self.sidechain_lines = 0
        self.main_lines = 0
        # a sub-agent's own file: named agent-<id>.jsonl, or its first conversation line is a sidechain line
        self.subagent_file: bool | None = True if builder.conv.path.name.startswith("agent-") else None

    def finish(self) -> None:
        self.conv.subagent = bool(self.subagent_file) or (self.sidechain_lines > 0 and self.main_lines == 0)

    def feed(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        if kind not in ("user", "assistant", "attachment", "system"):
            return
        sidechain = rec.get("isSidechain") is True
        if self.subagent_file is None:
            self.subagent_file = sidechain
        if sidechain:
            self.sidechain_lines += 1
            if not self.subagent_file:
                return
        else:
            self.main_lines += 1
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return  # the same line written twice (resume, retries)
            self.seen_uuids.add(uuid)
        self._note_session(rec)
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if kind == "user":
            self._user(rec, ts)
        elif kind == "assistant":
            self._assistant(rec, ts)
        elif kind == "attachment":
            self._attachment(rec, ts)
        else:
            self._system(rec, ts)

    def _note_session(self, rec: dict[str, Any]) -> None:
        if not self.session_known and isinstance(rec.get("sessionId"), str) and rec["sessionId"]:
            self.conv.session_id = rec["sessionId"]
            self.session_known = True
        if self.conv.cwd is None and isinstance(rec.get("cwd"), str):
            self.conv.cwd = rec["cwd"]
        if self.conv.version is None and isinstance(rec.get("version"), str):
            self.conv.version = rec["version"]
        if self.subagent_file and self.conv.agent_id is None:
            agent_id = rec.get("agentId")
            stem = self.conv.path.stem
            self.conv.agent_id = agent_id if isinstance(agent_id, str) and agent_id else (
                stem[len("agent-"):] if stem.startswith("agent-") else None)

    # -- user lines: prompts, tool results, compaction summaries, harness notes ----------------------------------

    def _user(self, rec: dict[str, Any], ts: str | None) -> None:
        content = (rec.get("message") or {}).get("content")
        if rec.get("isCompactSummary"):
            self._compaction_summary(as_text(content), ts)
            return
        meta = rec.get("isMeta") is True
        if isinstance(content, str):
            self._user_text(content, ts, meta)
            return
        if not isinstance(content, list):
            return
        texts: list[str] = []
        had_results = False
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "tool_result":
                had_results = True
                self._tool_result(block, ts)
            elif block_type == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block_type in _ATTACHMENT_BLOCKS:
                texts.append(f"[{block_type}]")
        if texts:
            # text riding along with tool results is the harness's (interrupt notes), not a typed prompt
            self._user_text("\n\n".join(texts), ts, meta or had_results)

    def _user_text(self, text: str, ts: str | None, system_made: bool) -> None:
        kind, kept = classify_user_text(text)
        if kind is None:
            return
        if (system_made or self.subagent_file) and kind in (Kind.PROMPT, Kind.COMMAND):
            kind, kept = Kind.SYNTHETIC, text   # the harness's, or the parent agent's words to its sub-agent
        self.b.add(kind, kept, timestamp=ts)

    def _tool_result(self, block: dict[str, Any], ts: str | None) -> None:
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
        text = as_text(block.get("content"))
        failed = block.get("is_error") is True
        m = _EXIT_CODE_RE.match(text)
        self.b.add(Kind.TOOL_RESULT, text, timestamp=ts, tool_name=self.tool_names.get(call_id or ""),
                   call_id=call_id, outcome=ToolOutcome.FAILED if failed else ToolOutcome.SUCCEEDED,
                   exit_code=int(m.group(1)) if m else None)

    def _compaction_summary(self, text: str, ts: str | None) -> None:
        marker = self.open_compaction
        if marker is not None and not marker.text:
            self.b.append_text(marker, text)
        else:
            self.b.add(Kind.COMPACTION, text, timestamp=ts)
        self.open_compaction = None

    # -- assistant lines: one content block each, grouped by message.id -----------------------------------------

    def _assistant(self, rec: dict[str, Any], ts: str | None) -> None:
        message = rec.get("message") or {}
        if message.get("model") == "<synthetic>" or rec.get("isApiErrorMessage"):
            return
        response_id = message.get("id") if isinstance(message.get("id"), str) else None
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text":
                self._piece(Kind.TEXT, as_text(block.get("text")), response_id, ts)
            elif block_type == "thinking":
                self._piece(Kind.REASONING, as_text(block.get("thinking")), response_id, ts)
            elif block_type in ("tool_use", "server_tool_use"):
                self._tool_call(block, response_id, ts)
            elif isinstance(block_type, str) and block_type.endswith("_tool_result"):
                self._server_tool_result(block, ts)

    def _piece(self, kind: Kind, text: str, response_id: str | None, ts: str | None) -> None:
        if not text.strip():
            return  # thinking shown as "omitted" arrives empty, with only a signature
        last = self.b.last
        if last is not None and last.kind is kind and response_id and last.response_id == response_id:
            self.b.append_text(last, text)
        else:
            self.b.add(kind, text, timestamp=ts, response_id=response_id)

    def _tool_call(self, block: dict[str, Any], response_id: str | None, ts: str | None) -> None:
        name = given if isinstance(given := block.get("name"), str) else "tool"
        call_id = ident if isinstance(ident := block.get("id"), str) else None
        if call_id:
            self.tool_names[call_id] = name
        self.b.add(Kind.TOOL_CALL, compact_json(block.get("input", {})), timestamp=ts, tool_name=name,
                   call_id=call_id, response_id=response_id)

    def _server_tool_result(self, block: dict[str, Any], ts: str | None) -> None:
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
        content = block.get("content")
        failed = isinstance(content, dict) and str(content.get("type", "")).endswith("_error")
        text = compact_json(content) if failed else f"[{block.get('type')}]"
        self.b.add(Kind.TOOL_RESULT, text, timestamp=ts, tool_name=self.tool_names.get(call_id or ""),
                   call_id=call_id, outcome=ToolOutcome.FAILED if failed else ToolOutcome.SUCCEEDED)

    # -- attachments and system lines ----------------------------------------------------------------------------

    def _attachment(self, rec: dict[str, Any], ts: str | None) -> None:
        attachment = rec.get("attachment") or {}
        if isinstance(attachment, dict) and attachment.get("type") == "hook_additional_context":
            text = as_text(attachment.get("content"))
            if text.strip():
                self.b.add(Kind.INJECTED, text, timestamp=ts)

    def _system(self, rec: dict[str, Any], ts: str | None) -> None:
        subtype = rec.get("subtype")
        if isinstance(subtype, str) and subtype.endswith("compact_boundary"):
            self.open_compaction = self.b.add(Kind.COMPACTION, "", timestamp=ts)
