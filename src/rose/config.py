"""Typed settings: every knob has a type, a default and a one-line reason. docs/config.md is generated from here.

Settings live in `config.yaml` of each store as a sparse mapping of overrides (`recall: {max_pack_tokens: 3000}`).
The global store's file is read first, the project's on top, then `ROSE_<SECTION>_<NAME>` environment variables.
A repository is untrusted input: a setting marked `privileged` (it chooses a program, an endpoint, a credential or
a backend) is honoured only from the user's own layers, never from a repository's file unless its exact content is
pinned by `rose trust`. Loading never fails on what a file holds (an older rose must keep working beside a newer
one's keys): unknown keys, bad values and unreadable files become `Problem`s that doctor and the notice report.
`rose config set` is strict: an unknown key or a bad value raises ConfigError naming the key and the type.
"""
from __future__ import annotations

import enum
import functools
from pathlib import Path
from collections.abc import Callable

from rose.errors import ConfigError
from rose.text import load_json
from rose.typedrecord import MISSING, Record, field, fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Every number a setting takes is finite and in a range (a file is untrusted: `.nan`, `1e308` or `-1` there would
# otherwise reach int(), a division or SQLite's busy timeout and cost every prompt its recall). The default range
# is what any count, budget or duration can mean; a setting narrows it where its meaning does (a share, a wait).
LOW = 0
INT_HIGH = 1_000_000_000      # a count or a budget: no store holds a billion of anything
FLOAT_HIGH = 1e9              # seconds, days, weights: finite, and far from any C int's edge once scaled
SHARE = 1.0                   # the top of a fraction, a rate, a probability, a weight


def knob(default: Any, reason: str, *, privileged: bool = False, low: float = LOW,
         high: float | None = None) -> Any:
    """One setting. `privileged`: it chooses a program rose runs, an endpoint it calls, a credential it sends or a
    backend; such a setting is honoured only from the user's own config (see `Source`), never from a repository.
    `low`, `high`: the range a number must fall in (inclusive; high by default INT_HIGH or FLOAT_HIGH), or the
    value is a bad value, reported, and the default stands."""
    return field(default=default, metadata={"reason": reason, "privileged": privileged, "low": low, "high": high})


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


class BackendName(str, enum.Enum):
    """Which backend answers the judge (a setting); the backends themselves are rose.judge.backends.Backend."""
    AUTO = "auto"
    CLAUDE = "claude"
    CODEX = "codex"
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    SCRIPTED = "scripted"   # test backend: answers from a script (not offered to users)
    SIM = "sim"             # test backend: the simulated knowledge world (not offered to users)
    NONE = "none"


TEST_BACKENDS = (BackendName.SCRIPTED, BackendName.SIM)


class EmbedProvider(str, enum.Enum):
    AUTO = "auto"          # the offline model shipped in a wheel if installed, else none
    WORDLLAMA = "wordllama"
    OPENAI = "openai"      # an OpenAI-compatible /v1/embeddings endpoint
    NONE = "none"


class RecallSettings(Record):
    """recall.*: how lessons are chosen and packed for a prompt."""
    enabled: bool = knob(True, "Switch recall off without uninstalling the hooks.")
    selector: Selector = knob(Selector.FORK, "How lessons are chosen once the store outgrows the pack budget.")
    max_pack_tokens: int = knob(2000, "Budget of the injected block; below it the whole store is served unfiltered.")
    global_max_tokens: int = knob(512, "Sub-cap for lessons from the global store, so they cannot crowd out local ones.")
    stays_fresh_turns: int = knob(8, "A lesson served fewer prompts ago than this is still in context and skipped.")
    judge_calls: int = knob(3, "Model calls the apex walk may spend per prompt; unresolved branches are served.")
    max_depth: int = knob(3, "How many levels the apex walk may descend.")
    selector_max_tool_calls: int = knob(8, "Tool calls the fork selector may make; the user is waiting.")
    deadline_s: float = knob(8.0, "The whole prompt hook (search, selectors, fallbacks, second pass) ends within this; "
                             "what is ready is served. Capped below the hook timeout rose installs.")
    selector_timeout_s: float = knob(6.0, "Deadline of one selector call, within recall.deadline_s; past it recall "
                                     "falls back to the next selector.")
    lock_wait_s: float = knob(0.5, "Longest the prompt hook waits for a store lock or a busy index before serving "
                              "what it can without it (and saying so).", high=60.0)
    candidates: int = knob(20, "Candidates the no-model search hands to a selector.")
    rrf_k: int = knob(20, "Reciprocal rank fusion constant: larger flattens the rank curve (20 ranked best, bench).")
    dense_weight: float = knob(0.2, "Weight of the dense list in fusion (lexical is 1.0): the offline model helps on "
                               "prompts that name nothing, and costs precision when weighted more (bench).")
    recency_half_life_days: float = knob(30.0, "Half-life of the recency boost given to recently used lessons.")
    disclosure: bool = knob(True, "A second search pass seeded by the first results' titles, tags and neighbours.")
    strategy: DescentStrategy = knob(DescentStrategy.DELTA_PATCH, "How a failed short form recovers dropped detail.")


class ReflectionSettings(Record):
    """reflection.*: when a turn is worth learning from."""
    mode: ReflectionMode = knob(ReflectionMode.BACKGROUND, "Who reflects when a turn was substantial.")
    nudge_after_tool_calls: int = knob(12, "A turn with this many tool calls is worth a thought.")
    nudge_after_turns: int = knob(3, "Or this many turns since the last reflection.")
    min_surprises: int = knob(2, "Or this many failed tool calls.")
    nudge_cooldown_s: float = knob(300.0, "Minimum time between two reflections in one session.")
    nudge_backoff_after: int = knob(3, "After this many empty reflections in a row the cooldown doubles.")


class CompressionSettings(Record):
    """compression.*: when and how far a lesson earns a shorter form."""
    enabled: bool = knob(True, "Let usage earn lessons a shorter form.")
    max_level: int = knob(6, "No lesson is compressed beyond this level.")
    min_successes: int = knob(2, "Recalls attributed as used on successful work before a compression attempt.")
    cooldown_s: float = knob(3600.0, "Minimum time between two compression attempts on one lesson.")
    replay_k: int = knob(5, "Regression episodes replayed to validate a candidate.")
    max_token_ratio: float = knob(0.75, "A candidate must be at most this fraction of the original's tokens.",
                                  high=SHARE)
    heldout_fraction: float = knob(0.3, "Share of episodes never used to accept a compression, replayed after.",
                                   high=SHARE)
    under_report_ratio: float = knob(0.9, "A candidate below this fraction of the original that declares no dropped "
                                          "claim is under-reported.", high=SHARE)


class DescentSettings(Record):
    """descent.*: how a dropped claim is ranked for re-attaching."""
    w_judge: float = knob(0.60, "Weight of the model's usefulness ranking of a dropped claim.", high=SHARE)
    w_prior: float = knob(0.28, "Weight of the claim's Laplace-smoothed rescue rate (observed outcome).", high=SHARE)
    w_cost: float = knob(0.12, "Penalty per (normalised) token of re-attaching the claim.", high=SHARE)
    repair_after_rescues: int = knob(3, "A claim that rescued the same node this often is folded back into its body.")


class CreditSettings(Record):
    """credit.*: withholding served lessons to measure whether they help."""
    withhold_rate: float = knob(0.1, "Chance per session that a lesson which would be served is withheld, to measure "
                                "whether it helps (never twice in a row, at most 0.5; 0 switches withholding off).",
                                high=SHARE)
    withhold_user_rules: bool = knob(False, "Also withhold rules you stated yourself (quoted from your words, or "
                                     "taught with rose add); off, they are always served.")
    min_samples: int = knob(20, "Sessions each arm (served, withheld) needs before a lesson can be found harmful "
                                "(bench/bench_credit.py).")
    max_withheld: int = knob(150, "Withheld sessions after which a lesson with no verdict counts as having no "
                             "detectable effect and is no longer withheld.")
    withdraw_harmful: bool = knob(True, "Stop serving a lesson whose served sessions do worse than its withheld ones "
                                  "by more than 2.5 posterior sd (else it is only reported).")


class EvolutionSettings(Record):
    """evolution.*: skills and guardrails tried against a randomized control."""
    enabled: bool = knob(False, "Let the learner turn grounded memories into candidate skills and guardrails, tried "
                         "against a randomized control before they count (machine-local; writes the agent's local "
                         "hook settings for guardrails).", privileged=True)
    guardrail_block: bool = knob(False, "Let a generated guardrail block a command; off, it only warns.",
                                 privileged=True)
    min_samples: int = knob(30, "Matched sessions in shadow before a trial opens, and samples per arm before a trial "
                            "is judged (bench/bench_credit.py).")
    max_trial_uses: int = knob(250, "Treatment sessions after which a trial with no decision retires as inconclusive.")
    noise_margin: float = knob(0.05, "Pass-rate gain a candidate must exceed to be promoted.", high=SHARE)
    cost_allowance: float = knob(0.10, "Relative extra API calls per session a candidate may add at no gain (and the "
                                 "saving an equal-pass-rate candidate must show).")
    cost_per_gain: float = knob(1.0, "Relative extra API calls each unit of pass-rate gain buys.")
    active_control_rate: float = knob(0.1, "Share of an active artifact's matched sessions kept as its control, so it "
                                      "must keep beating it.", high=SHARE)
    stale_days: float = knob(90.0, "An artifact with no trigger match for this many days retires as stale.")
    distill_interval_h: float = knob(24.0, "Least time between two store-mode distills over the whole hot store.")


class RoutingSettings(Record):
    """routing.*: the selection rules sent with a selector call."""
    max_tokens: int = knob(300, "Cap on the selection rules sent with every selector call.")


class AgentSettings(Record):
    """agent.*: who answers the judge's questions (backend, model, endpoints, commands) and its deadline."""
    backend: BackendName = knob(BackendName.AUTO, "Who answers the judge's questions; auto = first of claude, codex on PATH.",
                            privileged=True)
    model: str = knob("", "Model name passed to the backend; empty = the backend's default.")
    timeout_s: float = knob(60.0, "Deadline of one judge call; a call past it is a failure, never a pass.")
    claude_command: str = knob("claude", "Executable of the Claude Code CLI.", privileged=True)
    codex_command: str = knob("codex", "Executable of the Codex CLI.", privileged=True)
    openai_base_url: str = knob("http://127.0.0.1:11434/v1", "OpenAI-compatible endpoint (Ollama's default shown).",
                                 privileged=True)
    openai_api_key_env: str = knob("OPENAI_API_KEY", "Name of the environment variable holding the key (never the key).",
                                    privileged=True)
    anthropic_base_url: str = knob("https://api.anthropic.com", "Messages API endpoint.", privileged=True)
    anthropic_api_key_env: str = knob("ANTHROPIC_API_KEY", "Name of the environment variable holding the key.",
                                       privileged=True)
    cache_max_entries: int = knob(5000, "Judge cache size; the oldest entries are evicted first.")


class EmbedSettings(Record):
    """embed.*: the dense retrieval model."""
    provider: EmbedProvider = knob(EmbedProvider.AUTO, "Dense retrieval model; none = lexical search only.",
                                    privileged=True)
    base_url: str = knob("http://127.0.0.1:11434/v1", "OpenAI-compatible /v1/embeddings endpoint, for provider openai.",
                          privileged=True)
    model: str = knob("nomic-embed-text", "Embedding model name, for provider openai.")
    api_key_env: str = knob("OPENAI_API_KEY", "Name of the environment variable holding the embeddings key.",
                             privileged=True)


class Settings(Record):
    """Every setting, one section per concern, with the problems met while loading them."""
    recall: RecallSettings = field(default_factory=RecallSettings)
    reflection: ReflectionSettings = field(default_factory=ReflectionSettings)
    compression: CompressionSettings = field(default_factory=CompressionSettings)
    descent: DescentSettings = field(default_factory=DescentSettings)
    routing: RoutingSettings = field(default_factory=RoutingSettings)
    credit: CreditSettings = field(default_factory=CreditSettings)
    evolution: EvolutionSettings = field(default_factory=EvolutionSettings)
    agent: AgentSettings = field(default_factory=AgentSettings)
    embed: EmbedSettings = field(default_factory=EmbedSettings)
    # what the loaded files held that was not applied (not a section: filled by `load`)
    problems: list[Problem] = field(default_factory=list, metadata={"not_a_section": True}, compare=False)


# `rose config agent codex` is how the spec spells the backend switch.
ALIASES = {"agent": "agent.backend", "selector": "recall.selector"}


class Knob(Record, frozen=True):
    """One setting as declared: its dotted key, type, default, reason and privilege."""
    key: str
    type: type
    default: Any
    reason: str
    privileged: bool = False
    low: float = LOW
    high: float | None = None   # None: INT_HIGH for an integer, FLOAT_HIGH for a number

    @property
    def section(self) -> str:
        return self.key.split(".")[0]

    @property
    def name(self) -> str:
        return self.key.split(".")[1]

    @property
    def type_name(self) -> str:
        if isinstance(self.type, type) and issubclass(self.type, enum.Enum):
            offered = [m for m in self.type if m not in TEST_BACKENDS]
            return "one of " + " | ".join(m.value for m in offered)
        return {bool: "true/false", int: "integer", float: "number", str: "text"}[self.type]


@functools.lru_cache(maxsize=1)
def _sections() -> dict[str, type]:
    """Section name -> its settings class, in declaration order (cheap: no annotation is evaluated)."""
    # every section field is field(default_factory=<its class>)
    return {f.name: f.default_factory for f in fields(Settings)
            if not f.metadata.get("not_a_section")}


@functools.cache
def _section_knobs(section: str) -> tuple[Knob, ...]:
    """One section's knobs. Per section, because resolving the annotations is most of the cost and the prompt hook
    looks up only the keys its config files and ROSE_* variables set."""
    section_type = _sections()[section]
    hints = _hints(section_type)
    out = []
    for f in fields(section_type):
        default = f.default if f.default is not MISSING else None
        out.append(Knob(f"{section}.{f.name}", hints[f.name], default, f.metadata.get("reason", ""),
                        bool(f.metadata.get("privileged", False)), f.metadata.get("low", LOW),
                        f.metadata.get("high")))
    return tuple(out)


def _hints(cls: type) -> dict[str, Any]:
    """get_type_hints, without its eval when every annotation is a plain name (bool, int, Selector): a lookup in
    this module's names or the builtins gives the same type at a tenth of the cost."""
    import builtins

    out = {}
    for name, annotation in cls.__annotations__.items():
        found = None
        if isinstance(annotation, str) and annotation.isidentifier():
            found = globals().get(annotation, getattr(builtins, annotation, None))
        if not isinstance(found, type):
            from typing import get_type_hints

            return get_type_hints(cls)
        out[name] = found
    return out


def _all_knobs() -> tuple[Knob, ...]:
    return tuple(k for section in _sections() for k in _section_knobs(section))


def knobs() -> list[Knob]:
    return list(_all_knobs())


def _knob(key: str) -> Knob:
    key = ALIASES.get(key, key)
    section, _, _name = key.partition(".")
    for k in _section_knobs(section) if section in _sections() else ():
        if k.key == key:
            return k
    sections = sorted(_section_names())
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
        if not number.is_integer():   # NaN and infinities too
            raise bad
        return _in_range(knob, int(number), value)
    if t is float:
        if isinstance(value, bool):
            raise bad
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise bad from None
        if number != number or number in (float("inf"), float("-inf")):
            raise ConfigError(f"{knob.key}: expected a finite number, got {value!r}")
        return _in_range(knob, number, value)
    if isinstance(value, (dict, list)):
        raise bad
    return "" if value is None else str(value)


def _in_range(knob: Knob, number: Any, given: Any) -> Any:
    high = knob.high if knob.high is not None else (INT_HIGH if knob.type is int else FLOAT_HIGH)
    if not knob.low <= number <= high:
        shown = f"{high:g}" if isinstance(high, float) else f"{high}"
        raise ConfigError(f"{knob.key}: expected {knob.type_name} from {knob.low:g} to {shown}, got {given!r}")
    return number


def get(settings: Settings, key: str) -> Any:
    knob = _knob(key)
    section, name = knob.key.split(".")
    return getattr(getattr(settings, section), name)


# -- where settings come from, and which of them are honoured ----------------------------------------------------
class ProblemKind(str, enum.Enum):
    UNKNOWN = "unknown"          # a key this rose does not know (a newer rose's, or a typo): warned, skipped
    BAD_VALUE = "bad-value"      # a value of the wrong type: warned, the default (or the layer below) stands
    UNREADABLE = "unreadable"    # a file that is not YAML or not a mapping: warned, the whole file skipped
    NOT_TRUSTED = "not-trusted"  # a privileged key in a repository's file the user has not trusted: ignored


class Problem(Record, frozen=True):
    """One thing in a settings file that rose did not apply, and why. Never fatal: recall goes on without it."""

    source: str
    key: str
    kind: ProblemKind
    detail: str

    def line(self) -> str:
        where = f"{self.source}: {self.key}" if self.key else self.source
        return f"{where}: {self.detail}"

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "key": self.key, "kind": self.kind.value, "detail": self.detail}


class Source(Record, frozen=True):
    """A settings file and whether it is the user's own (their global store) or a repository's.

    A repository's file may tune rose but never choose what it runs or where it sends data: its privileged keys
    are ignored unless the user pinned that file's exact content with `rose trust`. `own` may be a function, asked
    only when the file really holds a privileged key (the trust check hashes the file)."""

    path: Path
    own: bool | Callable[[], bool] = True

    def is_own(self) -> bool:
        return self.own() if callable(self.own) else bool(self.own)


NOT_TRUSTED_DETAIL = ("ignored: it chooses a program, an endpoint, a credential or a backend, and this file is "
                      "inside a repository; set it in your own config (`rose config set --scope global`, or a "
                      "ROSE_* environment variable), or review the file and run `rose trust`")
ENV_PREFIX = "ROSE_"  # ROSE_<SECTION>_<NAME>=value: the user's own, applied over every file


def _section_names() -> set[str]:
    return set(_sections())


def env_overrides(env: Any = None) -> dict[str, dict[str, str]]:
    """`ROSE_AGENT_BACKEND=codex` -> {"agent": {"backend": "codex"}}: settings from the user's own environment.

    Only names of settings this rose knows are read: other ROSE_* variables (ROSE_HOME, a test harness's
    ROSE_AGENT_CLIS_DIR, a newer rose's knob) are not settings, and are not reported as problems either."""
    from rose import environment

    env = environment.current() if env is None else env
    prefixes = {f"{ENV_PREFIX}{section.upper()}_": section for section in _sections()}
    out: dict[str, dict[str, str]] = {}
    for key, value in env.items():
        if not key.startswith(ENV_PREFIX):
            continue
        # only the sections a variable names are resolved (ROSE_HOME and the like name none)
        for prefix, section in prefixes.items():
            if key.startswith(prefix):
                for knob in _section_knobs(section):
                    if key == f"{prefix}{knob.name.upper()}":
                        out.setdefault(section, {})[knob.name] = value
    return out


def apply_overrides(settings: Settings, overrides: Any, source: str,
                    *, own: bool | Callable[[], bool] = True) -> list[Problem]:
    """Apply one layer's overrides; returns what was not applied. Only the user's own layers set privileged keys."""
    problems: list[Problem] = []
    if overrides is None:
        return problems
    if not isinstance(overrides, dict):
        return [Problem(source, "", ProblemKind.UNREADABLE,
                        f"expected a mapping of sections, got {type(overrides).__name__}: file skipped")]
    for section, values in overrides.items():
        if not isinstance(values, dict):
            problems.append(Problem(source, str(section), ProblemKind.UNREADABLE,
                                    "a section must be a mapping of settings: skipped"))
            continue
        for name, value in values.items():
            key = f"{section}.{name}"
            try:
                knob = _knob(key)
            except ConfigError:
                problems.append(Problem(source, key, ProblemKind.UNKNOWN,
                                        "unknown setting, skipped (a newer rose's key, or a typo)"))
                continue
            if knob.privileged and not (own() if callable(own) else own):
                problems.append(Problem(source, key, ProblemKind.NOT_TRUSTED, NOT_TRUSTED_DETAIL))
                continue
            try:
                setattr(getattr(settings, knob.section), knob.name, coerce(knob, value))
            except ConfigError as exc:
                problems.append(Problem(source, key, ProblemKind.BAD_VALUE, f"{exc}; skipped"))
    return problems


def privileged_keys(overrides: Any) -> list[str]:
    """The privileged keys a file's overrides set (what `rose trust` would let it choose)."""
    out = []
    if isinstance(overrides, dict):
        for section, values in overrides.items():
            for name in (values if isinstance(values, dict) else {}):
                try:
                    if _knob(f"{section}.{name}").privileged:
                        out.append(f"{section}.{name}")
                except ConfigError:
                    continue
    return out


def read_overrides(path: Path, within: Path | str | None = None) -> dict[str, Any]:
    """One file's overrides; ConfigError when it is not YAML or not a mapping (`rose config set` refuses it), or
    not a regular file of at most reader.SMALL bytes (a FIFO is never waited on). A link is followed only to a
    file inside `within`: by default the file's own store; the user's own global file may link anywhere ("/")."""
    from rose.store import reader

    try:
        text = reader.read_text(path, reader.SMALL, within=path.parent if within is None else within,
                                errors="replace")
    except FileNotFoundError:
        return {}
    except OSError as exc:   # UnsafeFile (a FIFO, device, folder, a link out of the store, too big), or no access
        raise ConfigError(f"{path}: {getattr(exc, 'reason', None) or exc.strerror or exc}") from None
    from rose.store.frontmatter import load_yaml

    try:
        data = load_yaml(text)
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file, reported as such
        raise ConfigError(f"{path}: {_yaml_reason(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections")
    return data


def _yaml_reason(exc: Exception) -> str:
    """One line a person can act on, from whatever the YAML parser raised."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"not valid YAML{where}: {' '.join(str(what).split())}"


def _read_tolerant(path: Path, within: str | None = None) -> tuple[Any, list[Problem]]:
    try:
        return read_overrides(path, within), []
    except ConfigError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        return None, [Problem(str(path), "", ProblemKind.UNREADABLE, f"{reason}; the whole file is skipped")]


def load(paths: list[Path | Source], cache: Path | None = None, env: Any = None) -> Settings:
    """Defaults, then each file's overrides in order (global first, project last), then ROSE_* variables.

    Never raises for what a file holds: unknown keys, bad values, unreadable files and privileged keys of an
    untrusted repository file are skipped and listed in `settings.problems` (doctor and the notice report them).
    With `cache`, the parsed overrides are kept as JSON keyed by each file's (mtime, size), so the per-prompt hook
    does not import a YAML parser to read two small files that rarely change.
    """
    sources = [p if isinstance(p, Source) else Source(p) for p in paths]
    files = [s.path for s in sources]
    raw = _cached_overrides(files, cache) if cache is not None else None
    if raw is None:
        raw = []
        for source in sources:   # the global store's own file (own=True, not a trust check) may be a dotfile link
            data, read_problems = _read_tolerant(source.path, "/" if source.own is True else None)
            path = source.path
            raw.append((str(path), data, [p.to_dict() for p in read_problems]))
        if cache is not None:
            _store_overrides(files, cache, raw)
    settings = Settings()
    for source, (name, overrides, problems) in zip(sources, raw):
        settings.problems += [Problem(p["source"], p["key"], ProblemKind(p["kind"]), p["detail"]) for p in problems]
        settings.problems += apply_overrides(settings, overrides, name, own=source.is_own)
    from_env = env_overrides(env)
    if from_env:
        settings.problems += apply_overrides(settings, from_env, "environment (ROSE_*)", own=True)
    return settings


def _fingerprint(paths: list[Path]) -> list[list[object]]:
    out: list[list[object]] = []
    for p in paths:
        try:
            st = p.stat()
            out.append([str(p), st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([str(p), 0, -1])
    return out


CACHE_VERSION = 2


def _cached_overrides(paths: list[Path], cache: Path) -> list[tuple[str, Any, list[dict[str, str]]]] | None:
    try:
        from rose.store import reader

        # only a file only this user could have written (theirs, 0600, no link, no FIFO): the cache's overrides are
        # applied with their source's privilege, so one another user wrote would choose what rose runs
        data = load_json(reader.read_private(cache, reader.RECORD))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION \
            or data.get("fingerprint") != _fingerprint(paths):
        return None
    try:
        return [(str(s), o, list(p)) for s, o, p in data.get("overrides", [])]
    except (TypeError, ValueError):
        return None


def _store_overrides(paths: list[Path], cache: Path, raw: list[tuple[str, Any, list[dict[str, str]]]]) -> None:
    import json

    from rose.store.atomic import write_text_atomic

    try:
        write_text_atomic(cache, json.dumps({"version": CACHE_VERSION, "fingerprint": _fingerprint(paths),
                                             "overrides": raw}, default=str), mode=0o600)
    except OSError:
        pass  # a cache that cannot be written is only slower


def set_in_file(path: Path, key: str, raw_value: str) -> Any:
    """Validate and write one override into a config file (atomically, under the caller's lock)."""
    from rose.store.atomic import write_text_atomic
    from rose.store.frontmatter import dump_yaml

    knob = _knob(key)
    value = coerce(knob, raw_value)
    data = read_overrides(path)
    stored = value.value if isinstance(value, enum.Enum) else value
    section = data.setdefault(knob.section, {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: section {knob.section!r} is not a mapping; fix the file by hand first")
    section[knob.name] = stored
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
             "Set a value with `rose config set KEY VALUE` (project store) or add `--scope global` (your own "
             "`~/.rose/config.yaml`). Any key can also be set for one shell with an environment variable "
             "`ROSE_<SECTION>_<NAME>` (`ROSE_AGENT_BACKEND=codex`), which wins over every file.", "",
             "Keys marked **own config only** choose a program rose runs, an endpoint it calls, a credential it "
             "sends or a backend. They are honoured only from your own config (the global store's file or a "
             "`ROSE_*` variable), never from a `.rose/config.yaml` inside a repository, unless you review that "
             "file and pin its exact content with `rose trust` (any later change to the file lapses the trust). "
             "Unknown keys and bad values are skipped with a warning (`rose doctor`), never fatal.", ""]
    current = ""
    for k in knobs():
        if k.section != current:
            current = k.section
            lines += [f"## {current}", "", "| key | type | default | why |", "|---|---|---|---|"]
        type_name = k.type_name.replace(" | ", ", ")
        reason = k.reason + (" **Own config only.**" if k.privileged else "")
        lines.append(f"| `{k.key}` | {type_name} | `{display(k.default)}` | {reason} |")
    from rose import envvars

    lines += ["", "## Environment variables", "",
              "Besides the settings' own `ROSE_<SECTION>_<NAME>`, rose reads these (declared in `src/rose/envvars.py`).",
              "", "| variable | default | what it does |", "|---|---|---|"]
    for name, default, what, internal in envvars.VARIABLES:
        lines.append(f"| `{name}` | {f'`{default}`' if default else 'unset'} | {what}"
                     + (" Set by rose itself." if internal else "") + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
