"""Writers of synthetic transcripts in the real line shapes of each CLI (see the captured fixtures), for tests
that need sizes or contents no fixture should hold: secrets, budgets, a 20 MB file."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "transcripts"


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class ClaudeWriter:
    def __init__(self, path: Path, session_id: str = "5e55e55e-0000-4000-8000-000000000001", cwd: str = "/work/app"):
        self.path = path
        self.session_id = session_id
        self.cwd = cwd
        self._f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - the writer owns it; close() ends it
        self._ids = itertools.count(1)

    def _line(self, kind: str, **fields: Any) -> None:
        n = next(self._ids)
        rec = {"parentUuid": None, "isSidechain": False, "type": kind, "uuid": f"u-{n}",
               "timestamp": f"2026-11-30T10:00:{n % 60:02d}.000Z", "cwd": self.cwd, "sessionId": self.session_id,
               "version": "2.1.332"}
        rec.update(fields)
        self._f.write(_dump(rec) + "\n")

    def prompt(self, text: str) -> None:
        self._line("user", message={"role": "user", "content": text})

    def _assistant(self, block: dict[str, Any], mid: str | None = None) -> None:
        self._line("assistant", message={"id": mid or f"msg_{next(self._ids)}", "type": "message",
                                         "role": "assistant", "model": "claude-opus-5-5", "content": [block]})

    def thinking(self, text: str, mid: str | None = None) -> None:
        self._assistant({"type": "thinking", "thinking": text, "signature": "sig"}, mid)

    def say(self, text: str, mid: str | None = None) -> None:
        self._assistant({"type": "text", "text": text}, mid)

    def tool(self, name: str, tool_input: dict[str, Any], output: str, error: bool = False) -> None:
        call_id = f"toolu_{next(self._ids)}"
        self._assistant({"type": "tool_use", "id": call_id, "name": name, "input": tool_input})
        self._line("user", message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": error}]})

    def injected(self, text: str) -> None:
        self._line("attachment", attachment={"type": "hook_additional_context", "content": [text],
                                             "hookEvent": "UserPromptSubmit"})

    def raw(self, line: str) -> None:
        self._f.write(line)

    def close(self) -> Path:
        self._f.close()
        return self.path


class CodexWriter:
    def __init__(self, path: Path, session_id: str = "0199c0de-0000-7000-8000-000000000001", cwd: str = "/work/app"):
        self.path = path
        self._f = open(path, "w", encoding="utf-8")  # noqa: SIM115 - the writer owns it; close() ends it
        self._ids = itertools.count(1)
        self._rec("session_meta", {"id": session_id, "cwd": cwd, "cli_version": "0.171.0", "source": "exec"})

    def _rec(self, kind: str, payload: dict[str, Any], **extra: Any) -> None:
        rec = {"timestamp": "2026-11-30T10:00:00.000Z", "type": kind, "payload": payload}
        rec.update(extra)
        self._f.write(_dump(rec) + "\n")

    def prompt(self, text: str) -> None:
        self._rec("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}],
                                    "internal_chat_message_metadata_passthrough": {
                                        "content_item_kinds": ["user.text"],
                                        "content_item_metadata": [{"provenance": {"type": "user"}}]}})

    def say(self, text: str) -> None:
        self._rec("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]})

    def thinking(self, text: str) -> None:
        self._rec("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]})

    def tool(self, cmd: str, output: str, exit_code: int = 0) -> None:
        call_id = f"call_{next(self._ids)}"
        self._rec("response_item", {"type": "function_call", "name": "exec_command",
                                    "arguments": json.dumps({"cmd": cmd}), "call_id": call_id})
        self._rec("response_item", {"type": "function_call_output", "call_id": call_id,
                                    "output": f"Chunk ID: ab12\nWall time: 0.1 seconds\nProcess exited with code "
                                              f"{exit_code}\nOriginal token count: 9\nOutput:\n{output}"})

    def close(self) -> Path:
        self._f.close()
        return self.path
