"""What a backend is (one method: complete), and how one is chosen from configuration.

    backend = make_backend(settings.agent)      # None = model-free mode
    reply = backend.complete(BackendRequest(call="assess", prompt=..., schema=..., timeout_s=60))
    reply.data                                  # the JSON object (not yet validated: Judge does that)

A backend turns a prompt and a schema into one JSON object or raises JudgeFailure. It does not validate against the
schema (Judge.ask does, for every backend alike) and it never retries.

Backends arrive through a registry, `register_backend(name, factory)`, so a new one (the simulated world's `sim`) is
added without touching the selector. The built-ins are registered here by module path and imported only when
chosen, which keeps `import rose.judge` free of subprocess and urllib.
"""
from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from pathlib import Path

from rose.config import AgentSettings, BackendName
from rose.judge.errors import FailureKind, JudgeFailure
from rose.typedrecord import Record

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (~7 ms of `rose doctor`)
    from typing import Any


class BackendRequest(Record, frozen=True):
    call: str                        # the call's name (also the forced tool / json_schema name)
    prompt: str
    schema: dict[str, Any]
    timeout_s: float
    session_id: str | None = None    # fork this live session (claude --resume --fork-session; codex exec fork)
    cwd: str | None = None           # where a CLI runs (the session's folder when forking); None = a scratch dir
    tools: tuple[str, ...] = ()      # tools the model may use (select greps the store); () = none
    reads: tuple[str, ...] = ()      # the only folders those tools may read (select: the store folders)
    max_turns: int = 3
    payload: Any = None              # the typed request object; only the scripted backend looks at it


class BackendReply(Record):
    data: Any                        # the parsed JSON (Judge checks it is an object fitting the schema)
    raw: str                         # the text it was parsed from, for failure messages and debugging
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None    # only when the backend reports it (claude's total_cost_usd)


class Backend:
    """One small class per backend, one method. `name` and `model` go into the cache key and every event."""

    name: str = "backend"
    model: str = ""
    can_fork: bool = False   # True when `session_id` forks a live session of this agent (claude, codex)

    def complete(self, request: BackendRequest) -> BackendReply:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model or 'default'!r})"


Factory = Callable[[AgentSettings], "Backend | None"]
_FACTORIES: dict[str, Factory] = {}


def register_backend(name: str, factory: Factory) -> None:
    """Make `agent.backend: <name>` build a backend with `factory(agent_settings)`. Re-registering replaces."""
    _FACTORIES[name] = factory


def registered() -> list[str]:
    return sorted(_FACTORIES)


def _lazy(module: str, attr: str) -> Factory:
    def factory(agent: AgentSettings) -> Backend | None:
        return getattr(importlib.import_module(module), attr)(agent)
    return factory


register_backend(BackendName.CLAUDE.value, _lazy("rose.judge.backends.claude_cli", "from_settings"))
register_backend(BackendName.CODEX.value, _lazy("rose.judge.backends.codex_cli", "from_settings"))
register_backend(BackendName.OPENAI.value, _lazy("rose.judge.backends.openai_http", "from_settings"))
register_backend(BackendName.ANTHROPIC.value, _lazy("rose.judge.backends.anthropic_http", "from_settings"))
register_backend(BackendName.SCRIPTED.value, _lazy("rose.judge.backends.scripted", "from_settings"))


def auto_choice(agent: AgentSettings) -> str | None:
    """`auto`: the first of claude, codex whose command is on PATH (or is an existing executable path)."""
    for name, command in ((BackendName.CLAUDE.value, agent.claude_command),
                          (BackendName.CODEX.value, agent.codex_command)):
        if command and _found(command):
            return name
    return None


def _found(command: str) -> bool:
    from rose import environment

    if "/" in command:
        path = Path(command).expanduser()
        return path.is_file() and shutil.which(str(path)) is not None
    return environment.which(command) is not None


def make_backend(agent: AgentSettings) -> Backend | None:
    """The configured backend; None means model-free mode (callers skip or queue learning; recall still works).

    `auto` picks claude or codex from PATH, else None. `none` is None. An explicitly named CLI backend is built even
    when its binary is missing, so its calls fail as `missing_binary` and `rose doctor` can say so. A name with no
    registered factory (e.g. `sim` before the simulated world registers it) raises JudgeFailure(no_backend)."""
    name = agent.backend.value if isinstance(agent.backend, BackendName) else str(agent.backend)
    if name == BackendName.NONE.value:
        return None
    if name == BackendName.AUTO.value:
        chosen = auto_choice(agent)
        if chosen is None:
            return None
        name = chosen
    factory = _FACTORIES.get(name)
    if factory is None:
        raise JudgeFailure(FailureKind.NO_BACKEND,
                           f"backend {name!r} is not available (registered: {', '.join(registered())})",
                           backend=name)
    return factory(agent)
