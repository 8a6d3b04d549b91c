"""The Claude Code CLI, headless, as a judge (checked against claude-code 2.1.332):

    claude -p --output-format json --json-schema SCHEMA --max-turns N --tools "" \
           --setting-sources "" --settings '{"disableAllHooks":true}' --strict-mcp-config \
           --no-session-persistence [--model M] \
           [--resume SESSION --fork-session]            < PROMPT

- The prompt goes on stdin (`-p` with no prompt argument reads it): no ARG_MAX limit, nothing in `ps`.
- `--json-schema` makes claude offer a forced `StructuredOutput` tool and validate its input; the answer is the
  `structured_output` field of the single JSON object on stdout, beside `is_error`, `subtype`, `usage`
  (`input_tokens`, `output_tokens`) and `total_cost_usd`.
- The child's hooks are off twice over: `--setting-sources ""` loads no user/project/local settings (so no hooks
  from them) and `--settings '{"disableAllHooks":true}'` disables any that remain. `ROSE_CHILD=1` in its environment
  makes rose's own hooks no-ops even if both failed.
- `--strict-mcp-config` (with no `--mcp-config`) starts no MCP server: a forking call runs in the session's folder,
  the repository, and headless claude starts the servers a project's `.mcp.json` names without the approval an
  interactive session asks for, so a repository's server command would run on every forking judge call.
- `--tools ""` offers no built-in tools; `select` passes `--tools Read,Grep,Glob` (read-only) to search the store,
  with `--add-dir` for each store folder and no allow rule: inside working folders read-only tools need no
  approval, and headless claude refuses them anywhere else (an allow rule `Read` would open every file to them).
- `--resume <id> --fork-session` forks a live session under a new id (the live one is never written to). It works
  together with `--no-session-persistence` (verified: the fork sees the parent's turns, and the fork itself is not
  saved), so every call passes it.
- A call without a session runs in an empty scratch folder, so no CLAUDE.md or project settings leak into a
  judgment; a forking call runs in the session's own folder (`cwd`), where claude looks its transcript up.
"""
from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping

from rose.text import load_json
from rose.config import AgentSettings
from rose.judge.backends import _proc
from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure

HOOKS_OFF_SETTINGS = json.dumps({"disableAllHooks": True}, separators=(",", ":"))


class ClaudeCli(Backend):
    name = "claude"
    can_fork = True

    def __init__(self, command: str = "claude", model: str = "", *, env: Mapping[str, str] | None = None):
        self.command = command
        self.model = model
        self.env = env  # None = inherit this process's environment (plus ROSE_CHILD=1)

    def argv(self, request: BackendRequest) -> list[str]:
        args = [self.command, "-p", "--output-format", "json",
                "--json-schema", json.dumps(request.schema, separators=(",", ":")),
                "--max-turns", str(request.max_turns),
                "--tools", ",".join(request.tools),
                "--setting-sources", "",
                "--settings", HOOKS_OFF_SETTINGS,
                "--strict-mcp-config",
                "--no-session-persistence"]
        for folder in request.reads:   # read-only tools need no approval inside working folders, only there
            args += ["--add-dir", folder]
        if self.model:
            args += ["--model", self.model]
        if request.session_id:
            args += ["--resume", request.session_id, "--fork-session"]
        return args

    def complete(self, request: BackendRequest) -> BackendReply:
        env = _proc.child_env(self.env)
        if request.cwd:
            done = _proc.run(self.argv(request), stdin=request.prompt, env=env, cwd=request.cwd,
                             timeout_s=request.timeout_s)
        else:
            with tempfile.TemporaryDirectory(prefix="rose-judge-") as scratch:
                done = _proc.run(self.argv(request), stdin=request.prompt, env=env, cwd=scratch,
                                 timeout_s=request.timeout_s)
        return parse_output(done)


def parse_output(done: _proc.Finished) -> BackendReply:
    try:
        result = load_json(done.stdout)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        if done.returncode != 0:
            raise JudgeFailure(FailureKind.EXIT, f"exit {done.returncode}: {_proc.tail(done.stderr or done.stdout)}")
        raise JudgeFailure(FailureKind.UNPARSEABLE, f"stdout is not one JSON object: {_proc.tail(done.stdout)!r}")
    usage = given if isinstance(given := result.get("usage"), dict) else {}
    input_tokens, output_tokens = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    cost_usd = _float(result.get("total_cost_usd"))
    if result.get("is_error"):
        why = result.get("errors") or result.get("result") or result.get("api_error_status") or "no detail"
        raise JudgeFailure(FailureKind.MODEL_ERROR, f"is_error ({result.get('subtype', '?')}): {_proc.tail(str(why))}")
    if done.returncode != 0:
        raise JudgeFailure(FailureKind.EXIT, f"exit {done.returncode}: {_proc.tail(done.stderr or done.stdout)}")
    data = result.get("structured_output")
    if data is None:
        # No StructuredOutput call: accept the final text only if it is itself a JSON object.
        text = result.get("result")
        try:
            data = load_json(text) if isinstance(text, str) else None
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise JudgeFailure(FailureKind.UNPARSEABLE, f"no structured_output; result was {_proc.tail(str(text))!r}")
    return BackendReply(data=data, raw=json.dumps(data, ensure_ascii=False), input_tokens=input_tokens,
                        output_tokens=output_tokens, cost_usd=cost_usd)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def from_settings(agent: AgentSettings) -> ClaudeCli:
    return ClaudeCli(agent.claude_command, agent.model)
