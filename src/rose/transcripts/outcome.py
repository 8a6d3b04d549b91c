"""The outcome of a session read from what was executed, not from what anyone said about it.

    result = execution_outcome(conv)       # ExecutionOutcome(outcome, evidence, handles, check, reason)

`verified`  the session changed state (a file edit or write tool, apply_patch, or a shell command that writes) and
            then ran a recognised check (a test runner, build, type checker or linter), and the latest run of each
            check run after the last change passed;
`failed`    the same, but the latest run of one of those checks failed;
`unknown`   no change, no recognised check after the last change, or no exit status to read.

Exit status comes from the tool results only: Claude's `is_error` and its "Exit code N" text, Codex's exit codes
(as the readers parse them). A check whose status its own command hides (piped into another command, followed by
`|| true` or by more commands after `;`) is judged by its output's summary line when it has a recognisable one
("2 failed, 5 passed", "test result: FAILED", "Found 3 errors", ...), and otherwise not at all. A change that
failed (an edit whose target text was not found, a rejected patch) changed nothing and does not count. Commands
that only record state (`git commit`, `git push`, `git add`) or install dependencies are not changes.

"Latest run of each check" groups runs by tool family (pytest, cargo test, tsc, ...): a targeted `pytest -k x`
that fails and a whole `pytest` run after it that passes is verified; `pytest` passing and then `mypy` failing is
failed.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from rose.text import load_json
from rose.model import Outcome
from rose.transcripts.model import Conversation, Kind, Message, ToolOutcome

_EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "str_replace_based_edit_tool",
                         "write_file", "edit_file", "create_file"})
_SHELL_TOOLS = frozenset({"Bash", "exec_command", "shell", "local_shell", "container.exec", "shell_command",
                          "unified_exec", "run_command"})
_STDIN_TOOLS = frozenset({"write_stdin"})                 # Codex: more input to / output of a running command
_BACKGROUND_OUTPUT_TOOLS = frozenset({"BashOutput", "TaskOutput"})   # Claude: a background command's output


@dataclass(frozen=True)
class ExecutionOutcome:
    outcome: Outcome               # VERIFIED, FAILED or UNKNOWN (rose.model.Outcome)
    evidence: tuple[int, ...]      # message indices, in order: the last change (its result), the deciding check's
                                   # call and the result that gave its verdict
    handles: tuple[str, ...]       # the same, as session://<session>/message/<n>
    check: str | None              # the deciding check's command, as run
    reason: str                    # one line: why this outcome


@dataclass
class _Run:
    call: Message
    result: Message | None
    command: str | None            # the shell command, for shell tools
    family: str | None             # the check it runs, if any
    change: bool
    status: bool | None            # True passed, False failed, None no verdict (checks only)
    change_seg: int = 0            # which simple command of the shell line wrote, and which ran the check:
    check_seg: int = 0             # `sed -i ... && make test` checks after its own change
    started: Message | None = None  # the call that started the check, when its verdict came in a later call

    @property
    def origin(self) -> Message:
        return self.started or self.call

    @property
    def change_at(self) -> tuple[int, int]:
        return (self.call.n, self.change_seg)

    @property
    def check_at(self) -> tuple[int, int]:
        return (self.call.n, self.check_seg)


def execution_outcome(conversation: Conversation, since: int = 0) -> ExecutionOutcome:
    """The session's outcome from its executed checks (module docstring); only messages n >= since count."""
    runs = _runs(conversation, since)
    changes = [r for r in runs if r.change]
    if not changes:
        checks = [r for r in runs if r.family]
        why = "no change to the code was made" + (f" (checks ran: {len(checks)})" if checks else "")
        return _unknown(why)
    last_change = max(changes, key=lambda r: r.change_at)
    latest: dict[str, _Run] = {}
    after = sorted((r for r in runs if r.family and r.check_at > last_change.change_at), key=lambda r: r.check_at)
    for r in after:
        if r.status is not None:
            latest[r.family] = r   # type: ignore[index]
    if not latest:
        if after:
            return _unknown(f"the checks after the last change ({after[-1].command}) left no exit status to read")
        return _unknown("no recognised check ran after the last change")
    failed = [r for r in latest.values() if r.status is False]
    decider = max(failed or latest.values(), key=lambda r: r.check_at)
    change_n = last_change.result.n if last_change.result is not None else last_change.call.n
    evidence = tuple(sorted({change_n, decider.origin.n} | ({decider.result.n} if decider.result else set())))
    handles = tuple(conversation.handle(n) for n in evidence)
    passed = sorted(r.family or "" for r in latest.values() if r.status)   # a passing run always has a family
    if failed:
        reason = f"after the last change, `{decider.command}` failed" + (
            f" (passed: {', '.join(passed)})" if passed else "")
        return ExecutionOutcome(Outcome.FAILED, evidence, handles, decider.command, reason)
    return ExecutionOutcome(Outcome.VERIFIED, evidence, handles, decider.command,
                            f"after the last change, {', '.join(passed)} passed (last: `{decider.command}`)")


def _unknown(reason: str) -> ExecutionOutcome:
    return ExecutionOutcome(Outcome.UNKNOWN, (), (), None, reason)


# -- pairing calls with results ----------------------------------------------------------------------------------

_RUNNING_RE = re.compile(r"Process running with session ID (\d+)")
_BACKGROUND_ID_RE = re.compile(r"running in background with ID:\s*(\S+)", re.I)
_XML_EXIT_RE = re.compile(r"<exit_code>\s*(-?\d+)\s*</exit_code>")
_XML_STATUS_RE = re.compile(r"<status>\s*(\w+)\s*</status>")


def _runs(conv: Conversation, since: int) -> list[_Run]:
    results: dict[str, Message] = {}
    for m in conv.messages:
        if m.kind is Kind.TOOL_RESULT and m.call_id and m.call_id not in results:
            results[m.call_id] = m
    runs: list[_Run] = []
    pending: _Run | None = None                       # a call without an id waits for the next result
    running: dict[str, _Run] = {}                     # Codex session id / Claude background id -> its run
    for m in conv.messages:
        if m.kind is Kind.TOOL_RESULT and m.call_id is None and pending is not None:
            pending.result = m
            _settle(pending, running)
            pending = None
            continue
        if m.kind is not Kind.TOOL_CALL or m.n < since:
            continue
        result = results.get(m.call_id) if m.call_id else None
        run = _classify(m, result)
        if run.family is None and not run.change:
            _continuation(m, result, running)
        if run.family or run.change:
            runs.append(run)
        if m.call_id is None:
            pending = run
        else:
            _settle(run, running)
    return runs


def _settle(run: _Run, running: dict[str, _Run]) -> None:
    """The run's status from its result, and whether it is still going (to be finished by a later call)."""
    result = run.result
    if result is None:
        return
    if run.change and result.failed and not (run.family and run.check_seg > run.change_seg):
        run.change = False   # an edit or patch that failed changed nothing (`sed -i ... && make test`: the check did)
    if run.family:
        head = result.text[:600]
        started = _RUNNING_RE.search(head) or _BACKGROUND_ID_RE.search(head)
        if started:   # still running (Codex) or sent to the background (Claude): the verdict comes later
            run.status = None
            running[started.group(1)] = run
        else:
            run.status = _status(run.command or "", result)


def _continuation(call: Message, result: Message | None, running: dict[str, _Run]) -> None:
    """A later call that reads a still-running check's end (Codex write_stdin, Claude BashOutput) gives it its
    status, as a run of its own at the time it ended."""
    if result is None or call.tool_name not in _STDIN_TOOLS | _BACKGROUND_OUTPUT_TOOLS:
        return
    args = _json(call.text)
    key = args.get("session_id", args.get("bash_id", args.get("task_id", args.get("shell_id"))))
    run = running.get(str(key)) if key is not None else None
    if run is None:
        return
    code: int | None = result.exit_code
    if code is None:
        m = _XML_EXIT_RE.search(result.text)
        if m:
            code = int(m.group(1))
    status = _XML_STATUS_RE.search(result.text)
    if code is None and status and status.group(1) == "running":
        return
    verdict = _summary_verdict(run.family or "", result.text) if _masked(run.command or "") else None
    if verdict is None and code is not None:
        verdict = code == 0
    if verdict is None and result.outcome is ToolOutcome.FAILED:
        verdict = False
    if verdict is None:
        return
    run.status = verdict
    run.started = run.origin
    run.call = call       # the check ended here: order it by when its verdict arrived
    run.result = result
    run.check_seg = 0
    running.pop(str(key), None)


def _classify(call: Message, result: Message | None) -> _Run:
    name = call.tool_name or ""
    command = _shell_command(name, call.text)
    if command is None and name in _EDIT_TOOLS:
        return _Run(call, result, None, None, True, None)
    if command is None:
        return _Run(call, result, None, None, False, None)
    family, change, check_seg, change_seg = _analyse(command)
    return _Run(call, result, command, family, change, None, change_seg, check_seg)


def _json(text: str) -> dict[str, Any]:
    try:
        value = load_json(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _shell_command(tool: str, raw: str) -> str | None:
    """The shell command a tool call ran, or None when it is not a shell call."""
    if tool not in _SHELL_TOOLS:
        return None
    args = _json(raw)
    value: Any = args.get("command", args.get("cmd"))
    if value is None and isinstance(args.get("action"), dict):   # local_shell_call {"action": {"command": [...]}}
        value = args["action"].get("command")
    if value is None and not args:
        value = raw
    if isinstance(value, list):
        words = [str(v) for v in value]
        if len(words) >= 3 and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and words[1] in ("-lc", "-c"):
            return words[2]
        return " ".join(shlex.quote(w) if " " in w or not w else w for w in words)
    return value if isinstance(value, str) else None


# -- reading a shell command ---------------------------------------------------------------------------------------

_HEREDOC_RE = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_OPERATORS = ("&&", "||", "|", ";", "&", "\n")
_WRAPPERS = {"sudo", "time", "nice", "nohup", "command", "exec", "xvfb-run", "stdbuf", "caffeinate"}
_RUNNERS = {  # word sequences that run the next command: `uv run pytest`, `poetry run mypy`, `npx tsc`
    ("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"), ("rye", "run"),
    ("pixi", "run"), ("conda", "run"), ("bundle", "exec"), ("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "exec"),
    ("npm", "exec"), ("uvx",), ("npx",), ("bunx",), ("pipx", "run"),
}


def _strip_heredocs(command: str) -> str:
    """The command without the bodies of its here-documents (their text is data, not commands)."""
    lines = command.split("\n")
    out: list[str] = []
    terminators: list[str] = []
    for line in lines:
        if terminators:
            if line.strip() == terminators[0]:
                terminators.pop(0)
            continue
        out.append(line)
        terminators.extend(m.group(2) for m in _HEREDOC_RE.finditer(line))
    return "\n".join(out)


def _tokens(command: str) -> list[str]:
    out: list[str] = []
    for line in _strip_heredocs(command).split("\n"):
        if out:
            out.append("\n")
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            out.extend(lexer)
        except ValueError:   # unbalanced quotes (or a quoted newline): a plain split is good enough
            out.extend(re.findall(r"&&|\|\||[|;&<>()]+|[^\s|;&<>()]+", line))
    return out


def _segments(tokens: list[str]) -> list[tuple[list[str], str | None, str | None]]:
    """(words, operator before, operator after) of each simple command; redirections stay in the words."""
    out: list[tuple[list[str], str | None, str | None]] = []
    words: list[str] = []
    before: str | None = None
    for t in tokens:
        if t in _OPERATORS or t == "\n" or t in ("(", ")"):
            if t in ("(", ")"):
                continue
            if words:
                out.append((words, before, t))
            words = []
            before = t
        else:
            words.append(t)
    if words:
        out.append((words, before, None))
    return out


def _core(words: list[str]) -> list[str]:
    """The words of a simple command past env assignments, wrappers (sudo, timeout 60) and runners (uv run)."""
    i = 0
    while i < len(words):
        w = words[i]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w) or w in _WRAPPERS:
            i += 1
        elif w == "env":
            i += 1
            while i < len(words) and (words[i].startswith("-") or "=" in words[i]):
                i += 1
        elif w == "timeout":
            i += 1
            while i < len(words) and (words[i].startswith("-") or re.match(r"^\d+[smhd]?$", words[i])):
                i += 1
        else:
            matched = False
            for runner in _RUNNERS:
                if tuple(words[i:i + len(runner)]) == runner:
                    i += len(runner)
                    while i < len(words) and words[i].startswith("-"):
                        i += 1   # the runner's own flags (uv run --frozen pytest)
                    matched = True
                    break
            if not matched:
                break
    rest = words[i:]
    if len(rest) >= 3 and rest[0].rsplit("/", 1)[-1].startswith("python") and rest[1] == "-m":
        rest = rest[2:]   # python -m pytest
    if rest:
        rest = [rest[0].rsplit("/", 1)[-1]] + rest[1:]   # ./node_modules/.bin/jest, .venv/bin/pytest
    return rest


_SCRIPT_CHECKS = re.compile(r"^(test|tests|build|lint|typecheck|type-check|types|tsc|check|ci|verify|e2e)(:.*)?$")
_MAKE_CHECKS = re.compile(r"^(test|tests|check|lint|build|all|ci|verify|typecheck|unit|integration|test-.*|"
                          r"check-.*|lint-.*)$")


def _check_family(w: list[str]) -> str | None:
    """The check a simple command runs (its family name), or None."""
    if not w:
        return None
    head, args = w[0], w[1:]
    positional = [a for a in args if not a.startswith("-")]
    sub = positional[0] if positional else None
    if head in ("pytest", "py.test"):
        return "pytest"
    if head in ("unittest", "tox", "nox", "jest", "vitest", "mocha", "ava", "mypy", "pyright", "flake8", "pylint",
                "eslint", "tsc", "rspec", "phpunit", "ctest", "golangci-lint", "shellcheck", "basedpyright",
                "stylelint", "hadolint", "clang-tidy", "pyre", "pytype", "bandit", "nosetests", "ward", "karma"):
        if head == "tsc" and "--init" in args:
            return None
        if head == "eslint" and "--fix" in args:
            return "eslint"
        return head
    if head == "ruff":
        if sub == "format":
            return "ruff format" if "--check" in args else None
        return "ruff"
    if head in ("black", "isort", "prettier", "biome"):
        return head if ("--check" in args or sub in ("check", "lint", "ci")) else None
    if head == "go" and sub in ("test", "build", "vet"):
        return f"go {sub}"
    if head == "cargo" and sub in ("test", "build", "check", "clippy", "nextest"):
        return f"cargo {sub}"
    if head == "cargo" and sub == "fmt" and "--check" in args:
        return "cargo fmt"
    if head in ("npm", "yarn", "pnpm", "bun"):
        rest = [a for a in args if not a.startswith("-")]
        if rest and rest[0] == "run":
            rest = rest[1:]
        if rest and rest[0] in ("t",):
            rest = ["test"]
        if rest and _SCRIPT_CHECKS.match(rest[0]):
            return f"{head} {rest[0]}"
        return None
    if head in ("make", "gmake", "just", "task"):
        targets = [a for a in positional if "=" not in a]
        if "-C" in args:
            i = args.index("-C")
            targets = [a for a in targets if a != (args[i + 1] if i + 1 < len(args) else None)]
        if not targets:
            return head if head in ("make", "gmake") else None
        return f"{head} {targets[0]}" if _MAKE_CHECKS.match(targets[0]) else None
    if head in ("gradle", "gradlew") and any(re.match(r"^(:?[\w:-]*:)?(test|build|check|assemble)$", a)
                                            for a in positional):
        return "gradle"
    if head in ("mvn", "mvnw") and any(a in ("test", "verify", "package", "install", "compile") for a in positional):
        return "mvn"
    if head == "dotnet" and sub in ("test", "build"):
        return f"dotnet {sub}"
    if head in ("swift", "stack", "cabal", "mix", "deno", "zig", "bazel", "bazelisk", "meson") and sub in (
            "test", "build", "check", "lint", "compile"):
        return f"{head} {sub}"
    if head == "rake" and sub in ("test", "spec"):
        return "rake"
    if head == "rails" and sub == "test":
        return "rails test"
    if head == "node" and "--test" in args:
        return "node --test"
    if head == "cmake" and "--build" in args:
        return "cmake --build"
    if head == "composer" and sub == "test":
        return "composer test"
    return None


_WRITERS = {"mv", "cp", "rm", "mkdir", "touch", "ln", "rmdir", "truncate", "install", "dd", "patch",
            "apply_patch", "applypatch", "rsync", "unzip", "tar"}
_OUTPUT_SUFFIXES = (".log", ".txt", ".out", ".xml", ".json")
_GIT_CHANGES = {"apply", "am", "checkout", "restore", "reset", "merge", "rebase", "cherry-pick", "revert", "pull",
                "switch", "mv", "rm"}


def _writes(words: list[str], raw_words: list[str]) -> bool:
    """Whether a simple command writes files: a redirection to a file, tee, sed -i, mv/cp/rm, git apply, ...

    Redirections to /dev, /tmp or to an output log (.log, .txt, .out) are not changes: checks write those."""
    for i, w in enumerate(raw_words):
        if w in (">", ">>", "&>", "&>>", ">|") and i + 1 < len(raw_words):
            target = raw_words[i + 1]
            if target.startswith(("/dev/", "/tmp/", "/proc/", "&")) or target.endswith(_OUTPUT_SUFFIXES):
                continue
            return True
    if not words:
        return False
    head, args = words[0], words[1:]
    if head in _WRITERS:
        if head == "tar" and not any(a.startswith("-x") or a == "x" or a.startswith("x") for a in args[:1]):
            return False
        return True
    if head == "tee":
        return any(not a.startswith(("-", "/dev/", "/tmp/")) for a in args)
    if head in ("sed", "gsed") and any(a == "-i" or a.startswith("-i") or a == "--in-place" for a in args):
        return True
    if head == "perl" and any(a.startswith("-") and "i" in a[1:] for a in args):
        return True
    if head == "git" and args:
        sub = next((a for a in args if not a.startswith("-")), "")
        if sub == "stash":
            return "pop" in args or "apply" in args
        return sub in _GIT_CHANGES
    if head == "ruff" and (("format" in args and "--check" not in args) or "--fix" in args):
        return True
    if head in ("black", "isort") and "--check" not in args:
        return True
    if head == "prettier" and ("--write" in args or "-w" in args):
        return True
    if head == "eslint" and "--fix" in args:
        return True
    if head == "cargo" and args[:1] == ["fmt"] and "--check" not in args:
        return True
    if head == "gofmt" and "-w" in args:
        return True
    if head == "go" and args[:1] in (["fmt"], ["generate"]):
        return True
    return False


def _analyse(command: str) -> tuple[str | None, bool, int, int]:
    """(the last check the command runs, whether it writes files, the simple-command index of that check and of
    the last write)."""
    family = None
    change = False
    check_seg = change_seg = 0
    for i, (raw_words, _before, _after) in enumerate(_segments(_tokens(command))):
        words = _core(raw_words)
        found = _check_family(words)
        if found:
            family, check_seg = found, i
        if (words and words[0] in ("apply_patch", "applypatch")) or _writes(words, raw_words):
            change, change_seg = True, i
    if not change and "*** Begin Patch" in command and ("apply_patch" in command or "applypatch" in command):
        change = True
    return family, change, check_seg, change_seg


def _masked(command: str) -> bool:
    """Whether the command's exit status may not be its check's: piped on, `|| true`, or more commands after `;`."""
    segments = _segments(_tokens(command))
    last_check = max((i for i, (w, _, _) in enumerate(segments) if _check_family(_core(w))), default=None)
    if last_check is None:
        return False
    _, _, after = segments[last_check]
    if after in ("|", "||", "&"):
        return True
    # a check followed by more commands after `;` or a newline: the status is the last command's
    return after in (";", "\n") and any(_core(w) for w, _, _ in segments[last_check + 1:])


# -- reading a result --------------------------------------------------------------------------------------------

_PYTEST_COUNTS = r"(?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun), )"
_PYTEST_TAIL = r"(?:, \d+ \w+)* in [\d.]+s\b"
_SUMMARIES: list[tuple[re.Pattern[str], bool]] = [
    (re.compile(rf"^(?:=+ )?{_PYTEST_COUNTS}*\d+ (?:failed|errors?){_PYTEST_TAIL}", re.M), False),   # pytest
    (re.compile(rf"^(?:=+ )?{_PYTEST_COUNTS}*\d+ passed{_PYTEST_TAIL}", re.M), True),
    (re.compile(r"^(?:FAIL\b|--- FAIL:)", re.M), False),                                     # go test
    (re.compile(r"test result: FAILED", re.M), False),                                       # cargo
    (re.compile(r"error(?:\[E\d+\])?: could not compile", re.M), False),
    (re.compile(r"test result: ok\.", re.M), True),
    (re.compile(r"^Tests?:\s+.*\b\d+ failed", re.M), False),                                 # jest
    (re.compile(r"^\s*Test Files\s+.*\b\d+ failed", re.M), False),                           # vitest
    (re.compile(r"^Tests?:\s+\d+ passed", re.M), True),
    (re.compile(r"^\s*Test Files\s+\d+ passed", re.M), True),
    (re.compile(r"\berror TS\d+:", re.M), False),                                            # tsc
    (re.compile(r"^Found \d+ errors? in \d+ files?", re.M), False),                          # mypy
    (re.compile(r"^Success: no issues found", re.M), True),
    (re.compile(r"^Found \d+ errors?\.", re.M), False),                                      # ruff
    (re.compile(r"^All checks passed!", re.M), True),
    (re.compile(r"^\u2716 \d+ problems?", re.M), False),                                     # eslint
    (re.compile(r"^(?:npm ERR!|npm error|ERR_PNPM_|error Command failed with exit code)", re.M), False),
    (re.compile(r"^make(?:\[\d+\])?: \*\*\* .*Error \d+", re.M), False),
    (re.compile(r"^BUILD FAILED", re.M), False),                                             # gradle
    (re.compile(r"^BUILD SUCCESSFUL", re.M), True),
    (re.compile(r"^\[INFO\] BUILD FAILURE", re.M), False),                                   # maven
    (re.compile(r"^\[INFO\] BUILD SUCCESS", re.M), True),
    (re.compile(r"^FAILED \(", re.M), False),                                                # unittest
    (re.compile(r"^OK(?: \(|$)", re.M), True),
]


def _summary_verdict(family: str, text: str) -> bool | None:
    """Passed/failed from a check's own summary line in its output, or None when there is none."""
    tail = text[-8000:]   # as its terminal printed it: the reader consumed its colours (rose.terminal.printed)
    verdict: bool | None = None
    for pattern, passed in _SUMMARIES:
        if pattern.search(tail):
            if not passed:
                return False
            verdict = True
    return verdict


def _status(command: str, result: Message) -> bool | None:
    """Passed (True), failed (False) or no verdict (None) for a check's result."""
    if result.outcome is ToolOutcome.UNKNOWN:
        return None
    if _masked(command):
        return _summary_verdict("", result.text)
    if result.exit_code is not None:
        return result.exit_code == 0 and not result.failed
    if result.failed:
        return False
    return True if result.outcome is ToolOutcome.SUCCEEDED else None
