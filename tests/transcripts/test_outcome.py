"""execution_outcome: verified / failed / unknown from what was executed, on realistic sessions of both agents."""
from __future__ import annotations

import pytest

from rose.model import Outcome
from rose.transcripts import Kind, execution_outcome, read_claude, read_codex, read_transcript

from .build import FIXTURES, ClaudeWriter, CodexWriter

CLAUDE = FIXTURES / "claude_outcome.jsonl"
CODEX = FIXTURES / "codex_outcome.jsonl"
CODEX_OLD = FIXTURES / "codex_outcome_old.jsonl"


def cut_after(tmp_path, fixture, marker):
    """The fixture up to and including its first line holding marker: the session as it stood then."""
    lines = fixture.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if marker in line)
    path = tmp_path / fixture.name
    path.write_text("".join(lines[:at + 1]), encoding="utf-8")
    return read_transcript(path)


def claude_at(tmp_path, tool_id):
    return execution_outcome(cut_after(tmp_path, CLAUDE, f'"tool_use_id":"{tool_id}"'))


def codex_at(tmp_path, fixture, call_id):
    return execution_outcome(cut_after(tmp_path, fixture, f'"call_id":"{call_id}","output"'))


@pytest.mark.parametrize("tool_id, outcome, check, reason", [
    ("toolu_01", Outcome.UNKNOWN, None, "no change"),                   # tests failed, but nothing was changed yet
    ("toolu_03", Outcome.UNKNOWN, None, "no recognised check ran after the last change"),
    ("toolu_04", Outcome.UNKNOWN, None, "no recognised check"),         # a failed edit changes nothing
    ("toolu_05", Outcome.FAILED, "uv run pytest tests/test_totals.py -q 2>&1 | tail -5", "failed"),  # exit 0 of tail
    ("toolu_06", Outcome.UNKNOWN, None, "no recognised check"),
    ("toolu_07", Outcome.VERIFIED, "uv run pytest -q", "pytest passed"),
    ("toolu_08", Outcome.VERIFIED, "uv run mypy src", "mypy, pytest passed"),
    ("toolu_09", Outcome.VERIFIED, "uv run mypy src", "mypy, pytest passed"),   # a commit is not a change
    ("toolu_10", Outcome.UNKNOWN, None, "no recognised check"),         # Write: a change
    ("toolu_12", Outcome.UNKNOWN, None, "left no exit status"),         # the background build is still running
    ("toolu_13", Outcome.VERIFIED, "cd web && npm run build", "npm build passed"),
])
def test_claude_session_step_by_step(tmp_path, tool_id, outcome, check, reason):
    result = claude_at(tmp_path, tool_id)
    assert (result.outcome, result.check) == (outcome, check), result
    assert reason in result.reason


def test_claude_evidence_cites_the_change_and_the_check():
    conv = read_claude(CLAUDE)
    result = execution_outcome(conv)
    assert result.outcome is Outcome.VERIFIED
    change, started, verdict = (conv.messages[n] for n in result.evidence)
    assert change.kind is Kind.TOOL_RESULT and change.tool_name == "Write"
    assert started.kind is Kind.TOOL_CALL and '"run_in_background":true' in started.text
    assert verdict.kind is Kind.TOOL_RESULT and "<exit_code>0</exit_code>" in verdict.text
    assert result.handles == tuple(conv.handle(n) for n in result.evidence)


@pytest.mark.parametrize("call_id, outcome, check, reason", [
    ("call_c1", Outcome.UNKNOWN, None, "no change"),
    ("call_p1", Outcome.UNKNOWN, None, "no recognised check"),
    ("call_c2", Outcome.UNKNOWN, None, "left no exit status"),       # "Process running with session ID 3"
    ("call_w1", Outcome.VERIFIED, "cargo test", "cargo test passed"),  # its end, read through write_stdin
    ("call_c3", Outcome.FAILED, "cargo clippy --all-targets -- -D warnings", "passed: cargo test"),
    ("call_p2", Outcome.FAILED, "cargo clippy --all-targets -- -D warnings", "failed"),   # a rejected patch
    ("call_p3", Outcome.UNKNOWN, None, "no recognised check"),
    ("call_c4", Outcome.VERIFIED, "cargo clippy --all-targets -- -D warnings", "cargo clippy passed"),
    ("call_c5", Outcome.VERIFIED, "cargo test", "cargo clippy, cargo test passed"),
])
def test_codex_session_step_by_step(tmp_path, call_id, outcome, check, reason):
    result = codex_at(tmp_path, CODEX, call_id)
    assert (result.outcome, result.check) == (outcome, check), result
    assert reason in result.reason


@pytest.mark.parametrize("call_id, outcome, check", [
    ("call_a1", Outcome.UNKNOWN, None),
    ("call_a2", Outcome.UNKNOWN, None),                                # apply_patch through the shell: a change
    ("call_a3", Outcome.VERIFIED, "python -m pytest -q tests/test_export.py"),   # {"metadata": {"exit_code": 0}}
    ("call_a4", Outcome.FAILED, "sed -i 's/DELIM = \";\"/DELIM = \",\"/' atlas/export.py && make test"),
])
def test_older_codex_output_shapes(tmp_path, call_id, outcome, check):
    result = codex_at(tmp_path, CODEX_OLD, call_id)
    assert (result.outcome, result.check) == (outcome, check), result


def test_a_shell_line_that_changes_then_checks_counts_its_own_change():
    conv = read_codex(CODEX_OLD)
    result = execution_outcome(conv)
    call, output = (conv.messages[n] for n in result.evidence)   # the change and the check: one call's
    assert call.kind is Kind.TOOL_CALL and output.call_id == call.call_id and output.exit_code == 2


def test_since_limits_the_outcome_to_later_messages():
    conv = read_claude(CLAUDE)
    second_prompt = next(m.n for m in conv.messages if m.kind is Kind.PROMPT and m.text.startswith("Thanks."))
    assert execution_outcome(conv, since=second_prompt).check == "cd web && npm run build"
    last = len(conv.messages) - 1
    assert execution_outcome(conv, since=last).outcome is Outcome.UNKNOWN


def session(tmp_path, steps, agent="claude"):
    """A session from (kind, arg, output, exit) steps: edit / run."""
    if agent == "claude":
        w = ClaudeWriter(tmp_path / "s.jsonl")
        w.prompt("fix it")
        for kind, arg, output, code in steps:
            if kind == "edit":
                w.tool("Edit", {"file_path": arg, "old_string": "a", "new_string": "b"}, output, error=code != 0)
            else:
                text = f"Exit code {code}\n{output}" if code else output
                w.tool("Bash", {"command": arg}, text, error=code != 0)
        return read_claude(w.close())
    w = CodexWriter(tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-000000000001.jsonl")
    w.prompt("fix it")
    for kind, arg, output, code in steps:
        w.tool(f"sed -i 's/a/b/' {arg}" if kind == "edit" else arg, output, exit_code=code)
    return read_codex(w.close())


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_the_latest_run_of_each_check_decides(tmp_path, agent):
    steps = [("edit", "src/a.py", "ok", 0), ("run", "pytest -k slow", "1 failed", 1),
             ("run", "pytest", "12 passed", 0), ("run", "ruff check .", "All checks passed!", 0)]
    assert execution_outcome(session(tmp_path, steps, agent)).outcome is Outcome.VERIFIED
    steps.append(("run", "mypy src", "Found 2 errors in 1 file", 1))
    result = execution_outcome(session(tmp_path, steps, agent))
    assert result.outcome is Outcome.FAILED and result.check == "mypy src"
    assert "passed: pytest, ruff" in result.reason


@pytest.mark.parametrize("command, output, outcome", [
    ("pytest -q || true", "=== 2 failed, 5 passed in 0.3s ===", Outcome.FAILED),
    ("pytest -q || true", "nothing to see", Outcome.UNKNOWN),     # status hidden, no summary: no verdict
    ("pytest -q; echo done", "=== 7 passed in 0.3s ===\ndone", Outcome.VERIFIED),
    ("go test ./... | tee /tmp/out", "--- FAIL: TestParse (0.00s)\nFAIL", Outcome.FAILED),
    ("cargo test 2>&1 | tail -3", "test result: ok. 9 passed; 0 failed", Outcome.VERIFIED),
    ("npx tsc --noEmit | head", "src/a.ts(3,1): error TS2304: Cannot find name 'x'.", Outcome.FAILED),
    ("cd api && npm test", "Tests: 3 passed, 3 total", Outcome.VERIFIED),
    ("ls -la && cat README.md", "total 8", Outcome.UNKNOWN),      # not a check
    # the same summaries in colour (a check told to colour its output even into a pipe)
    ("pytest -q --color=yes || true",
     "\x1b[31m=== \x1b[31m\x1b[1m2 failed\x1b[0m, \x1b[32m5 passed\x1b[0m\x1b[31m in 0.3s\x1b[0m\x1b[31m ===\x1b[0m",
     Outcome.FAILED),
    ("FORCE_COLOR=1 npx jest | tail -5", "\x1b[1mTests:\x1b[22m       \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, 4 total",
     Outcome.FAILED),
    ("cargo test --color always | tail", "test result: \x1b[32mok\x1b[0m. 9 passed; 0 failed", Outcome.VERIFIED),
    ("ruff check . || true", "\x1b]8;;file:///src/a.py\x1b\\src/a.py\x1b]8;;\x1b\\:1:1: F401\n"
                            "\x1b[1mFound 1 error.\x1b[0m", Outcome.FAILED),
])
def test_a_hidden_exit_status_is_read_from_the_summary_line(tmp_path, command, output, outcome):
    steps = [("edit", "src/a.py", "ok", 0), ("run", command, output, 0)]
    assert execution_outcome(session(tmp_path, steps)).outcome is outcome


@pytest.mark.parametrize("command, family", [
    ("uv run pytest -x", "pytest"), ("python3 -m pytest", "pytest"), ("poetry run mypy .", "mypy"),
    ("RUST_BACKTRACE=1 cargo test --all", "cargo test"), ("cargo build --release", "cargo build"),
    ("cargo clippy -- -D warnings", "cargo clippy"), ("go test ./...", "go test"), ("npm test", "npm test"),
    ("npm run lint", "npm lint"), ("yarn build", "yarn build"), ("pnpm -r test", "pnpm test"),
    ("npx jest src", "jest"), ("npx vitest run", "vitest"), ("npx tsc --noEmit", "tsc"), ("ruff check .", "ruff"),
    ("npx eslint src", "eslint"), ("make test", "make test"), ("make -C build check", "make check"),
    ("./gradlew :app:test", "gradle"), ("mvn -q verify", "mvn"), ("dotnet test", "dotnet test"),
    ("timeout 300 tox -e py311", "tox"), ("bundle exec rspec", "rspec"),
    ("git status", None), ("npm install", None), ("tsc --init", None), ("ruff format .", None), ("make install", None),
])
def test_recognised_checks(command, family):
    from rose.transcripts.outcome import _analyse

    assert _analyse(command)[0] == family


@pytest.mark.parametrize("command, writes", [
    ("echo x > src/conf.py", True), ("cat > a.py <<'EOF'\nprint(1)\nEOF", True), ("sed -i 's/a/b/' f.py", True),
    ("mv a.py b.py", True), ("git apply fix.patch", True), ("git checkout -- src/a.py", True),
    ("ruff check --fix .", True), ("prettier --write src", True), ("tee src/x.txt.py < in", True),
    ("pytest > out.txt", False), ("make test 2>&1 | tee /tmp/log", False), ("echo hi >/dev/null", False),
    ("git commit -am wip", False), ("git push", False), ("grep -rn foo src", False), ("cat a.py", False),
])
def test_recognised_writes(command, writes):
    from rose.transcripts.outcome import _analyse

    assert _analyse(command)[1] is writes


def test_odd_inputs_are_unknown_not_errors(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("go")
    w.tool("Edit", {"file_path": "/a"}, "ok")
    w.tool("Bash", {"command": "echo 'unbalanced"}, "x")
    w.tool("Bash", {"command": ["not", "a", "string"]}, "x")
    w._line("assistant", message={"id": "m", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t9", "name": "Bash", "input": "pytest"}]})   # input of the wrong shape
    conv = read_claude(w.close())
    assert execution_outcome(conv).outcome is Outcome.UNKNOWN
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    assert execution_outcome(read_claude(empty)).outcome is Outcome.UNKNOWN


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_tools_output_is_read_as_its_terminal_printed_it(tmp_path, agent):
    coloured = "\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_a.py::test_x - \x1b]8;;file:///a\x1b\\AssertionError\x1b]8;;\x1b\\"
    conv = session(tmp_path, [("edit", "src/a.py", "ok", 0), ("run", "pytest -q", coloured, 1)], agent)
    [result] = [m for m in conv.messages if m.kind is Kind.TOOL_RESULT and "FAILED" in m.text]
    assert "FAILED tests/test_a.py::test_x - AssertionError" in result.text and "\x1b" not in result.text
