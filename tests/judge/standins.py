"""Stand-in executables for `claude` and `codex`: tiny Python scripts written into a test's tmp_path.

Each run appends one JSON line to `record.jsonl` beside it (argv, environment, cwd, stdin, pid, process group, and the
codex schema file's content, which is gone once the call returns) and then behaves as `behaviour.json` says:

    ok          answer like the real CLI (claude: one result object; codex: JSONL events + the -o file)
    exit1       print to stderr and exit 1
    hang        start a grandchild (`sleep`), record its pid, then sleep: the caller must kill the whole group
    garbage     print text that is not JSON (codex: also write it as the last message)
    is_error    claude: is_error true (error_max_turns), exit 1; codex: a turn.failed event, exit 1
    text        claude: success, no structured_output, result is prose
    json_text   claude: success, no structured_output, result is the answer as JSON text
    no_last     codex: exit 0 without writing the -o file
    probe       answer the probe call by echoing the token found in the prompt
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

SCRIPT = r'''#!__PYTHON__
import json, os, subprocess, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
FLAVOUR = "__FLAVOUR__"
behaviour = json.load(open(os.path.join(HERE, "behaviour.json")))
mode, answer = behaviour["mode"], behaviour.get("answer")
stdin = sys.stdin.read()
argv = sys.argv[1:]
record = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "stdin": stdin, "pid": os.getpid(),
          "pgid": os.getpgid(0), "sid": os.getsid(0)}
if FLAVOUR == "codex" and "--output-schema" in argv:
    record["schema"] = json.load(open(argv[argv.index("--output-schema") + 1]))
if mode == "hang":
    child = subprocess.Popen(["sleep", "300"])
    record["grandchild"] = child.pid
with open(os.path.join(HERE, "record.jsonl"), "a") as f:
    f.write(json.dumps(record) + "\n")
if mode == "probe":
    lines = stdin.splitlines()
    token = lines[next(i for i, l in enumerate(lines) if l.startswith("<<<DATA token")) + 1]
    answer, mode = {"echo": token}, "ok"
last = argv[argv.index("-o") + 1] if "-o" in argv else None
if mode == "hang":
    time.sleep(300)
elif mode == "exit1":
    sys.stderr.write("boom: the stand-in failed on purpose\n")
    sys.exit(1)
elif mode == "garbage":
    print("this is not json {")
    if last:
        open(last, "w").write("this is not json either")
elif FLAVOUR == "claude":
    usage = {"input_tokens": 1234, "output_tokens": 56}
    base = {"type": "result", "session_id": "0000-fork", "usage": usage, "total_cost_usd": 0.0042, "num_turns": 2}
    if mode == "is_error":
        print(json.dumps({**base, "subtype": "error_max_turns", "is_error": True, "result": None,
                          "errors": ["Reached maximum number of turns (3)"]}))
        sys.exit(1)
    if mode == "text":
        print(json.dumps({**base, "subtype": "success", "is_error": False, "result": "hello"}))
    elif mode == "json_text":
        print(json.dumps({**base, "subtype": "success", "is_error": False, "result": json.dumps(answer)}))
    else:
        print(json.dumps({**base, "subtype": "success", "is_error": False, "result": json.dumps(answer),
                          "structured_output": answer}))
else:
    print(json.dumps({"type": "thread.started", "thread_id": "t-1"}))
    print(json.dumps({"type": "turn.started"}))
    if mode == "is_error":
        print(json.dumps({"type": "error", "message": "unexpected status 400: bad request"}))
        print(json.dumps({"type": "turn.failed", "error": {"message": "unexpected status 400: bad request"}}))
        sys.exit(1)
    if mode != "no_last":
        open(last, "w").write(json.dumps(answer))
    print(json.dumps({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message",
                                                         "text": json.dumps(answer)}}))
    print(json.dumps({"type": "turn.completed", "usage": {"input_tokens": 777, "cached_input_tokens": 0,
                                                          "output_tokens": 33}}))
'''


class StandIn:
    def __init__(self, folder: Path, flavour: str, name: str | None = None):
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / (name or flavour)
        self.path.write_text(SCRIPT.replace("__PYTHON__", sys.executable).replace("__FLAVOUR__", flavour))
        self.path.chmod(0o755)
        self.behave("ok", None)

    def behave(self, mode: str, answer: Any = None) -> StandIn:
        (self.folder / "behaviour.json").write_text(json.dumps({"mode": mode, "answer": answer}))
        return self

    @property
    def records(self) -> list[dict[str, Any]]:
        path = self.folder / "record.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    @property
    def recorded(self) -> bool:
        """True once a run has written its whole record line (a reader may otherwise catch it mid-write)."""
        path = self.folder / "record.jsonl"
        return path.exists() and path.read_text().endswith("\n")


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (killed, not yet reaped by its new parent) counts as dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
