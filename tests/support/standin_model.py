#!/usr/bin/env python3
"""A stand-in for `claude -p --output-format json --json-schema SCHEMA`, for tests and benchmarks that need a real
model process (its own pid and process group, a real exit status, real timing) without a model.

It reads the prompt on stdin, tells which judge call it is from the schema's properties, and prints the one JSON
object claude prints, with `structured_output` holding a plausible answer:

    extract   LEARN one lesson quoting the first user message's first sentence verbatim
    verify    supported            scope     project           related   none          reconcile  orthogonal
    assess    success, every served lesson used (ids read from the prompt's `lesson <id>` blocks)

Behaviour knobs (environment), so a test can make it slow, failing or blocked without a wall-clock race:
    STANDIN_LOG=path         append one line per call: "<pid> <call>"
    STANDIN_DELAY_S=s        sleep this long before answering
    STANDIN_BLOCK_FILE=path  wait until this file exists before answering (event-driven slowness)
    STANDIN_FAIL_EVERY=n     every n-th call (by a counter file beside the log) exits 1 with an error
    STANDIN_PIDS=path        append this process's pid when it starts (counting model CLIs alive)
    STANDIN_SAY=text         put this text into every free-text field of its answers, and into its error output
stdlib only: it may run under a Python other than rose's.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time


def _call(schema: dict) -> str:
    props = set((schema.get("properties") or {}).keys())
    for name, keys in (("extract", {"decision"}), ("verify", {"supported"}), ("assess", {"accepted_summary"}),
                       ("scope", {"scope"}), ("related", {"related"}), ("reconcile", {"relation"})):
        if keys <= props:
            return name
    return "other:" + ",".join(sorted(props))


def _answer(call: str, prompt: str) -> dict:
    if call == "extract":
        users = re.findall(r"^\[(session://[^\]]+)\] user: (.+)$", prompt, re.M)
        if not users:
            return {"decision": "NONE", "lessons": [], "orientation": [], "experience": None}
        text = users[0][1].strip()
        quote = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0][:200].strip()
        return {"decision": "LEARN", "orientation": [], "experience": None, "lessons": [{
            "quote": quote, "title": quote[:60] or "a rule", "body": f"The user asked: {quote}",
            "confidence": "high", "scope": "project", "tags": ["standin"]}]}
    if call == "verify":
        return {"supported": True, "reason": "the quote says so"}
    if call == "assess":
        ids = re.findall(r"^<<<DATA lesson (n_[A-Za-z0-9_-]+) id=", prompt, re.M)
        return {"outcome": "success", "accepted_summary": "did what was asked",
                "lessons": [{"id": i, "used": True, "reason": "applied"} for i in dict.fromkeys(ids)]}
    if call == "scope":
        return {"scope": "project", "reason": "about this repository"}
    if call == "related":
        return {"related": []}
    if call == "reconcile":
        return {"relation": "orthogonal", "reason": "different subject", "question": None}
    raise SystemExit(f"stand-in model: no answer for {call}")


def _say(answer, text: str):  # type: ignore[no-untyped-def]
    """Every free-text field gets `text` too (ids, enums and quotes stay as they are, so the answer still fits)."""
    keep = {"id", "quote", "decision", "confidence", "scope", "relation", "outcome", "verdict"}
    if isinstance(answer, dict):
        return {k: (v if k in keep else _say(v, text)) for k, v in answer.items()}
    if isinstance(answer, list):
        return [_say(v, text) for v in answer]
    if isinstance(answer, str):
        return f"{answer} {text}"[:900]
    return answer


def _count(log: str) -> int:
    path = log + ".count"
    with open(path, "a+") as handle:
        import fcntl

        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        n = int(handle.read() or 0) + 1
        handle.seek(0)
        handle.truncate()
        handle.write(str(n))
    return n


def main(argv: list[str]) -> int:
    if os.environ.get("STANDIN_PIDS"):
        with open(os.environ["STANDIN_PIDS"], "a") as handle:
            handle.write(f"{os.getpid()}\n")
    schema = json.loads(argv[argv.index("--json-schema") + 1]) if "--json-schema" in argv else {}
    prompt = sys.stdin.read()
    call = _call(schema)
    log = os.environ.get("STANDIN_LOG")
    if log:
        with open(log, "a") as handle:
            handle.write(f"{os.getpid()} {call}\n")
    block = os.environ.get("STANDIN_BLOCK_FILE")
    while block and not os.path.exists(block):
        time.sleep(0.05)
    delay = float(os.environ.get("STANDIN_DELAY_S", "0") or 0)
    if delay:
        time.sleep(delay)
    every = int(os.environ.get("STANDIN_FAIL_EVERY", "0") or 0)
    say = os.environ.get("STANDIN_SAY", "")
    if every and log and _count(log) % every == 0:
        print(f"stand-in model: simulated outage {say}", file=sys.stderr)
        return 1
    answer = _answer(call, prompt)
    if say:
        answer = _say(answer, say)
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "structured_output": answer,
                      "usage": {"input_tokens": len(prompt) // 4, "output_tokens": 50}, "total_cost_usd": 0.0}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
