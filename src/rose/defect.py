"""`rose report --about "..."`: a defect report a user can read, then attach to an issue. It is written to a file
and sent nowhere: rose makes no network call for it and runs no model (doctor without --probe).

    versions        rose, Python, the platform, the MCP SDK, the agent CLIs on PATH (their own --version)
    configuration   every setting's effective value, and the text of each config file, redacted
    rose doctor     its checks, as `rose doctor` prints them
    what mentions   the events (events.jsonl of each store), learner log lines and set-aside jobs that mention the
    the topic       topic, newest last; then the recent failures whatever they mention, for context

Everything passes the redactor on its way in, and the whole text once more before it is written (mode 0600).
"""
from __future__ import annotations

import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rose.text import load_json
from rose import envvars
from rose.errors import RoseError
from rose.store import reader
from rose.store import Layers

MAX_MATCHES = 200          # events and lines quoted per source, newest kept
MAX_FAILURES = 30
CLI_TIMEOUT_S = 10
STOP = {"the", "and", "for", "with", "when", "that", "this", "does", "not", "are", "was", "from", "into", "after",
        "before", "rose", "its", "it's", "why", "how", "what", "get", "got", "any", "all", "out", "but", "has",
        "had", "have", "can", "cannot"}


@dataclass
class Section:
    title: str
    lines: list[str] = field(default_factory=list)


@dataclass
class Report:
    about: str
    written: str
    sections: list[Section]
    matches: int

    def render(self) -> str:
        from rose.redact import redact

        out = [f"# rose defect report: {self.about}", "",
               f"Written {self.written} by `rose report --about`. Nothing was sent anywhere; secrets are redacted. "
               "Read it before you share it.", ""]
        for section in self.sections:
            out += [f"## {section.title}", "", *section.lines, ""]
        return redact("\n".join(out).rstrip() + "\n")


def default_path(about: str, cwd: Path | None = None) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", about.lower()).strip("-")[:40] or "report"
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return (cwd or Path.cwd()) / f"rose-report-{slug}-{stamp}.md"


def stems(about: str) -> list[str]:
    """The topic's significant words, cut to a common stem ("timed out" finds "timeout")."""
    words = [w for w in re.findall(r"[a-z0-9_.-]+", about.lower()) if len(w) >= 3 and w not in STOP]
    return list(dict.fromkeys(w[:5] for w in words))


def mentions(text: str, wanted: list[str]) -> bool:
    """Does ``text`` mention the topic: at least half of its stems (at least one)?"""
    if not wanted:
        return False
    low = text.lower()
    return sum(1 for s in wanted if s in low) >= max(1, math.ceil(len(wanted) / 2))


def build(layers: Layers, about: str) -> Report:
    about = " ".join(about.split())
    if not about:
        raise RoseError("rose report --about needs a few words saying what went wrong")
    from rose.redact import redact

    about = redact(about)
    wanted = stems(about)
    sections = [_versions(), _configuration(layers), _doctor(layers)]
    found, matches = _mentions(layers, wanted)
    sections += [found, _failures(layers)]
    written = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return Report(about, written, sections, matches)


def write(report: Report, path: Path) -> Path:
    from rose.store.atomic import private_dir, write_text_atomic

    private_dir(path.parent)
    write_text_atomic(path, report.render())
    os.chmod(path, 0o600)
    return path


# -- sections ----------------------------------------------------------------------------------------------------
def _cli_version(name: str) -> str:
    found = shutil.which(name)
    if not found:
        return "not on PATH"
    env = {**os.environ, "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           envvars.CHILD: "1"}
    try:
        cp = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                            stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{found} (did not answer --version: {type(exc).__name__})"
    return f"{(cp.stdout or cp.stderr).strip().splitlines()[0] if (cp.stdout or cp.stderr).strip() else '?'} " \
           f"({found})"


def _versions() -> Section:
    from importlib import metadata

    from rose import __version__

    def dist(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return Section("Versions", [
        f"- rose {__version__} ({Path(__file__).resolve().parent})",
        f"- Python {sys.version.split()[0]} ({sys.executable})",
        f"- platform {platform.platform()}",
        f"- mcp (the MCP SDK) {dist('mcp')}; PyYAML {dist('PyYAML')}; wordllama {dist('wordllama')}",
        f"- claude: {_cli_version('claude')}",
        f"- codex: {_cli_version('codex')}",
    ])


def _configuration(layers: Layers) -> Section:
    from rose import config
    from rose.redact import redact

    settings = layers.settings()
    lines = ["Effective settings (a value that differs from its default is marked):", "", "```"]
    for knob in config.knobs():
        value = config.display(config.get(settings, knob.key))
        mark = "" if value == config.display(knob.default) else "   <- set"
        lines.append(redact(f"{knob.key} = {value}{mark}"))
    lines.append("```")
    for source in layers.config_sources():
        whose = "your own" if source.is_own() else "the repository's, not trusted"
        lines += ["", f"`{source.path}` ({whose}):", ""]
        try:   # as config.read_overrides reads it: a FIFO, a device or a link out of the store is never read
            text = reader.read_text(source.path, reader.SMALL, within=source.path.parent, errors="replace")
        except OSError as exc:
            lines.append(f"(cannot be read: {getattr(exc, 'reason', None) or exc.strerror or exc})")
            continue
        lines += ["```yaml", redact(text).rstrip() or "(empty)", "```"]
    env = sorted(k for k in os.environ if k.startswith("ROSE_"))
    lines += ["", "ROSE_* variables set: " + (", ".join(f"{k}={redact(os.environ[k])}" for k in env) or "none")]
    return Section("Configuration", lines)


def _doctor(layers: Layers) -> Section:
    from rose import doctor, render

    try:
        text = render.checks(doctor.run(layers, probe=False))
    except Exception as exc:  # noqa: BLE001 - a report about a broken rose must still be written
        text = f"doctor itself failed: {type(exc).__name__}: {exc}"
    return Section("rose doctor", ["```", text, "```"])


def _event_lines(layers: Layers) -> list[tuple[str, str, str]]:
    """(timestamp, store, one-line JSON) for every event of every store, oldest first."""
    from rose.redact import redact_data
    from rose.store import events

    out = []
    for store in layers.stores():
        for ev in events.read(store.events_path):
            out.append((str(ev.get("ts", "")), store.scope.value,
                        json.dumps(redact_data(ev), ensure_ascii=False, sort_keys=True)))
    out.sort(key=lambda item: item[0])
    return out


def _log_lines(layers: Layers) -> list[tuple[str, str]]:
    out = []
    seen = set()
    for store in layers.stores():
        for path in sorted(store.logs_dir.glob("*.log")) if store.logs_dir.is_dir() else []:
            if path in seen:
                continue
            seen.add(path)
            try:
                for line in reader.read_text(path, reader.LOG, errors="replace").splitlines():
                    out.append((str(path), line))
            except OSError:
                continue
    return out


def _dead_letters(layers: Layers) -> list[tuple[str, str]]:
    from rose.learn.jobs import dead

    out = []
    for store in layers.stores():
        for path, job in dead(store):
            out.append((str(path), f"{job.kind.value} job of session {job.session_id}: attempts {job.attempts}, "
                                   f"last error: {job.last_error}"))
    return out


def _mentions(layers: Layers, wanted: list[str]) -> tuple[Section, int]:
    from rose.redact import redact

    events = [item for item in _event_lines(layers) if mentions(item[2], wanted)][-MAX_MATCHES:]
    logs = [item for item in _log_lines(layers) if mentions(item[1], wanted)][-MAX_MATCHES:]
    dead = [item for item in _dead_letters(layers) if mentions(item[1], wanted)]
    lines = [f"Matched on: {', '.join(wanted) or '(no significant word)'} (at least half of them, as word stems).",
             ""]
    lines += [f"### Events ({len(events)})", ""] + ([f"- `{store}` {redact(text)}" for _ts, store, text in events]
                                                    or ["none"])
    lines += ["", f"### Learner log lines ({len(logs)})", ""] + ([f"- `{redact(line)}` ({path})" for path, line in logs]
                                                               or ["none"])
    lines += ["", f"### Jobs set aside ({len(dead)})", ""] + ([f"- {redact(text)} ({path})" for path, text in dead]
                                                             or ["none"])
    return Section("What mentions the topic", lines), len(events) + len(logs) + len(dead)


def _failures(layers: Layers) -> Section:
    """Recent failures whatever they mention: a failed judge call, a skipped input, a hook that failed open."""
    from rose.redact import redact

    bad = []
    for _ts, store, text in _event_lines(layers):
        ev = load_json(text)
        if ev.get("ok") is False or ev.get("kind") == "skip" or str(ev.get("outcome", "")).startswith(("fail", "timeout")) \
                or ev.get("error"):
            bad.append(f"- `{store}` {redact(text)}")
    return Section("Recent failures (for context)", bad[-MAX_FAILURES:] or ["none"])
