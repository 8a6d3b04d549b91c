"""`rose doctor`: what is set up, what is broken, and the one thing to do about it. Each check is a typed record."""
from __future__ import annotations

import shutil
import sys
from dataclasses import asdict, dataclass
from enum import Enum

from rose import config
from rose.errors import ConfigError
from rose.store import Layers, global_root


class Level(str, Enum):
    OK = "ok"
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"


@dataclass
class Check:
    name: str
    level: Level
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {**asdict(self), "level": self.level.value}


MIN_PYTHON = (3, 10)


def run(layers: Layers) -> list[Check]:
    checks: list[Check] = []
    version = ".".join(map(str, sys.version_info[:3]))
    checks.append(Check("python", Level.OK if sys.version_info >= MIN_PYTHON else Level.FAIL,
                        f"{version} at {sys.executable}"))
    checks += _store_checks(layers)
    checks += _config_checks(layers)
    checks += _backend_checks(layers)
    return checks


def _store_checks(layers: Layers) -> list[Check]:
    out = []
    if layers.project is None:
        out.append(Check("project store", Level.WARN, f"none at or above {layers.cwd}: `rose init` creates one"))
    if layers.global_ is None:
        out.append(Check("global store", Level.INFO, f"none at {global_root()} (created on first global lesson)"))
    for store in layers.stores():
        name = f"{store.scope.value} store"
        try:
            report = store.sync()
            count = store.index.count()
        except Exception as exc:  # noqa: BLE001 - doctor reports every failure rather than stopping at one
            out.append(Check(name, Level.FAIL, f"{store.root}: {exc}"))
            continue
        out.append(Check(name, Level.OK, f"{store.root}: {count} lessons indexed"))
        for rel, reason in report.problems:
            out.append(Check("corrupt file", Level.WARN, f"{store.root / rel}: {reason} (skipped, left as is)"))
        _episodes, bad = store.episodes()
        for exc in bad:
            out.append(Check("corrupt episode", Level.WARN, f"{exc} (skipped, left as is)"))
    return out


def _config_checks(layers: Layers) -> list[Check]:
    try:
        layers.settings()
    except ConfigError as exc:
        return [Check("config", Level.FAIL, str(exc))]
    return [Check("config", Level.OK, ", ".join(str(p) for p in layers.config_paths()) or "defaults")]


def _backend_checks(layers: Layers) -> list[Check]:
    try:
        settings = layers.settings()
    except ConfigError:
        settings = config.Settings()
    out = []
    for label, command in (("claude CLI", settings.agent.claude_command), ("codex CLI", settings.agent.codex_command)):
        where = shutil.which(command)
        out.append(Check(label, Level.OK if where else Level.INFO, where or f"{command!r} not on PATH"))
    out.append(Check("judge backend", Level.INFO, f"configured: {settings.agent.backend.value}"))
    return out
