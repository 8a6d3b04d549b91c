"""The Codex CLI as a judge (checked against codex 0.171.0):

    codex exec --skip-git-repo-check --ephemeral --disable hooks --disable shell_tool --disable unified_exec \
               --sandbox read-only --json --output-schema SCHEMA_FILE -o LAST_FILE [-m MODEL] -            < PROMPT
    codex exec fork --skip-git-repo-check --ephemeral --disable hooks --disable shell_tool --disable unified_exec \
               --json --output-schema SCHEMA_FILE -o LAST_FILE [-m MODEL] SESSION -    < PROMPT

- `--output-schema` becomes the request's strict `json_schema` format, so the schema file holds the strict form
  (`schema.strict_form`: every property required, no `minLength`/`maxLength`); rose validates the full schema after.
- `-o` receives the final message text, which is the JSON answer. `--json` prints JSONL events on stdout, read only
  for `turn.completed.usage` (tokens; codex reports no cost) and `turn.failed`/`error` messages.
- `--ephemeral` writes no rollout; `--disable hooks` keeps the user's own (trusted) codex hooks from firing inside a
  judge call (`--ignore-user-config` would not: hooks.json is still read) and `ROSE_CHILD=1` silences rose's.
- No shell: `--disable shell_tool --disable unified_exec` take codex's command tools away (checked with the real
  CLI: the request offers no `exec_command` / `write_stdin`). A judgment needs none, and a lesson or a transcript
  in the prompt could otherwise have one read a private file (the read-only sandbox reads everything) and repeat it
  to the provider, or, in a fork, act with the live session's own sandbox (`exec fork` takes no sandbox flag; the
  fork inherits its parent's). `--sandbox read-only` stays for whatever tool a later codex adds.
- The prompt goes on stdin (`-` as the prompt), then stdin is closed: codex reads stdin when it is not a terminal.
"""
from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rose.text import load_json
from rose.config import AgentSettings
from rose.judge import schema as sch
from rose.judge.backends import _proc
from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure

# the user's codex hooks, and every command tool: a judgment runs nothing (see the module docstring)
NO_HOOKS_NO_SHELL = ("--disable", "hooks", "--disable", "shell_tool", "--disable", "unified_exec")


class CodexCli(Backend):
    name = "codex"
    can_fork = True

    def __init__(self, command: str = "codex", model: str = "", *, env: Mapping[str, str] | None = None):
        self.command = command
        self.model = model
        self.env = env

    def argv(self, request: BackendRequest, schema_file: Path, last_file: Path) -> list[str]:
        head = [self.command, "exec"] + (["fork"] if request.session_id else [])
        args = ["--skip-git-repo-check", "--ephemeral", *NO_HOOKS_NO_SHELL]
        if not request.session_id:
            args += ["--sandbox", "read-only"]
        args += ["--json", "--output-schema", str(schema_file), "-o", str(last_file)]
        if self.model:
            args += ["-m", self.model]
        tail = [request.session_id, "-"] if request.session_id else ["-"]
        return head + args + tail

    def complete(self, request: BackendRequest) -> BackendReply:
        with tempfile.TemporaryDirectory(prefix="rose-judge-") as scratch:
            folder = Path(scratch)
            schema_file, last_file = folder / "schema.json", folder / "last-message.txt"
            schema_file.write_text(json.dumps(sch.strict_form(request.schema)), encoding="utf-8")
            cwd = request.cwd
            if cwd is None:  # an empty folder of its own: no AGENTS.md or project config in a judgment
                cwd = str(folder / "work")
                Path(cwd).mkdir()
            done = _proc.run(self.argv(request, schema_file, last_file), stdin=request.prompt,
                             env=_proc.child_env(self.env), cwd=cwd, timeout_s=request.timeout_s)
            last = last_file.read_text(encoding="utf-8", errors="replace") if last_file.exists() else ""
        return parse_output(done, last)


def parse_output(done: _proc.Finished, last: str) -> BackendReply:
    events = _events(done.stdout)
    usage = [e["usage"] for e in events if e.get("type") == "turn.completed" and isinstance(e.get("usage"), dict)]
    failed = [_message(e) for e in events if e.get("type") == "turn.failed"]
    errors = [_message(e) for e in events if e.get("type") == "error"]
    input_tokens = sum(u.get("input_tokens") or 0 for u in usage) if usage else None
    output_tokens = sum(u.get("output_tokens") or 0 for u in usage) if usage else None
    if failed or (errors and not usage):  # an `error` followed by a completed turn was a retried blip
        raise JudgeFailure(FailureKind.MODEL_ERROR, _proc.tail((failed or errors)[-1]))
    if done.returncode != 0:
        raise JudgeFailure(FailureKind.EXIT, f"exit {done.returncode}: {_proc.tail(done.stderr or done.stdout)}")
    text = last.strip()
    if not text:
        raise JudgeFailure(FailureKind.UNPARSEABLE, "codex wrote no last message")
    try:
        data = load_json(text)
    except ValueError:
        raise JudgeFailure(FailureKind.UNPARSEABLE, f"last message is not JSON: {_proc.tail(text)!r}") from None
    return BackendReply(data=data, raw=text, input_tokens=input_tokens, output_tokens=output_tokens)


def _events(stdout: str) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        try:
            event = load_json(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def _message(event: dict[str, Any]) -> str:
    error = event.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(event.get("message") or error or event)


def from_settings(agent: AgentSettings) -> CodexCli:
    return CodexCli(agent.codex_command, agent.model)
