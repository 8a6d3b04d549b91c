"""Run the real, pinned ``claude`` and ``codex`` CLIs offline, in a temporary HOME, against the mock model server.

The CLIs are installed by ``scripts/install-agent-clis.sh`` (run by ``scripts/test-setup.sh``, which ``dev.py test``
runs) into ``.cache/agent-clis/``. Everything here was checked against claude-code 2.1.332 and codex 0.171.0; see
docs/testing-real-clis.md for what each flag does and what was measured.

Typical use::

    with MockModelServer() as mock:
        cmd = write_recorder_hook(tmp / "hook", tmp / "hooks.jsonl", additional_context="MARKER")
        write_claude_project_hooks(project, ["UserPromptSubmit", "Stop"], cmd)
        cp = run_claude(["-p", "hi", "--output-format", "json"], cwd=project, home=home, mock_url=mock.url)

Each run gets a clean environment built from scratch (PATH, HOME, TMPDIR inside HOME, locale, plus the CLI's own
variables): nothing leaks from the calling shell, e.g. a developer's real API key or the ``CLAUDECODE`` variables
when the tests themselves run inside Claude Code.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

__all__ = [
    "CLAUDE_CODE_VERSION",
    "CODEX_VERSION",
    "AgentCliMissing",
    "require",
    "agent_clis_dir",
    "claude_bin",
    "codex_bin",
    "base_env",
    "claude_env",
    "codex_env",
    "run_cli",
    "run_claude",
    "run_codex_exec",
    "claude_judge_args",
    "codex_judge_args",
    "write_codex_config",
    "write_recorder_hook",
    "read_hook_log",
    "hooks_block",
    "write_claude_project_hooks",
    "write_codex_hooks",
    "codex_list_hooks",
    "codex_trust_hooks",
    "claude_transcripts",
    "codex_rollouts",
    "MOCK_CODEX_MODEL",
    "MOCK_CODEX_KEY_ENV",
]

# Keep in sync with scripts/install-agent-clis.sh.
CLAUDE_CODE_VERSION = "2.1.332"
CODEX_VERSION = "0.171.0"

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TIMEOUT = 60.0

MOCK_CODEX_MODEL = "gpt-mock"  # unknown to codex: it warns "Model metadata ... not found" and uses fallback metadata
MOCK_CODEX_KEY_ENV = "ROSE_MOCK_API_KEY"

PathLike = Union[str, os.PathLike]


class AgentCliMissing(RuntimeError):
    """The pinned CLI is not installed where the tests expect it."""


# ---------------------------------------------------------------------------------------------------------------------
# Binaries


def agent_clis_dir() -> Path:
    """``$ROSE_AGENT_CLIS_DIR`` or ``<repo>/.cache/agent-clis``."""
    return Path(os.environ.get("ROSE_AGENT_CLIS_DIR") or REPO_ROOT / ".cache" / "agent-clis")


def _installed_bin(name: str, package: str, version: str) -> Path:
    root = agent_clis_dir()
    path = root / "node_modules" / ".bin" / name
    hint = "run `bash scripts/install-agent-clis.sh` (or `python3 dev.py test`, which runs scripts/test-setup.sh)"
    if not path.exists():
        raise AgentCliMissing(f"{name} is not installed: {path} does not exist; {hint}")
    try:
        found = json.loads((root / "node_modules" / package / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        found = None
    if found != version:
        raise AgentCliMissing(f"{package} in {root} is {found or 'unreadable'}, the tests pin {version}; {hint}")
    if name == "claude" and path.resolve().stat().st_size < 100_000:
        # claude-code's bin/claude.exe is a 500-byte stub until its postinstall copies the native binary over it.
        raise AgentCliMissing(f"{path} is still the placeholder stub (its postinstall did not run); {hint}")
    return path


def claude_bin() -> Path:
    """Path of the pinned ``claude`` (``.cache/agent-clis/node_modules/.bin/claude``, a native ELF binary)."""
    return _installed_bin("claude", "@anthropic-ai/claude-code", CLAUDE_CODE_VERSION)


def codex_bin() -> Path:
    """Path of the pinned ``codex`` (the npm ``bin/codex.js`` launcher, which spawns the native musl binary)."""
    return _installed_bin("codex", "@openai/codex", CODEX_VERSION)


def require(getter: Callable[[], Path]) -> Path:
    """``require(claude_bin)``: the binary, or a failed test saying how to install it. e2e tests never skip: CI must
    prove the real CLIs."""
    import pytest

    try:
        return getter()
    except AgentCliMissing as exc:
        message = str(exc)
    pytest.fail(f"{message}\n(e2e tests never skip: CI must prove the real CLIs)", pytrace=False)


# ---------------------------------------------------------------------------------------------------------------------
# Environments


def base_env(home: PathLike, extra: Optional[Mapping[str, str]] = None) -> dict:
    """A minimal environment: PATH, HOME, TMPDIR (``<home>/tmp``), locale. Nothing else is inherited."""
    home = Path(home)
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmp),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "USER": os.environ.get("USER", "rose-test"),
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    if extra:
        env.update(extra)
    return env


def claude_env(home: PathLike, mock_url: str, extra: Optional[Mapping[str, str]] = None) -> dict:
    """Environment for ``claude`` against the mock at ``mock_url`` (``http://127.0.0.1:PORT``, no ``/v1``)."""
    env = base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": mock_url,
            "ANTHROPIC_API_KEY": "dummy",
            # Without it claude resolves other hosts (DNS on port 53) at start: seen with strace.
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
    )
    if extra:
        env.update(extra)
    return env


def codex_env(home: PathLike, extra: Optional[Mapping[str, str]] = None) -> dict:
    """Environment for ``codex``; the provider itself comes from ``<home>/.codex/config.toml`` (``write_codex_config``)."""
    env = base_env(home)
    env[MOCK_CODEX_KEY_ENV] = "dummy"
    if extra:
        env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------------------------------
# Running


def run_cli(
    cmd: Sequence[PathLike],
    *,
    cwd: PathLike,
    env: Mapping[str, str],
    timeout: float = DEFAULT_TIMEOUT,
    input: Optional[str] = None,
) -> subprocess.CompletedProcess:
    """Run ``cmd`` in its own process group; on timeout kill the whole group and raise ``TimeoutExpired``.

    The group kill matters for codex: its npm launcher (node) spawns the native binary, and killing only the launcher
    leaves the native process running. The result carries ``.duration`` (seconds)."""
    argv = [str(c) for c in cmd]
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=str(cwd),
        env=dict(env),
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        raise subprocess.TimeoutExpired(argv, timeout, output=out, stderr=err) from None
    except BaseException:
        _kill_group(proc)
        proc.communicate()
        raise
    finally:
        # Hooks may leave detached grandchildren in the group (that is how rose hands off slow work); they are not
        # ours to wait for, but a test must not leave them running either.
        _kill_group(proc, only_if_alive=False)
    cp = subprocess.CompletedProcess(argv, proc.returncode, out, err)
    cp.duration = time.monotonic() - start  # type: ignore[attr-defined]
    return cp


def _kill_group(proc: subprocess.Popen, only_if_alive: bool = True) -> None:
    if only_if_alive and proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_claude(
    args: Sequence[PathLike],
    *,
    cwd: PathLike,
    home: PathLike,
    mock_url: str,
    timeout: float = DEFAULT_TIMEOUT,
    env: Optional[Mapping[str, str]] = None,
    input: Optional[str] = None,
) -> subprocess.CompletedProcess:
    """``claude ARGS`` offline against the mock. Pass ``-p PROMPT`` yourself (headless: no trust dialog)."""
    return run_cli([claude_bin(), *args], cwd=cwd, env=claude_env(home, mock_url, env), timeout=timeout, input=input)


def run_codex_exec(
    args: Sequence[PathLike],
    *,
    cwd: PathLike,
    home: PathLike,
    mock_url: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Optional[Mapping[str, str]] = None,
    bypass_hook_trust: bool = False,
    skip_git_repo_check: bool = True,
    input: Optional[str] = None,
) -> subprocess.CompletedProcess:
    """``codex exec [--skip-git-repo-check] [--dangerously-bypass-hook-trust] ARGS`` against the mock.

    ``mock_url`` is the mock's ``openai_base_url`` (``http://127.0.0.1:PORT/v1``). When given and
    ``<home>/.codex/config.toml`` does not exist yet, a config is written with the mock provider and ``cwd`` as a
    trusted project. Otherwise the existing config is used as is (write it with ``write_codex_config``)."""
    home = Path(home)
    if mock_url is not None and not (home / ".codex" / "config.toml").exists():
        write_codex_config(home, mock_url, trusted_projects=[cwd])
    flags = ["exec"]
    if skip_git_repo_check:
        flags.append("--skip-git-repo-check")
    if bypass_hook_trust:
        flags.append("--dangerously-bypass-hook-trust")
    return run_cli([codex_bin(), *flags, *args], cwd=cwd, env=codex_env(home, env), timeout=timeout, input=input)


def claude_judge_args(
    prompt: str,
    schema: Mapping,
    *,
    model: Optional[str] = None,
    max_turns: int = 3,
    hooks_off: str = "setting-sources",
) -> list:
    """Flags for a headless structured-output call (``claude -p ... --json-schema``), checked against the mock.

    stdout is one JSON object with ``structured_output`` (the ``StructuredOutput`` tool's input), ``result``,
    ``is_error``, ``subtype``, ``usage``, ``total_cost_usd``. ``hooks_off``: ``setting-sources`` (``--setting-sources
    ""``: no user/project/local settings, so no hooks), ``disable-all-hooks`` (``--settings
    '{"disableAllHooks":true}'``), ``bare`` (``--bare``) or ``none``."""
    args = ["-p", prompt, "--output-format", "json", "--json-schema", json.dumps(schema), "--max-turns", str(max_turns),
            "--tools", "", "--no-session-persistence"]
    if model:
        args += ["--model", model]
    args += {
        "setting-sources": ["--setting-sources", ""],
        "disable-all-hooks": ["--settings", json.dumps({"disableAllHooks": True})],
        "bare": ["--bare"],
        "none": [],
    }[hooks_off]
    return args


def codex_judge_args(prompt: str, schema_file: PathLike, last_message_file: PathLike, *, hooks_off: bool = True) -> list:
    """Flags after ``codex exec`` for a structured-output call: ``--output-schema`` becomes the request's
    ``text.format`` (``json_schema``, ``strict: true``, name ``codex_output_schema``), ``-o`` receives the final
    message text (the JSON). ``--ephemeral`` writes no rollout. ``--disable hooks`` keeps the user's own (trusted)
    hooks from firing inside the judge call; ``--ignore-user-config`` does NOT do that (``~/.codex/hooks.json`` is
    still read)."""
    args = ["--ephemeral", "--output-schema", str(schema_file), "-o", str(last_message_file)]
    if hooks_off:
        args += ["--disable", "hooks"]
    return [*args, prompt]


# ---------------------------------------------------------------------------------------------------------------------
# Configuration files


def _toml_str(value: str) -> str:
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def write_codex_config(
    home: PathLike,
    mock_url: str,
    *,
    trusted_projects: Iterable[PathLike] = (),
    model: str = MOCK_CODEX_MODEL,
    max_retries: int = 0,
    extra_toml: str = "",
) -> Path:
    """Write ``<home>/.codex/config.toml`` for the mock provider (``wire_api = "responses"``, ``plugins = false``).

    ``trusted_projects`` get ``trust_level = "trusted"``: needed for ``<project>/.codex/`` hooks to load at all.
    ``max_retries`` sets the provider's ``request_max_retries`` / ``stream_max_retries``: codex's defaults retry an
    HTTP 500 about 30 times over ~25 s, so tests use 0. ``extra_toml``: its leading ``key = value`` lines go to the
    top level (e.g. ``model_auto_compact_token_limit = 1000``), anything from its first ``[table]`` on is appended."""
    codex_home = Path(home) / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    top, tables = _split_toml(extra_toml)
    lines = [
        f"model = {_toml_str(model)}",
        'model_provider = "mock"',
        *top,
        "",
        "[model_providers.mock]",
        'name = "mock"',
        f"base_url = {_toml_str(mock_url)}",
        f"env_key = {_toml_str(MOCK_CODEX_KEY_ENV)}",
        'wire_api = "responses"',
        f"request_max_retries = {int(max_retries)}",
        f"stream_max_retries = {int(max_retries)}",
        "",
        "[features]",
        "plugins = false  # otherwise codex reaches for other hosts at start",
    ]
    for project in trusted_projects:
        lines += ["", f"[projects.{_toml_str(os.path.realpath(project))}]", 'trust_level = "trusted"']
    if tables:
        lines += ["", *tables]
    path = codex_home / "config.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _split_toml(extra: str) -> tuple:
    """Top-level ``key = value`` lines before the first ``[table]`` vs the rest."""
    top, rest, in_table = [], [], False
    for line in extra.splitlines():
        if line.strip().startswith("["):
            in_table = True
        (rest if in_table else top).append(line)
    return top, rest


_RECORDER = r'''#!/usr/bin/env python3
"""Written by tests/support/agent_clis.py: record each hook call, optionally inject additionalContext."""
import json, os, sys, time
raw = sys.stdin.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {"_unparsed_stdin": raw}
entry = {
    "argv": sys.argv[1:],
    "payload": payload,
    "env": {k: v for k, v in os.environ.items() if k.startswith(("CLAUDE", "CODEX"))},
    "time": time.time(),
}
with open(LOG, "a", encoding="utf-8") as f:
    f.write(json.dumps(entry) + "\n")
event = payload.get("hook_event_name") if isinstance(payload, dict) else None
if event == "UserPromptSubmit" and CONTEXT is not None:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": CONTEXT}}))
'''


def write_recorder_hook(directory: PathLike, log: PathLike, *, additional_context: Optional[str] = None) -> str:
    """Write a tiny hook script into ``directory`` that appends ``{"payload", "env", "argv", "time"}`` per call to
    ``log`` (JSON lines) and, for UserPromptSubmit, prints ``additionalContext``. Returns the shell command to put
    in a hook definition."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "record_hook.py"
    header = f"LOG = {str(log)!r}\nCONTEXT = {additional_context!r}\n"
    body = _RECORDER.replace("import json, os, sys, time\n", "import json, os, sys, time\n" + header, 1)
    script.write_text(body)
    script.chmod(0o755)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def read_hook_log(log: PathLike) -> list:
    """The recorder's entries (``[]`` when no hook ran)."""
    path = Path(log)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def hooks_block(events: Iterable[str], command: str, *, timeout: Optional[int] = 30, matcher: Optional[str] = None) -> dict:
    """``{"hooks": {Event: [{"hooks": [{"type": "command", "command": ..., "timeout": ...}]}]}}`` (same shape for both
    CLIs). Note for SessionEnd: claude kills a SessionEnd hook after ~1 s unless it has an explicit ``timeout``
    (then that applies); codex clamps a SessionEnd ``timeout`` to 3 s (~1 s without one)."""
    handler: dict = {"type": "command", "command": command}
    if timeout is not None:
        handler["timeout"] = timeout
    group: dict = {"hooks": [handler]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"hooks": {event: [json.loads(json.dumps(group))] for event in events}}


def write_claude_project_hooks(project: PathLike, events: Iterable[str], command: str, *, local: bool = False, **kw) -> Path:
    """Write ``<project>/.claude/settings.json`` (or ``settings.local.json``) with command hooks for ``events``.

    Claude silently ignores a settings file that fails validation, so keep to this shape."""
    path = Path(project) / ".claude" / ("settings.local.json" if local else "settings.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(hooks_block(events, command, **kw), indent=2) + "\n")
    return path


def write_codex_hooks(directory: PathLike, events: Iterable[str], command: str, **kw) -> Path:
    """Write ``<directory>/.codex/hooks.json``: ``directory`` is a project (loaded only when the project is trusted)
    or a HOME (user hooks). Either way codex runs them only when trusted: ``--dangerously-bypass-hook-trust`` or
    ``codex_trust_hooks``."""
    path = Path(directory) / ".codex" / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(hooks_block(events, command, **kw), indent=2) + "\n")
    return path


class _JsonRpcPipe:
    """Newline-delimited JSON-RPC over a child's stdio, with a reader thread so every wait is bounded."""

    def __init__(self, proc: subprocess.Popen) -> None:
        import queue
        import threading

        self.proc = proc
        self.lines: "queue.Queue" = queue.Queue()
        self._empty = queue.Empty
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def notify(self, method: str, params: Optional[dict] = None) -> None:
        message: dict = {"method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def call(self, id_: int, method: str, params: dict, deadline: float) -> dict:
        self._send({"id": id_, "method": method, "params": params})
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"codex app-server did not answer {method}")
            try:
                line = self.lines.get(timeout=remaining)
            except self._empty:
                continue
            if line is None:
                raise RuntimeError(f"codex app-server exited before answering {method}")
            message = json.loads(line)
            if message.get("id") == id_:
                if "error" in message:
                    raise RuntimeError(f"codex app-server {method} failed: {message['error']}")
                return message["result"]

    def _send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()


def codex_list_hooks(home: PathLike, cwd: PathLike, *, timeout: float = DEFAULT_TIMEOUT) -> list:
    """``hooks/list`` through ``codex app-server`` (JSON-RPC over stdio): every hook codex sees for ``cwd`` with its
    ``key`` (``<file>:<snake_event>:<group>:<handler>``), ``currentHash`` (``sha256:...``), ``trustStatus``
    (``untrusted`` | ``trusted`` | ``modified`` | ``managed``), ``source`` (``user`` | ``project`` | ...)."""
    proc = subprocess.Popen(
        [str(codex_bin()), "app-server"],
        cwd=str(cwd),
        env=codex_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        rpc = _JsonRpcPipe(proc)
        rpc.call(1, "initialize", {"clientInfo": {"name": "rose-tests", "version": "0"}}, deadline)
        rpc.notify("initialized")
        result = rpc.call(2, "hooks/list", {"cwds": [os.path.realpath(cwd)]}, deadline)
    finally:
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            pass
        _kill_group(proc, only_if_alive=False)
        proc.wait(timeout=DEFAULT_TIMEOUT)
        if proc.stdout:
            proc.stdout.close()
    hooks = []
    for entry in result.get("data", []):
        hooks.extend(entry.get("hooks", []))
    return hooks


def codex_trust_hooks(home: PathLike, cwd: PathLike) -> list:
    """Persistently trust every untrusted/modified hook codex sees for ``cwd``, the way codex stores it: append
    ``[hooks.state."<key>"] trusted_hash = "<currentHash>"`` to ``<home>/.codex/config.toml``. Returns the keys.

    Afterwards ``codex exec`` runs them without ``--dangerously-bypass-hook-trust``. Project hooks additionally need
    the project's ``trust_level = "trusted"`` (``write_codex_config(trusted_projects=...)``)."""
    hooks = [h for h in codex_list_hooks(home, cwd) if h.get("trustStatus") in ("untrusted", "modified")]
    config = Path(home) / ".codex" / "config.toml"
    with config.open("a") as f:
        for h in hooks:
            f.write(f"\n[hooks.state.{_toml_str(h['key'])}]\ntrusted_hash = {_toml_str(h['currentHash'])}\n")
    return [h["key"] for h in hooks]


# ---------------------------------------------------------------------------------------------------------------------
# Transcripts


def claude_transcripts(home: PathLike) -> list:
    """``<home>/.claude/projects/<cwd with / and . replaced by ->/<session_id>.jsonl``, oldest first."""
    return sorted((Path(home) / ".claude" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_mtime)


def codex_rollouts(home: PathLike) -> list:
    """``<home>/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<thread_id>.jsonl``, oldest first."""
    return sorted((Path(home) / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"), key=lambda p: p.stat().st_mtime)
