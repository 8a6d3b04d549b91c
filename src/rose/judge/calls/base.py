"""What a semantic call is: a name, a version, a typed request, a strict schema, a prompt and a parser.

    call = RELEVANCE
    prompt = call.render(request)          # instructions + untrusted data blocks
    answer = call.answer(data, request)    # schema + extra checks, then the typed answer; AnswerInvalid otherwise

Bump a call's VERSION whenever its prompt, schema or meaning changes: the version is part of the cache key, so old
answers stop being served the moment the question changes.

Extra checks are what a schema cannot say (every id must be one offered, each candidate judged once, a quote must
be verbatim). They are validation failures like any schema violation: Judge.ask retries once, then fails closed.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rose.judge import schema as sch
from rose.judge.errors import AnswerInvalid
from rose.judge.prompt import one_line

Req = TypeVar("Req")
Ans = TypeVar("Ans")


@dataclass(frozen=True)
class Call(Generic[Req, Ans]):
    name: str
    version: int
    question: str                                   # one line, for docs and `rose doctor`
    request_type: type[Req]
    answer_type: type[Ans]
    schema: dict[str, Any]
    render: Callable[[Req], str]
    parse: Callable[[dict[str, Any]], Ans]          # from an already validated dict
    checks: Callable[[dict[str, Any], Req], list[str]] = lambda data, request: []
    tools: tuple[str, ...] = ()                     # tools a CLI backend may let the model use (select greps)
    reads: Callable[[Req], Sequence[str]] = lambda request: ()   # the only folders those tools may read
    max_turns: int = 3                              # agentic turns a CLI backend may take

    def __post_init__(self) -> None:
        sch.check_supported(self.schema, self.name)

    def problems(self, data: Any, request: Req) -> list[str]:
        """Everything wrong with a raw answer: schema first, then (only if it fits) the extra checks."""
        if not isinstance(data, dict):
            return [f"$: expected a JSON object, got {type(data).__name__}"]
        found = sch.errors(self.schema, data)
        return found or list(self.checks(data, request))

    def answer(self, data: Any, request: Req) -> Ans:
        found = self.problems(data, request)
        if found:
            raise AnswerInvalid(found)
        return self.parse(data)


def canonical(request: Any) -> str:
    """Sorted-keys JSON of a request dataclass: the input half of its cache key."""
    payload = dataclasses.asdict(request) if dataclasses.is_dataclass(request) and not isinstance(request, type) \
        else request
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value: Any) -> Any:
    if hasattr(value, "value"):
        return value.value
    return str(value)


# -- shared request pieces ---------------------------------------------------------------------------------------


@dataclass
class Candidate:
    """A lesson as a selector sees it: one line of id, title and gist. Never the body."""

    id: str
    title: str
    gist: str = ""

    def line(self) -> str:
        return f"{self.id} | {one_line(self.title, 120)} | {one_line(self.gist, 240)}"


@dataclass
class Lesson:
    """A lesson's full text, for calls that must read it (assess, compress, reconcile...). `id` may be "" for a
    lesson not yet stored."""

    id: str
    title: str
    body: str

    def text(self) -> str:
        head = f"id: {self.id}\n" if self.id else ""
        return f"{head}title: {one_line(self.title, 200)}\n\n{self.body}"


@dataclass
class Message:
    """One transcript message with an addressable handle (e.g. session://s1/message/4); role user|assistant|tool."""

    handle: str
    role: str
    text: str


# -- shared answer schema pieces and checks ------------------------------------------------------------------------

ID = sch.string("An id copied exactly from the data.", min_length=1, max_length=80)
REASON = sch.text("One or two sentences.", max_length=1000)


def unknown_ids(ids: Iterable[str], allowed: Iterable[str], where: str) -> list[str]:
    allowed_set = set(allowed)
    return [f"{where}: {i!r} is not one of the ids offered" for i in ids if i not in allowed_set]


def duplicate_ids(ids: list[str], where: str) -> list[str]:
    seen: set[str] = set()
    out = []
    for i in ids:
        if i in seen:
            out.append(f"{where}: {i!r} appears more than once")
        seen.add(i)
    return out


def each_exactly_once(ids: list[str], offered: list[str], where: str) -> list[str]:
    """Every offered id judged once, and nothing else judged: the shape of relevance, assess and rank_repairs."""
    out = unknown_ids(ids, offered, where) + duplicate_ids(ids, where)
    missing = [i for i in dict.fromkeys(offered) if i not in set(ids)]
    if missing:
        out.append(f"{where}: no answer for {', '.join(repr(m) for m in missing)}")
    return out
