"""Secrets never touch disk: one secret of each major kind planted into every input path (the prompt, the
transcript's user, assistant and tool messages, `rose add`'s text, title, tags and family, a model's answer, a
model's error message), then every byte rose wrote anywhere (both stores, queue, logs, cache, index.db with its WAL,
the judge cache, the pending marks) is searched for each of them."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from rose.learn.jobs import queued
from rose.store import Layers
from tests.conftest import run_rose, write_own_config

STANDIN = Path(__file__).resolve().parent.parent / "support" / "standin_model.py"
HANG_S = 120

SECRETS = {
    "aws": "AKIAQ3EGUV7XKZ4WJ2NB",
    "github": "ghp_R8sT2uV4wX6yZ8aB0cD2eF4gH6iJ8kL0mN2p",
    "openai": "sk-proj-Zq8XwV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8cB7aZ6yX5wV4uT3sR2qP1oN0mL9k",
    "anthropic": "sk-ant-api03-Xk2Lm9Np4Qr7St1Uv5Wx8Yz3Ab6Cd0Ef2Gh5Ij8Kl1Mn4Op7Qr0St3Uv6Wx9Yz2Ab5Cd8Ef-Gh1IjAA",
    "slack": "xoxb-2731944601-5193847265019-Qw3Er5Ty7Ui9Op1As3Df5Gh7J",
    "stripe": "sk_live_51Hq2Xk8Lm3Np9Qr4St7Uv1Wx5Yz0Ab6Cd2Ef8Gh3Ij9Kl4Mn",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ."
           "Qm9ndXNTaWduYXR1cmVCeXRlc0FyZUhlcmUxMjM0NTY3OA",
    "password": "postgres://app:Tr0ub4dor-and-3@db.internal:5432/shop",
}
# Secrets found only by their place in a command line or a credential file: (as pasted, the secret itself)
PLACED = {
    "mysql-cli": ("mysql -uroot -pQx7Lw2v9Zr4Kd8 shop", "Qx7Lw2v9Zr4Kd8"),
    "pgpass": ("\ndb.internal:5432:shop:app_rw:Vb3Nm8Kp2Lq7Wz9\n", "Vb3Nm8Kp2Lq7Wz9"),
}
SECRETS.update({kind: pasted for kind, (pasted, _raw) in PLACED.items()})
RAW = {k: (v.split(":")[2].split("@")[0] if k == "password" else v) for k, v in SECRETS.items()}
RAW.update({kind: raw for kind, (_pasted, raw) in PLACED.items()})
PEM_BODY = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"


def _pieces(raw: str, width: int = 14) -> set[bytes]:
    """Every 14-character window of a secret: random enough that none occurs by chance, short enough that a
    truncated copy (a folder name is cut at 48 characters) still holds one."""
    text = raw.lower()
    return {text[i:i + width].encode() for i in range(0, max(1, len(text) - width + 1))}


def everything(line: str) -> str:
    return line + " " + " ".join(SECRETS.values())


def _claude_transcript(path: Path, session: str, cwd: Path) -> None:
    pem = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
    base = {"sessionId": session, "cwd": str(cwd), "version": "2.1.332", "isSidechain": False,
            "userType": "external", "timestamp": "2026-12-01T10:00:00.000Z"}
    lines = [
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": everything("Always deploy with the blue-green switch. My keys:")}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "m1", "role": "assistant", "model": "x", "content": [
             {"type": "text", "text": everything("I will use")},
             {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": everything("deploy --key")}}]}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a1",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                                   "content": everything(f"error: bad key\n{pem}\n")}]}},
        {**base, "type": "assistant", "uuid": "a2", "parentUuid": "u2",
         "message": {"id": "m2", "role": "assistant", "model": "x", "content": [
             {"type": "text", "text": everything("Done, deployed with")}]}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


def _model(tmp_path: Path, name: str, **env: str) -> None:
    script = tmp_path / name
    exports = "".join(f"export {k}={json.dumps(v)}\n" for k, v in env.items())
    script.write_text(f"#!/bin/sh\n{exports}exec {sys.executable} {STANDIN} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    write_own_config(f"agent:\n  backend: claude\n  claude_command: {script}\nembed:\n  provider: none\n")


def _hook(project: Path, event: str, data: dict) -> dict:
    out = run_rose("hook", "claude", event, cwd=project, input=json.dumps({**data, "hook_event_name": event}))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else {}


def _wait_learned(project: Path) -> None:
    layers = Layers.discover(project)
    deadline = time.monotonic() + HANG_S
    while time.monotonic() < deadline and any(j.due() for _p, j in queued(layers.project)):
        time.sleep(0.2)
    from rose.learn.jobs import holder_running

    while time.monotonic() < deadline and holder_running():
        time.sleep(0.2)
    layers.close()


def test_no_secret_reaches_any_file_rose_writes(project: Path, tmp_path: Path) -> None:
    (project / ".git").mkdir()
    run_rose("init", cwd=project)
    say = " ".join(SECRETS.values())
    _model(tmp_path, "model-ok", STANDIN_SAY=say)
    added = run_rose("add", everything("Rotate the staging credentials monthly."), "--title",
                     "creds " + SECRETS["github"], "--tags", f"ops,{SECRETS['aws']}", "--family",
                     "fam-" + SECRETS["slack"], cwd=project)
    assert added.returncode == 0, added.stderr
    _hook(project, "UserPromptSubmit", {"session_id": "sec-1", "cwd": str(project),
                                        "prompt": everything("how do I rotate creds? use")})
    transcript = tmp_path / "sec-1.jsonl"
    _claude_transcript(transcript, "sec-1", project)
    _hook(project, "Stop", {"session_id": "sec-1", "cwd": str(project), "transcript_path": str(transcript),
                            "stop_hook_active": False})
    _hook(project, "SessionEnd", {"session_id": "sec-1", "cwd": str(project), "transcript_path": str(transcript),
                                  "reason": "other"})
    _wait_learned(project)
    # a model whose error output quotes the secrets: the job's last_error, the logs and the events
    _model(tmp_path, "model-failing", STANDIN_SAY=say, STANDIN_FAIL_EVERY="1", STANDIN_LOG=str(tmp_path / "c.log"))
    transcript2 = tmp_path / "sec-2.jsonl"
    _claude_transcript(transcript2, "sec-2", project)
    _hook(project, "SessionEnd", {"session_id": "sec-2", "cwd": str(project), "transcript_path": str(transcript2),
                                  "reason": "other"})
    _wait_learned(project)
    run_rose("learn", cwd=project)
    run_rose("index", "--rebuild", cwd=project)
    layers = Layers.discover(project)
    assert layers.project.episodes()[0], "the learner never ran: the test would prove nothing"
    assert any(j.last_error for _p, j in queued(layers.project)), "the failing model's error was never recorded"
    layers.close()

    roots = [project / ".rose", Path(os.environ["ROSE_HOME"])]
    files = [p for root in roots for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "index.db" for p in files) and any(p.name == "judge-cache.json" for p in files)
    found = []
    for path in files:   # case-folded pieces, so a secret slugged (and cut) into a folder name is caught too
        data = path.read_bytes().lower() + b"\0" + str(path).lower().encode()
        for kind, raw in {**RAW, "private-key": PEM_BODY}.items():
            if any(piece in data for piece in _pieces(raw)):
                found.append((kind, str(path)))
    assert found == [], found
    assert len(files) > 15   # stores, index, WAL, events, logs, queue, sessions, judge cache, pending marks
