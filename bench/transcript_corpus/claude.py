"""Claude Code transcripts, 2.0.x to 2.1.x line shapes, from a scenario script.

What changes with the version (as the captured fixtures and the research notes describe them):

    all        user / assistant lines with uuid, parentUuid, isSidechain, sessionId, cwd, gitBranch, version;
               each assistant content block on its own line sharing message.id; tool results in user lines
               (is_error, "Exit code N"), toolUseResult beside them; thinking blocks with a signature;
               compact_boundary + isCompactSummary; images as base64 blocks
    2.0.x      a `summary` line first (a resumed session), file-history-snapshot lines; hook context as a
               meta user line; before 2.0.60 a sub-agent's lines are inline in the session file (isSidechain)
    >= 2.0.60  a sub-agent writes its own agent-<id>.jsonl beside the session (2.1.x: <session>/subagents/)
    2.1.x      attachment lines (hook_additional_context, environment), queue-operation and last-prompt lines,
               entrypoint, promptId
"""
from __future__ import annotations

import base64
import json
import random
from pathlib import Path
from typing import Any

from scenario import Compact, Injected, Prompt, Say, Script, SubAgent, Synthetic, Think, Tool, token

VERSIONS = ("2.0.14", "2.0.37", "2.0.76", "2.1.9", "2.1.45", "2.1.332")


def _vt(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def fake_png(rng: random.Random, kb: int) -> str:
    raw = b"\x89PNG\r\n\x1a\n" + rng.randbytes(kb * 1024)
    return base64.b64encode(raw).decode("ascii")


class _Lines:
    def __init__(self, script: Script, rng: random.Random, path: Path, sidechain: bool = False,
                 agent_id: str | None = None, into: Any = None):
        self.s = script
        self.rng = rng
        self.path = path
        self.f = into if into is not None else open(path, "w", encoding="utf-8")  # noqa: SIM115
        self.parent: str | None = None
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.clock = 0
        self.v = _vt(script.version)

    def ts(self) -> str:
        self.clock += self.rng.randint(1, 20)
        s = self.clock
        ms = self.rng.randint(0, 999)
        return f"2026-10-{1 + (s // 86400) % 28:02d}T{(s // 3600) % 24:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{ms:03d}Z"

    def uuid(self) -> str:
        r = self.rng
        return f"{token(r, 8)}-{token(r, 4)}-4{token(r, 3)}-a{token(r, 3)}-{token(r, 12)}".translate(
            str.maketrans("ghijklmnopqrstuvwxyz", "0123456789abcdef0123"))

    def raw(self, rec: dict[str, Any]) -> None:
        self.f.write(_dump(rec) + "\n")

    def line(self, kind: str, **fields: Any) -> str:
        uid = self.uuid()
        rec: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": self.sidechain, "userType": "external",
                               "cwd": self.s.cwd, "sessionId": self.s.session_id, "version": self.s.version,
                               "gitBranch": "main"}
        if self.agent_id:
            rec["agentId"] = self.agent_id
        if self.v >= (2, 1, 0):
            rec["entrypoint"] = "cli"
        rec.update({"type": kind, "uuid": uid, "timestamp": self.ts()})
        rec.update(fields)
        self.raw(rec)
        self.parent = uid
        return uid

    def close(self) -> None:
        self.f.close()


class ClaudeRenderer:
    def __init__(self, script: Script, rng: random.Random, out_dir: Path):
        self.s = script
        self.rng = rng
        self.out_dir = out_dir
        self.v = _vt(script.version)
        self.path = out_dir / f"{script.session_id}.jsonl"
        self.files = [self.path]

    def render(self) -> list[Path]:
        w = _Lines(self.s, self.rng, self.path)
        if self.v < (2, 1, 0) and self.rng.random() < 0.3:
            w.raw({"type": "summary", "summary": "Fixing the checkout flow", "leafUuid": w.uuid()})
        for step in self.s.steps:
            self._step(w, step)
        w.close()
        return self.files

    # -- steps -------------------------------------------------------------------------------------------------

    def _step(self, w: _Lines, step: Any) -> None:
        if isinstance(step, Prompt):
            self._prompt(w, step)
        elif isinstance(step, Think):
            self._assistant(w, [{"type": "thinking", "thinking": step.text, "signature": token(self.rng, 40)}])
        elif isinstance(step, Say):
            self._assistant(w, [{"type": "text", "text": step.text}])
        elif isinstance(step, Tool):
            self._tool(w, step)
        elif isinstance(step, Compact):
            self._compact(w, step)
        elif isinstance(step, Injected):
            if self.v >= (2, 1, 0):
                w.line("attachment", attachment={"type": "hook_additional_context", "content": [step.text],
                                                 "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                                                 "toolUseID": f"hook-{w.uuid()}"})
            else:
                w.line("user", isMeta=True, message={"role": "user", "content": (
                    f"<system-reminder>\nUserPromptSubmit hook additional context: {step.text}\n</system-reminder>")})
        elif isinstance(step, Synthetic):
            w.line("user", message={"role": "user", "content": [{"type": "text", "text": step.text}]})

    def _prompt(self, w: _Lines, p: Prompt) -> None:
        if self.v >= (2, 1, 0):
            w.raw({"type": "queue-operation", "operation": "enqueue", "timestamp": w.ts(),
                   "sessionId": self.s.session_id, "content": p.text[:2000]})
            w.raw({"type": "queue-operation", "operation": "dequeue", "timestamp": w.ts(),
                   "sessionId": self.s.session_id})
        content: Any = p.text
        if p.images:
            content = [{"type": "text", "text": p.text}] + [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": fake_png(self.rng, self.rng.randint(20, 120))}}
                for _ in range(p.images)]
        fields: dict[str, Any] = {"message": {"role": "user", "content": content}}
        if self.v >= (2, 1, 0):
            fields["promptId"] = w.uuid()
            fields["permissionMode"] = "default"
        w.line("user", **fields)
        if self.v >= (2, 0, 30) and self.rng.random() < 0.5:
            w.raw({"type": "file-history-snapshot", "messageId": w.uuid(), "isSnapshotUpdate": False,
                   "snapshot": {"messageId": w.uuid(), "trackedFileBackups": {}, "timestamp": w.ts()}})

    def _assistant(self, w: _Lines, blocks: list[dict[str, Any]], mid: str | None = None,
                   lines: _Lines | None = None) -> None:
        mid = mid or f"msg_01{token(self.rng, 22)}"
        for block in blocks:
            w.line("assistant", requestId=f"req_011{token(self.rng, 21)}", message={
                "model": "claude-sonnet-4-5-20250929" if self.v < (2, 1, 0) else "claude-opus-5-5", "id": mid,
                "type": "message", "role": "assistant", "content": [block],
                "stop_reason": "tool_use" if block["type"] == "tool_use" else None, "stop_sequence": None,
                "usage": {"input_tokens": self.rng.randint(3, 9), "cache_read_input_tokens":
                          self.rng.randint(1000, 90000), "output_tokens": self.rng.randint(10, 900)}})

    def _tool(self, w: _Lines, t: Tool) -> None:
        r = self.rng
        call_id = f"toolu_01{token(r, 22)}"
        name, tool_input = self._call(t)
        self._assistant(w, [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}])
        if t.sub is not None:
            self._subagent(w, t.sub)
        content: Any
        extra: dict[str, Any] = {}
        if t.image:
            content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                    "data": fake_png(r, r.randint(30, 200))}}]
        elif t.failed and t.error_kind == "edit_miss":
            content = f"<tool_use_error>{t.output}</tool_use_error>"
            extra["toolUseResult"] = f"Error: {t.output}"
        elif t.failed and t.error_kind == "rejected":
            content = t.output
            extra["toolUseResult"] = "User rejected tool use"
        elif t.failed:
            content = f"Exit code {t.exit_code}\n{t.output}"
            extra["toolUseResult"] = f"Error: Exit code {t.exit_code}\n{t.output}"
        elif t.kind == "task":
            content = [{"type": "text", "text": t.output}]
            extra["toolUseResult"] = {"status": "completed", "content": content, "totalDurationMs": 9000}
        else:
            content = t.output
            if t.kind == "read":
                extra["toolUseResult"] = {"type": "text", "file": {"filePath": f"{self.s.cwd}/{t.target}",
                                                                   "content": t.output, "numLines": t.output.count(
                                                                       "\n") + 1}}
            elif t.kind == "bash":
                extra["toolUseResult"] = {"stdout": t.output, "stderr": "", "interrupted": False,
                                          "isImage": False}
        w.line("user", message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": t.failed}]}, **extra)

    def _call(self, t: Tool) -> tuple[str, dict[str, Any]]:
        path = f"{self.s.cwd}/{t.target}"
        if t.kind == "read":
            return "Read", {"file_path": path}
        if t.kind in ("edit", "patch"):
            return "Edit", {"file_path": path, "old_string": "return total", "new_string": "return total or 0"}
        if t.kind == "write":
            return "Write", {"file_path": path, "content": "# generated\n"}
        if t.kind == "grep":
            return "Grep", {"pattern": t.target, "path": self.s.cwd, "output_mode": "content"}
        if t.kind == "glob":
            return "Glob", {"pattern": t.target}
        if t.kind == "task":
            return "Task", {"description": "Find callers", "prompt": t.target, "subagent_type": "Explore"}
        return "Bash", {"command": t.target, "description": "Run " + t.target.split()[0]}

    def _subagent(self, w: _Lines, sub: SubAgent) -> None:
        if self.v < (2, 0, 60):
            side = _Lines(self.s, self.rng, self.path, sidechain=True, agent_id=sub.agent_id, into=w.f)  # inline
            side.clock = w.clock
            self._sub_lines(side, sub)
            w.clock = side.clock
            return
        where = (self.out_dir / self.s.session_id / "subagents") if self.v >= (2, 1, 0) else self.out_dir
        where.mkdir(parents=True, exist_ok=True)
        path = where / f"agent-{sub.agent_id}.jsonl"
        side = _Lines(self.s, self.rng, path, sidechain=True, agent_id=sub.agent_id)
        self._sub_lines(side, sub)
        side.close()
        self.files.append(path)

    def _sub_lines(self, side: _Lines, sub: SubAgent) -> None:
        side.line("user", message={"role": "user", "content": sub.prompt})
        for step in sub.steps:
            self._step(side, step)
        self._assistant(side, [{"type": "text", "text": sub.result}])

    def _compact(self, w: _Lines, c: Compact) -> None:
        if c.manual:
            w.line("user", isMeta=True, message={"role": "user", "content": (
                "<local-command-caveat>Caveat: The messages below were generated by the user while running local "
                "commands. DO NOT respond to these messages.</local-command-caveat>")})
            w.line("user", message={"role": "user", "content": (
                "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
                "<command-args></command-args>")})
        w.parent = None
        w.line("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False, level="info",
               compactMetadata={"trigger": "manual" if c.manual else "auto",
                                "preTokens": self.rng.randint(150_000, 190_000)})
        w.line("user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={"role": "user", "content": (
            "This session is being continued from a previous conversation that ran out of context. The summary "
            f"below covers the earlier portion of the conversation.\n\n{c.summary}")})
        if c.manual:
            w.line("user", message={"role": "user", "content": (
                "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>")})
