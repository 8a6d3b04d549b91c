"""The error tree, in one module. Every exception rose defines is here; the modules that raise them re-export theirs
(``rose.judge.errors.JudgeFailure`` and ``rose.judge.JudgeFailure`` are this module's class). A user-caused error is
one line, fit to show as is; the CLI prints it as ``rose: <message>``.

    RoseError                          anything rose raises on purpose
    ├── StoreNotFound                  no store for the working directory (and none asked for)
    ├── NodeNotFound                   an id that no store holds
    ├── CorruptFile                    a node/episode file that cannot be parsed (path + reason; never rewritten)
    ├── UnsafeStore                    a repository's .rose/ holding a symlink where rose reads or writes
    ├── UnsafeFile (OSError)           a store file that is a link, a FIFO, a device, a folder or too big: not read
    ├── ConfigError                    an unknown key or a value of the wrong type (names the key and the type)
    ├── LockTimeout                    another process held the store lock for too long
    ├── JudgeFailure(kind=FailureKind) a model call that did not yield a valid answer (fail closed; see rose.judge)
    ├── AnswerInvalid (ValueError)     a call's own validation refused an answer; Judge.ask makes it a JudgeFailure
    ├── SelectorFailed                 a recall selector could not choose (the pipeline falls back and says so)
    ├── EmbedUnavailable               the configured embedder cannot run here (recall goes lexical-only)
    ├── HelperTimeout                  the warm helper took a request and did not answer in time
    ├── NotText (ValueError)           text given to rose (an argument, stdin, an MCP call) not UTF-8; nothing stored
    ├── PayloadError (ValueError)      a hook payload that is not what the agent sends (the hook fails open)
    ├── InstallError                   a file `rose install` must edit cannot be read safely; nothing was written
    ├── TomlError (ValueError)         a TOML text rose's own reader refuses
    ├── RuleRefused                    a selection rule not conditioned on a kind of task
    ├── EvolutionError                 a `rose evolution` action that cannot be done
    ├── RegistryUnreadable             an evolution registry that cannot be read (left as it is)
    ├── Warming                        the warm helper's model or vectors are still loading (serve lexical now)
    ├── TranscriptError                a transcript that cannot be read
    │   ├── TranscriptNotFound         no file at the path
    │   └── TranscriptUnreadable       no permission, binary, or not a Claude/Codex JSONL transcript
    │       └── TranscriptNotAFile     a directory, FIFO, socket or device: refused before any blocking open
    ├── QuoteFound                     not an error: the full-text quote probe's early exit (caught where raised)
    ├── LayoutUnsure                   not an error: the fast frontmatter reader hands the text to PyYAML (caught there)
    └── SourceChanged (OSError)        not an error: index.md's trusted splice saw its source written meanwhile (the
                                       whole file is written instead; caught in rose.store.store)

    BaseException, on purpose outside RoseError (so that no ``except Exception`` in a stage can swallow them):
    RoseInterrupt
    ├── JobStopped                     a learner job's time is up
    └── LearnerDeadline                the learner run's time is up (the job in progress stays queued)

The classes that also derive from ValueError keep the ``except ValueError`` of the code around them working.
This module imports nothing of rose's: every layer may import it.
"""
from __future__ import annotations

from enum import Enum

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook path imports this module: no typing or pathlib at run time
    from os import PathLike
    from pathlib import Path


class RoseError(Exception):
    """Base of every error rose raises deliberately; its message is fit to show a user as is."""


class StoreNotFound(RoseError):
    def __init__(self, start: Path):
        super().__init__(
            f"no rose store for {start} yet: rose starts one by itself when its hooks run here (`rose install "
            "--scope user`), or `rose init` makes a committable .rose/ now"
        )
        self.start = start


class NodeNotFound(RoseError):
    def __init__(self, node_id: str):
        super().__init__(f"no lesson with id {node_id!r} (try `rose search` or `rose status`)")
        self.node_id = node_id


class UnsafeStore(RoseError):
    """A repository's `.rose/` that holds a symlink where rose reads or writes, or that another user owns: refused
    whole, never followed (`why` says what, when it is not a link)."""

    def __init__(self, path: Path, why: str = ""):
        super().__init__(f"{path} {why}; this repository's store is left alone" if why else
                         f"{path} is a symbolic link inside a repository's rose store: rose does not follow links "
                         "there (they could make it write outside the repository); this repository is left alone "
                         "until the link is replaced by a real folder or file")
        self.path = path


class UnsafeFile(RoseError, OSError):
    """A file in a store that rose will not read: a symbolic link (out of the store), a FIFO, socket, device or
    folder, or more bytes than such a file can hold (rose.store.reader). An OSError, so every reader that skips an
    unreadable file skips this one too; refused before any byte is read, so nothing blocks or fills memory."""

    def __init__(self, path: PathLike[str] | str, reason: str):
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


class CorruptFile(RoseError):
    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ConfigError(RoseError):
    pass


class LockTimeout(RoseError):
    def __init__(self, path: Path, seconds: float):
        super().__init__(f"could not take the store lock {path} within {seconds:.0f}s; is another rose stuck?")
        self.path = path


# -- the judge ------------------------------------------------------------------------------------------------------
class FailureKind(str, Enum):
    """What went wrong in a model call, so callers and `rose doctor` can tell "nothing is installed" from "the model
    spoke nonsense" (rose.judge.errors says which kinds are retried and which count as an outage)."""
    NO_BACKEND = "no_backend"          # model-free mode (nothing configured or found) or an unregistered backend
    MISSING_BINARY = "missing_binary"  # the configured CLI is not on PATH / not executable
    TIMEOUT = "timeout"                # past the deadline; the child's whole process group was killed
    EXIT = "exit"                      # the CLI exited non-zero without saying why in its JSON
    MODEL_ERROR = "model_error"        # the backend answered but reported an error (claude is_error, turn.failed)
    HTTP = "http"                      # an HTTP 4xx/5xx from an API endpoint
    UNREACHABLE = "unreachable"        # connection refused, DNS failure, TLS failure
    UNPARSEABLE = "unparseable"        # no JSON object could be read from the reply
    SCHEMA = "schema"                  # a JSON object that breaks the call's schema or its extra checks
    REFUSED = "refused"                # the model declined to answer (OpenAI `refusal`)
    CONFIG = "config"                  # the backend cannot run as configured (e.g. no model name for openai)
    SCRIPT = "script"                  # the scripted (test) backend had nothing queued and no handler


class JudgeFailure(RoseError):
    """A model call that did not yield a valid answer. Fail closed: the caller must treat it as "no judgment"."""

    def __init__(self, kind: FailureKind, detail: str, *, call: str = "", backend: str = "",
                 status: int | None = None, problems: list[str] | None = None):
        self.kind = FailureKind(kind)
        self.detail = detail
        self.call = call
        self.backend = backend
        self.status = status
        self.problems = list(problems or [])
        super().__init__(self._message())

    def _message(self) -> str:
        where = " ".join(p for p in (f"judge {self.call}" if self.call else "judge",
                                     f"via {self.backend}" if self.backend else "") if p)
        return f"{where} failed ({self.kind.value}): {self.detail}"

    def located(self, call: str, backend: str) -> JudgeFailure:
        """The same failure, stamped with the call and backend it happened in (for messages and events)."""
        self.call = self.call or call
        self.backend = self.backend or backend
        self.args = (self._message(),)
        return self


class AnswerInvalid(RoseError, ValueError):
    """Raised by a call's validation: the answer breaks the schema or an extra check. Judge.ask turns it into a
    JudgeFailure(SCHEMA); it is its own type so calls can be tested without a backend."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))


# -- recall -----------------------------------------------------------------------------------------------------------
class SelectorFailed(RoseError):
    """A selector (config.Selector) that could not choose; the pipeline falls back and names it on the notice."""

    def __init__(self, selector: Enum, reason: str):
        super().__init__(f"{selector.value}: {reason}")
        self.selector = selector
        self.reason = reason


class EmbedUnavailable(RoseError):
    """The configured embedder cannot run here (not installed, endpoint down); callers go lexical-only."""


class HelperTimeout(RoseError):
    """The helper took the request but did not answer in time (the caller must not redo the work)."""


class NotText(RoseError, ValueError):
    """What was given as text (an argument, stdin, an MCP call) cannot be written as UTF-8: nothing was stored."""

    def __init__(self, what: str, value: str, at: int):
        char = value[at]
        byte = f"byte 0x{ord(char) - 0xDC00:02x}" if 0xDC80 <= ord(char) <= 0xDCFF else f"U+{ord(char):04X}"
        super().__init__(f"{what} is not UTF-8 text ({byte} at character {at + 1}); nothing was stored")


# -- hooks, install, routing -----------------------------------------------------------------------------------------
class PayloadError(RoseError, ValueError):
    """A hook payload that is not what the agent sends: too big, not JSON, not an object, a field of the wrong type."""


class InstallError(RoseError):
    """A file rose must edit cannot be read safely (malformed JSON or TOML, a wrong shape). Nothing was written."""


class TomlError(RoseError, ValueError):
    """A TOML text rose's own small reader refuses (it reads the files `rose install` edits)."""


class RuleRefused(RoseError):
    """A rule that is not conditioned on a kind of task (or says nothing about where to look)."""


# -- transcripts ------------------------------------------------------------------------------------------------------
class EvolutionError(RoseError):
    """A `rose evolution` action that cannot be done (no such record, or not in a state that allows it)."""


class RegistryUnreadable(RoseError):
    """An evolution registry that exists but cannot be read: left as it is, and the edit dropped."""


class Warming(RoseError):
    """The warm helper's model or a vector table is still loading: the caller serves lexical results now."""


class TranscriptError(RoseError):
    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class TranscriptNotFound(TranscriptError):
    def __init__(self, path: Path):
        super().__init__(path, "no such transcript file")


class TranscriptUnreadable(TranscriptError):
    pass


class TranscriptNotAFile(TranscriptUnreadable):
    """The path names something other than a regular file (reading a FIFO or a device could block forever)."""

    def __init__(self, path: Path, what: str):
        super().__init__(path, f"is a {what}, not a transcript file")
        self.what = what


class QuoteFound(RoseError):
    """Not an error: the full-text quote probe stops reading at the turn that holds the quote (message ``n``)."""

    def __init__(self, n: int):
        super().__init__(f"quote found in message {n}")
        self.n = n


class LayoutUnsure(RoseError):
    """Not certainly the frontmatter layout rose.store.frontmatter reads itself: PyYAML reads it (caught there)."""


class SourceChanged(RoseError, OSError):
    """The file a splice copies from is not what it was when it was stamped or read: another program wrote it
    meanwhile (rose.store.splice; the store then writes index.md whole)."""


# -- interrupts: BaseException on purpose ----------------------------------------------------------------------------
class RoseInterrupt(BaseException):
    """Time is up: raised into running work, and never caught by an ``except Exception`` on its way out."""


class JobStopped(RoseInterrupt):
    """Raised inside a job when its time is up (a BaseException, so no `except Exception` in a stage hides it)."""


class LearnerDeadline(RoseInterrupt):
    """Raised when the whole run's time is up: the job in progress stays queued as it was."""
