"""Codex rollouts, 0.4x to 0.171 line shapes, from a scenario script.

    all        {timestamp, type, payload} lines: session_meta, turn_context, response_item (message, reasoning,
               function_call / function_call_output), event_msg (token_count, agent_message, user_message),
               compacted
    0.4x       a `shell` tool with argv arguments; outputs are JSON strings {"output", "metadata": {"exit_code"}};
               edits are `apply_patch` run through the shell; user_message events carry `kind: "plain"`; some
               prompts are recorded only as a user_message event
    0.5x-0.6x  shell outputs as text: "Exit code: N / Wall time: ... / Output:"; apply_patch as a custom tool
    0.7x       exec_command with "Process exited with code N"; still some event-only prompts
    0.171      "Chunk ID / Wall time / Process exited with code N / Original token count / Output:", provenance
               metadata on user items, hook context as developer messages, item_completed events, world_state and
               token_usage_record lines, compaction_output before `compacted`
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from scenario import Compact, Injected, Prompt, Say, Script, Synthetic, Think, Tool, token

VERSIONS = ("0.42.0", "0.46.0", "0.53.0", "0.63.0", "0.77.0", "0.171.0")


def _vt(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class CodexRenderer:
    def __init__(self, script: Script, rng: random.Random, out_dir: Path):
        self.s = script
        self.rng = rng
        self.v = _vt(script.version)
        self.path = out_dir / f"rollout-2026-10-01T09-00-00-{script.session_id}.jsonl"
        self.clock = 0
        self.f = None
        self.turn = 0

    def ts(self) -> str:
        self.clock += self.rng.randint(1, 15)
        s = self.clock
        ms = self.rng.randint(0, 999)
        return f"2026-10-01T{9 + (s // 3600) % 14:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{ms:03d}Z"

    def rec(self, kind: str, payload: dict[str, Any], **extra: Any) -> None:
        line = {"timestamp": self.ts(), "type": kind, "payload": payload}
        line.update(extra)
        self.f.write(_dump(line) + "\n")

    def render(self) -> list[Path]:
        with open(self.path, "w", encoding="utf-8") as self.f:
            meta: dict[str, Any] = {"id": self.s.session_id, "timestamp": self.ts(), "cwd": self.s.cwd,
                                    "originator": "codex_cli_rs", "cli_version": self.s.version,
                                    "git": {"branch": "main", "commit_hash": token(self.rng, 40)}}
            if self.v >= (0, 63, 0):
                meta["source"] = "cli"
                meta["model_provider"] = "openai"
            if self.v < (0, 50, 0):
                meta["instructions"] = None
            if self.v >= (0, 100, 0):
                meta["session_id"] = self.s.session_id
            self.rec("session_meta", meta)
            self._user_item([f"# AGENTS.md instructions for {self.s.cwd}\n\n<INSTRUCTIONS>\nRun `make test` before "
                             "committing.\n</INSTRUCTIONS>"], "agents")
            self._user_item([f"<environment_context>\n  <cwd>{self.s.cwd}</cwd>\n  <shell>bash</shell>\n"
                             "</environment_context>"], "environment")
            for step in self.s.steps:
                self._step(step)
        return [self.path]

    # -- messages ------------------------------------------------------------------------------------------------

    def _passthrough(self, kinds: list[str], provenance: list[str]) -> dict[str, Any]:
        return {"turn_id": f"turn-{self.turn}", "content_item_kinds": kinds,
                "content_item_metadata": [{"provenance": {"type": p, "hook": False}} for p in provenance]}

    def _user_item(self, texts: list[str], what: str, images: int = 0) -> None:
        content: list[dict[str, Any]] = [{"type": "input_text", "text": t} for t in texts]
        content += [{"type": "input_image", "image_url": "data:image/png;base64," + token(self.rng, 400)}
                    for _ in range(images)]
        payload: dict[str, Any] = {"type": "message", "role": "user", "content": content}
        if self.v >= (0, 100, 0):
            kind = {"agents": "agents_md", "environment": "environments.environment_context"}.get(what, "user.text")
            prov = "user" if what == "user" else "harness"
            payload["internal_chat_message_metadata_passthrough"] = self._passthrough(
                [kind] * len(texts) + ["user.image"] * images, [prov] * (len(texts) + images))
        self.rec("response_item", payload)

    def _turn_context(self) -> None:
        self.turn += 1
        ctx: dict[str, Any] = {"cwd": self.s.cwd, "approval_policy": "on-request",
                               "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex",
                               "effort": "medium", "summary": "auto"}
        if self.v >= (0, 100, 0):
            ctx["turn_id"] = f"turn-{self.turn}"
        self.rec("turn_context", ctx)

    def _step(self, step: Any) -> None:
        if isinstance(step, Prompt):
            self._prompt(step)
        elif isinstance(step, Think):
            self.rec("response_item", {"type": "reasoning", "id": f"rs_{token(self.rng, 20)}",
                                       "summary": [{"type": "summary_text", "text": step.text}], "content": None,
                                       "encrypted_content": "gAAAAB" + token(self.rng, 300)})
            if self.v < (0, 100, 0):
                self.rec("event_msg", {"type": "agent_reasoning", "text": step.text})
        elif isinstance(step, Say):
            self.rec("response_item", {"type": "message", "role": "assistant", "id": f"msg_{token(self.rng, 20)}",
                                       "content": [{"type": "output_text", "text": step.text}]})
            self.rec("event_msg", {"type": "agent_message", "message": step.text})
            self.rec("event_msg", {"type": "token_count", "info": {"total_token_usage": {
                "input_tokens": self.rng.randint(1000, 200000), "output_tokens": self.rng.randint(10, 9000)}}})
        elif isinstance(step, Tool):
            self._tool(step)
        elif isinstance(step, Compact):
            if self.v >= (0, 100, 0):
                self.rec("response_item", {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": step.summary}]}, metadata={"compaction_output": True})
            self.rec("compacted", {"message": step.summary})
        elif isinstance(step, Injected):
            if self.v >= (0, 100, 0):
                self.rec("response_item", {"type": "message", "role": "developer", "content": [
                    {"type": "input_text", "text": step.text}],
                    "internal_chat_message_metadata_passthrough": {"content_item_kinds": ["hooks.additional_context"]}})
        elif isinstance(step, Synthetic):
            self._user_item(["<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"],
                            "harness")

    def _prompt(self, p: Prompt) -> None:
        self._turn_context()
        if self.v >= (0, 100, 0):
            self.rec("event_msg", {"type": "task_started", "turn_id": f"turn-{self.turn}"})
        event_only = self.v < (0, 100, 0) and self.rng.random() < 0.15
        event: dict[str, Any] = {"type": "user_message", "message": p.text, "images": []}
        if self.v < (0, 50, 0):
            event["kind"] = "plain"
        if not event_only:
            self._user_item([p.text], "user")
        if self.v < (0, 100, 0) or self.rng.random() < 0.5:
            self.rec("event_msg", event)

    # -- tools ---------------------------------------------------------------------------------------------------

    def _tool(self, t: Tool) -> None:
        r = self.rng
        call_id = f"call_{token(r, 24)}"
        if t.kind in ("edit", "patch", "write"):
            self._patch(t, call_id)
            return
        cmd = {"read": f"sed -n '1,400p' {t.target}", "grep": f"rg -n {t.target} src",
               "glob": f"rg --files {t.target.split('/**')[0]}", "task": "true"}.get(t.kind, t.target)
        code = t.exit_code if t.exit_code is not None else (1 if t.failed else 0)
        if t.failed and t.error_kind == "rejected":
            code = 1
        if self.v < (0, 70, 0):
            args = {"command": ["bash", "-lc", cmd], "workdir": self.s.cwd, "timeout_ms": 120000}
            self.rec("response_item", {"type": "function_call", "name": "shell", "arguments": _dump(args),
                                       "call_id": call_id})
            if self.v < (0, 50, 0):
                out = _dump({"output": t.output, "metadata": {"exit_code": code,
                                                              "duration_seconds": round(r.random() * 4, 1)}})
            else:
                out = f"Exit code: {code}\nWall time: {r.random() * 4:.1f} seconds\nOutput:\n{t.output}"
        else:
            args = {"cmd": cmd, "workdir": self.s.cwd, "yield_time_ms": 10000}
            self.rec("response_item", {"type": "function_call", "name": "exec_command", "arguments": _dump(args),
                                       "call_id": call_id, "id": f"fc_{token(r, 20)}", "status": "completed"})
            if self.v >= (0, 100, 0):
                self.rec("event_msg", {"type": "item_completed", "turn_id": f"turn-{self.turn}", "item": {
                    "type": "CommandExecution", "id": call_id, "command": ["/bin/bash", "-lc", cmd],
                    "status": "failed" if code else "completed", "exit_code": code}})
                out = (f"Chunk ID: {token(r, 6)}\nWall time: {r.random() * 4:.4f} seconds\nProcess exited with "
                       f"code {code}\nOriginal token count: {len(t.output) // 4}\nOutput:\n{t.output}")
            else:
                out = f"Process exited with code {code}\nWall time: {r.random() * 4:.1f} seconds\nOutput:\n{t.output}"
        self.rec("response_item", {"type": "function_call_output", "call_id": call_id, "output": out})

    def _patch(self, t: Tool, call_id: str) -> None:
        patch = (f"*** Begin Patch\n*** Update File: {t.target}\n@@\n-    return total\n+    return total or 0\n"
                 "*** End Patch\n")
        ok = f"Success. Updated the following files:\nM {t.target}\n"
        if self.v < (0, 50, 0):
            args = {"command": ["apply_patch", patch], "workdir": self.s.cwd}
            self.rec("response_item", {"type": "function_call", "name": "shell", "arguments": _dump(args),
                                       "call_id": call_id})
            out = _dump({"output": t.output if t.failed else ok,
                         "metadata": {"exit_code": 1 if t.failed else 0, "duration_seconds": 0.0}})
        else:
            self.rec("response_item", {"type": "custom_tool_call", "name": "apply_patch", "input": patch,
                                       "call_id": call_id, "status": "completed"})
            if t.failed:
                out = f"apply_patch verification failed: {t.output}"
            else:
                out = f"Exit code: 0\nWall time: 0.0 seconds\nOutput:\n{ok}"
            if self.v >= (0, 100, 0):
                self.rec("event_msg", {"type": "patch_apply_end", "call_id": call_id, "success": not t.failed})
        kind = "function_call_output" if self.v < (0, 50, 0) else "custom_tool_call_output"
        self.rec("response_item", {"type": kind, "call_id": call_id, "output": out})
