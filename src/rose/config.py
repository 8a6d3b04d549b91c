"""Typed settings: every knob has a type, a default and a one-line reason. docs/config.md is generated from here.

Settings live in `config.yaml` of each store as a sparse mapping of overrides (`recall: {max_pack_tokens: 3000}`).
The global store's file is read first, the project's on top. `rose config` lists, gets and sets them; an unknown
key or a bad value raises ConfigError naming the key and the type it expects.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

from rose.errors import ConfigError


def knob(default: Any, reason: str, choices: tuple[str, ...] = ()) -> Any:
    return field(default=default, metadata={"reason": reason, "choices": choices})


class Selector(str, enum.Enum):
    FORK = "fork"      # a fork of the live session greps the store and returns ids
    JUDGE = "judge"    # the apex walk, abstract to concrete, one line per candidate
    HYBRID = "hybrid"  # no model call: the best fused candidates that fit the budget


class ReflectionMode(str, enum.Enum):
    BACKGROUND = "background"
    FORK = "fork"
    BLOCK = "block"
    OFF = "off"


class DescentStrategy(str, enum.Enum):
    DELTA_PATCH = "delta-patch"
    DELTA_JUMP = "delta-jump"
    STEPWISE = "stepwise"


class Backend(str, enum.Enum):
    AUTO = "auto"
    CLAUDE = "claude"
    CODEX = "codex"
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    SCRIPTED = "scripted"
    SIM = "sim"
    NONE = "none"


class EmbedProvider(str, enum.Enum):
    AUTO = "auto"          # the offline model shipped in a wheel if installed, else none
    WORDLLAMA = "wordllama"
    OPENAI = "openai"      # an OpenAI-compatible /v1/embeddings endpoint
    NONE = "none"


@dataclass
class RecallSettings:
    enabled: bool = knob(True, "Switch recall off without uninstalling the hooks.")
    selector: Selector = knob(Selector.FORK, "How lessons are chosen once the store outgrows the pack budget.")
    max_pack_tokens: int = knob(2000, "Budget of the injected block; below it the whole store is served unfiltered.")
    global_max_tokens: int = knob(512, "Sub-cap for lessons from the global store, so they cannot crowd out local ones.")
    stays_fresh_turns: int = knob(8, "A lesson served fewer prompts ago than this is still in context and skipped.")
    judge_calls: int = knob(3, "Model calls the apex walk may spend per prompt; unresolved branches are served.")
    max_depth: int = knob(3, "How many levels the apex walk may descend.")
    selector_max_tool_calls: int = knob(8, "Tool calls the fork selector may make; the user is waiting.")
    selector_timeout_s: float = knob(20.0, "Deadline for any selector; past it recall falls back to hybrid.")
    candidates: int = knob(20, "Candidates the no-model search hands to a selector.")
    rrf_k: int = knob(20, "Reciprocal rank fusion constant: larger flattens the rank curve (20 ranked best, bench).")
    dense_weight: float = knob(0.2, "Weight of the dense list in fusion (lexical is 1.0): the offline model helps on "
                               "prompts that name nothing, and costs precision when weighted more (bench).")
    recency_half_life_days: float = knob(30.0, "Half-life of the recency boost given to recently used lessons.")
    disclosure: bool = knob(True, "A second search pass seeded by the first results' titles, tags and neighbours.")
    strategy: DescentStrategy = knob(DescentStrategy.DELTA_PATCH, "How a failed short form recovers dropped detail.")


@dataclass
class ReflectionSettings:
    mode: ReflectionMode = knob(ReflectionMode.BACKGROUND, "Who reflects when a turn was substantial.")
    nudge_after_tool_calls: int = knob(12, "A turn with this many tool calls is worth a thought.")
    nudge_after_turns: int = knob(3, "Or this many turns since the last reflection.")
    min_surprises: int = knob(2, "Or this many failed tool calls.")
    nudge_cooldown_s: float = knob(300.0, "Minimum time between two reflections in one session.")
    nudge_backoff_after: int = knob(3, "After this many empty reflections in a row the cooldown doubles.")


@dataclass
class CompressionSettings:
    enabled: bool = knob(True, "Let usage earn lessons a shorter form.")
    max_level: int = knob(6, "No lesson is compressed beyond this level.")
    min_successes: int = knob(2, "Recalls attributed as used on successful work before a compression attempt.")
    cooldown_s: float = knob(3600.0, "Minimum time between two compression attempts on one lesson.")
    replay_k: int = knob(5, "Regression episodes replayed to validate a candidate.")
    max_token_ratio: float = knob(0.75, "A candidate must be at most this fraction of the original's tokens.")
    heldout_fraction: float = knob(0.3, "Share of episodes never used to accept a compression, replayed after.")
    under_report_ratio: float = knob(0.9, "A candidate below this fraction of the original that declares no dropped claim is under-reported.")


@dataclass
class DescentSettings:
    w_judge: float = knob(0.60, "Weight of the model's usefulness ranking of a dropped claim.")
    w_prior: float = knob(0.28, "Weight of the claim's Laplace-smoothed rescue rate (observed outcome).")
    w_cost: float = knob(0.12, "Penalty per (normalised) token of re-attaching the claim.")
    repair_after_rescues: int = knob(3, "A claim that rescued the same node this often is folded back into its body.")


@dataclass
class RoutingSettings:
    max_tokens: int = knob(300, "Cap on the selection rules sent with every selector call.")


@dataclass
class AgentSettings:
    backend: Backend = knob(Backend.AUTO, "Who answers the judge's questions; auto = first of claude, codex on PATH.")
    model: str = knob("", "Model name passed to the backend; empty = the backend's default.")
    timeout_s: float = knob(60.0, "Deadline of one judge call; a call past it is a failure, never a pass.")
    claude_command: str = knob("claude", "Executable of the Claude Code CLI.")
    codex_command: str = knob("codex", "Executable of the Codex CLI.")
    openai_base_url: str = knob("http://127.0.0.1:11434/v1", "OpenAI-compatible endpoint (Ollama's default shown).")
    openai_api_key_env: str = knob("OPENAI_API_KEY", "Name of the environment variable holding the key (never the key).")
    anthropic_base_url: str = knob("https://api.anthropic.com", "Messages API endpoint.")
    anthropic_api_key_env: str = knob("ANTHROPIC_API_KEY", "Name of the environment variable holding the key.")
    cache_max_entries: int = knob(5000, "Judge cache size; the oldest entries are evicted first.")


@dataclass
class EmbedSettings:
    provider: EmbedProvider = knob(EmbedProvider.AUTO, "Dense retrieval model; none = lexical search only.")
    base_url: str = knob("http://127.0.0.1:11434/v1", "OpenAI-compatible /v1/embeddings endpoint, for provider openai.")
    model: str = knob("nomic-embed-text", "Embedding model name, for provider openai.")
    api_key_env: str = knob("OPENAI_API_KEY", "Name of the environment variable holding the embeddings key.")


@dataclass
class Settings:
    recall: RecallSettings = field(default_factory=RecallSettings)
    reflection: ReflectionSettings = field(default_factory=ReflectionSettings)
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    descent: DescentSettings = field(default_factory=DescentSettings)
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)


# `rose config agent codex` is how the spec spells the backend switch.
ALIASES = {"agent": "agent.backend", "selector": "recall.selector"}


@dataclass(frozen=True)
class Knob:
    key: str
    type: type
    default: Any
    reason: str

    @property
    def type_name(self) -> str:
        if isinstance(self.type, type) and issubclass(self.type, enum.Enum):
            return "one of " + " | ".join(m.value for m in self.type)
        return {bool: "true/false", int: "integer", float: "number", str: "text"}[self.type]


@functools.lru_cache(maxsize=1)
def _all_knobs() -> tuple[Knob, ...]:
    out = []
    for section in fields(Settings):
        section_type = section.default_factory  # type: ignore[misc]
        hints = get_type_hints(section_type)
        for f in fields(section_type):
            default = f.default if f.default is not MISSING else None
            out.append(Knob(f"{section.name}.{f.name}", hints[f.name], default, f.metadata.get("reason", "")))
    return tuple(out)


def knobs() -> list[Knob]:
    return list(_all_knobs())


def _knob(key: str) -> Knob:
    key = ALIASES.get(key, key)
    for k in knobs():
        if k.key == key:
            return k
    sections = sorted({k.key.split(".")[0] for k in knobs()})
    raise ConfigError(f"unknown setting {key!r}: keys look like <section>.<name>, sections are {', '.join(sections)}"
                      " (`rose config` lists them all)")


def coerce(knob: Knob, value: Any) -> Any:
    """Turn a YAML or command-line value into the knob's type, or raise ConfigError naming both."""
    t = knob.type
    bad = ConfigError(f"{knob.key}: expected {knob.type_name}, got {value!r}")
    if isinstance(t, type) and issubclass(t, enum.Enum):
        try:
            return t(str(value).strip().lower())
        except ValueError:
            raise bad from None
    if t is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in {"true", "yes", "on", "1"}:
            return True
        if text in {"false", "no", "off", "0"}:
            return False
        raise bad
    if t is int:
        if isinstance(value, bool):
            raise bad
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise bad from None
        if not number.is_integer():
            raise bad
        return int(number)
    if t is float:
        if isinstance(value, bool):
            raise bad
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad from None
    if isinstance(value, (dict, list)):
        raise bad
    return "" if value is None else str(value)


def get(settings: Settings, key: str) -> Any:
    knob = _knob(key)
    section, name = knob.key.split(".")
    return getattr(getattr(settings, section), name)


def apply_overrides(settings: Settings, overrides: Any, source: str) -> None:
    if overrides is None:
        return
    if not isinstance(overrides, dict):
        raise ConfigError(f"{source}: expected a mapping of sections, got {type(overrides).__name__}")
    for section, values in overrides.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: section {section!r} must be a mapping of settings")
        for name, value in values.items():
            knob = _knob(f"{section}.{name}")
            setattr(getattr(settings, section), name, coerce(knob, value))


def read_overrides(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    from rose.store.frontmatter import load_yaml

    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file, reported as such
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections")
    return data


def load(paths: list[Path], cache: Path | None = None) -> Settings:
    """Defaults, then each file's overrides in order (global first, project last).

    With `cache`, the parsed overrides are kept as JSON keyed by each file's (mtime, size), so the per-prompt hook
    does not import a YAML parser to read two small files that rarely change.
    """
    raw = _cached_overrides(paths, cache) if cache is not None else None
    if raw is None:
        raw = [(str(p), read_overrides(p)) for p in paths]
        if cache is not None:
            _store_overrides(paths, cache, raw)
    settings = Settings()
    for source, overrides in raw:
        apply_overrides(settings, overrides, source)
    return settings


def _fingerprint(paths: list[Path]) -> list[list[object]]:
    out: list[list[object]] = []
    for p in paths:
        try:
            st = p.stat()
            out.append([str(p), st.st_mtime_ns, st.st_size])
        except FileNotFoundError:
            out.append([str(p), 0, -1])
    return out


def _cached_overrides(paths: list[Path], cache: Path) -> list[tuple[str, Any]] | None:
    import json

    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != _fingerprint(paths):
        return None
    return [(str(s), o) for s, o in data.get("overrides", [])]


def _store_overrides(paths: list[Path], cache: Path, raw: list[tuple[str, Any]]) -> None:
    import json

    from rose.store.atomic import write_text_atomic

    try:
        write_text_atomic(cache, json.dumps({"fingerprint": _fingerprint(paths), "overrides": raw}))
    except OSError:
        pass  # a cache that cannot be written is only slower


def set_in_file(path: Path, key: str, raw_value: str) -> Any:
    """Validate and write one override into a config file (atomically, under the caller's lock)."""
    from rose.store.atomic import write_text_atomic
    from rose.store.frontmatter import dump_yaml

    knob = _knob(key)
    value = coerce(knob, raw_value)
    data = read_overrides(path)
    section, name = knob.key.split(".")
    stored = value.value if isinstance(value, enum.Enum) else value
    data.setdefault(section, {})[name] = stored
    write_text_atomic(path, dump_yaml(data))
    return value


def display(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def reference_markdown() -> str:
    """The config reference in docs/config.md, generated so it can never drift from the code."""
    lines = ["# Configuration reference", "",
             "Generated from `src/rose/config.py` by `python -m rose.config`; do not edit by hand.", "",
             "Set a value with `rose config set KEY VALUE` (project store) or add `--scope global`.", ""]
    current = ""
    for k in knobs():
        section = k.key.split(".")[0]
        if section != current:
            current = section
            lines += [f"## {section}", "", "| key | type | default | why |", "|---|---|---|---|"]
        type_name = k.type_name.replace(" | ", ", ")
        lines.append(f"| `{k.key}` | {type_name} | `{display(k.default)}` | {k.reason} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
