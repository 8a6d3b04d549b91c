"""Calls that decide what reaches the agent: relevance (the apex walk), select (a forked session searches the store)
and route (a selection lesson: where to look for a kind of task)."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import (ID, REASON, Call, Candidate, duplicate_ids, each_exactly_once, unknown_ids)
from rose.judge.prompt import Prompt

# -- relevance -----------------------------------------------------------------------------------------------------

RELEVANCE_VERSION = 1


class Verdict(str, Enum):
    RELEVANT = "relevant"     # bears on the prompt: serve it
    MAYBE = "maybe"           # might: the walk may serve it if the budget allows
    UNRELATED = "unrelated"   # does not bear on it: its branch is never walked
    DESCEND = "descend"       # too abstract to judge from its line: open its children


@dataclass
class RelevanceRequest:
    prompt: str
    candidates: list[Candidate]
    rules: list[str] = field(default_factory=list)   # selection rules learned earlier (when ... then ...)


@dataclass
class Judgement:
    id: str
    verdict: Verdict
    reason: str


@dataclass
class RelevanceAnswer:
    version: ClassVar[int] = RELEVANCE_VERSION
    judgements: list[Judgement]

    def ids(self, *verdicts: Verdict) -> list[str]:
        return [j.id for j in self.judgements if j.verdict in verdicts]

    def verdict(self, node_id: str) -> Verdict:
        return next(j.verdict for j in self.judgements if j.id == node_id)


RELEVANCE_SCHEMA = sch.obj(
    judgements=sch.array(sch.obj(
        id=ID,
        verdict=sch.enum(*(v.value for v in Verdict)),
        reason=REASON,
    ), "One entry per candidate, in any order.", max_items=500),
)


def _render_relevance(r: RelevanceRequest) -> str:
    prompt = Prompt("which remembered lessons bear on this prompt?", """
A coding agent is about to handle the user's prompt below. Rose holds lessons learned from earlier work. Decide, for
every candidate lesson, whether it bears on handling this prompt. Each candidate is one line: `id | title | gist`.

Give exactly one verdict per candidate:
- relevant: knowing it would change or inform how this prompt should be handled.
- maybe: it plausibly bears on the prompt, but its line is not enough to be sure.
- unrelated: it does not bear on this prompt. Sharing a word or a topic is not enough to be relevant.
- descend: its line is a summary too abstract to judge; its more specific children should be opened.

Judge every candidate exactly once and use only the ids listed. Give a short reason for each.""") \
        .data("prompt", r.prompt, "The user's prompt:") \
        .lines("candidates", (c.line() for c in r.candidates), "Candidate lessons (id | title | gist):")
    if r.rules:
        prompt = prompt.lines("rules", r.rules, "Selection rules learned earlier (apply those whose condition fits):")
    return prompt.render('Return {"judgements": [{"id", "verdict", "reason"}, ...]} with one entry per candidate.')


def _check_relevance(data: dict[str, Any], r: RelevanceRequest) -> list[str]:
    return each_exactly_once([j["id"] for j in data["judgements"]], [c.id for c in r.candidates], "judgements")


def _parse_relevance(data: dict[str, Any]) -> RelevanceAnswer:
    return RelevanceAnswer([Judgement(j["id"], Verdict(j["verdict"]), j["reason"]) for j in data["judgements"]])


RELEVANCE: Call[RelevanceRequest, RelevanceAnswer] = Call(
    name="relevance", version=RELEVANCE_VERSION, question="which remembered lessons bear on this prompt?",
    request_type=RelevanceRequest, answer_type=RelevanceAnswer, schema=RELEVANCE_SCHEMA,
    render=_render_relevance, parse=_parse_relevance, checks=_check_relevance)

# -- select --------------------------------------------------------------------------------------------------------

SELECT_VERSION = 1
NODE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$"


@dataclass
class SelectRequest:
    """The work to find lessons for, where the lessons are on disk, and the selection rules learned so far."""

    task: str
    store_dirs: list[str]
    rules: list[str] = field(default_factory=list)
    max_lessons: int = 8
    known_ids: list[str] = field(default_factory=list)  # when given, every returned id must be one of these


@dataclass
class Selected:
    id: str
    reason: str


@dataclass
class SelectAnswer:
    version: ClassVar[int] = SELECT_VERSION
    nodes: list[Selected]

    @property
    def ids(self) -> list[str]:
        return [n.id for n in self.nodes]


SELECT_SCHEMA = sch.obj(
    nodes=sch.array(sch.obj(
        id=sch.string("A lesson id from a file's `id:` frontmatter line.", pattern=NODE_ID_PATTERN),
        reason=REASON,
    ), "The lessons this work needs; empty when none applies.", max_items=20),
)


def _render_select(r: SelectRequest) -> str:
    return Prompt("which lessons does this work need?", f"""
Find the remembered lessons that the task below needs, by searching the lesson files. Lessons are markdown files
with YAML frontmatter (`id:`, `title:`, `gist:`, `tags:`) under the folders listed below; `index.md` beside them
lists every lesson on one line. Search them with your read-only tools (grep for the task's terms, open the promising
files). Follow the selection rules where their condition matches this task: they record where the right lessons
were found (or not found) for this kind of work before.

Return the ids of at most {r.max_lessons} lessons that would change how the task is done, each with a short
reason. A lesson that merely shares a topic is not needed. Return an empty list when nothing applies; do not
guess ids: copy them from the files' `id:` lines.""") \
        .data("task", r.task, "The task:") \
        .lines("store", r.store_dirs, "Lesson folders to search:") \
        .lines("rules", r.rules, "Selection rules (when ... then ...):") \
        .render('Return {"nodes": [{"id", "reason"}, ...]}.')


def _check_select(data: dict[str, Any], r: SelectRequest) -> list[str]:
    ids = [n["id"] for n in data["nodes"]]
    out = duplicate_ids(ids, "nodes")
    if len(ids) > r.max_lessons:
        out.append(f"nodes: {len(ids)} lessons returned, at most {r.max_lessons} were asked for")
    if r.known_ids:
        out += unknown_ids(ids, r.known_ids, "nodes")
    return out


SELECT: Call[SelectRequest, SelectAnswer] = Call(
    name="select", version=SELECT_VERSION, question="which lessons does this work need? (a forked session searches)",
    request_type=SelectRequest, answer_type=SelectAnswer, schema=SELECT_SCHEMA, render=_render_select,
    parse=lambda d: SelectAnswer([Selected(n["id"], n["reason"]) for n in d["nodes"]]), checks=_check_select,
    tools=("Read", "Grep", "Glob"), reads=lambda r: r.store_dirs, max_turns=10)

# -- route ---------------------------------------------------------------------------------------------------------

ROUTE_VERSION = 2
FAMILY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class RouteDecision(str, Enum):
    RULE = "rule"      # a rule conditioned on a kind of task
    REFUSE = "refuse"  # nothing that can be conditioned on a kind of task (e.g. "n_abc is rarely useful")


@dataclass
class RouteRequest:
    """What a session was about, what recall served, what was used, what the agent had to find by itself, and the
    rules that exist already."""

    task: str
    served: list[Candidate]
    used: list[str]
    rules: list[str] = field(default_factory=list)
    searches: str = ""   # how the session searched the store (greps, `rose search`, reads), if recorded
    looked_up: list[Candidate] = field(default_factory=list)   # lessons the agent found itself (not served)
    families: list[str] = field(default_factory=list)          # the store's lesson folders (nodes/<family>/)
    family_of: dict[str, str] = field(default_factory=dict)    # lesson id -> its folder, for the lines shown


@dataclass
class RouteAnswer:
    version: ClassVar[int] = ROUTE_VERSION
    decision: RouteDecision
    when: str | None
    then: str | None
    reason: str
    look_in: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)

    @property
    def refused(self) -> bool:
        return self.decision is RouteDecision.REFUSE


_FAMILIES = sch.array(sch.string("A lesson folder name, as in nodes/<name>/.", pattern=FAMILY_PATTERN),
                      "Lesson folders (families), by name.", max_items=8)
ROUTE_SCHEMA = sch.obj(
    decision=sch.enum(*(d.value for d in RouteDecision)),
    when=sch.nullable(sch.string("The kind of task, e.g. 'the task runs the integration tests'.", min_length=8,
                                 max_length=300)),
    then=sch.nullable(sch.text("Where to look or what to skip, e.g. 'read nodes/testing/ before running pytest'.", 300)),
    look_in=_FAMILIES,
    skip=_FAMILIES,
    reason=REASON,
)


def _render_route(r: RouteRequest) -> str:
    def line(c: Candidate) -> str:
        fam = r.family_of.get(c.id)
        return c.line() + (f"   (nodes/{fam}/)" if fam else "")

    served = [line(c) + ("   [USED]" if c.id in set(r.used) else "   [not used]") for c in r.served]
    prompt = Prompt("what selection rule does this session teach?", """
A selection rule teaches rose's retrieval where the knowledge for a kind of work lives. Below is a session's task,
the lessons recall served for it (marked used or not used by the work), the lessons the agent had to find by itself
because recall did not serve them, how it searched, and the rules that exist already.

Write at most one new rule of the form: when <a kind of task>, then <where to look, or what to skip>. Examples:
- when: "the task runs the integration tests", then: "read nodes/testing/ before running pytest", look_in: ["testing"]
- when: "the task is a docs change", then: "nothing in nodes/deploy/ applies; skip it", skip: ["deploy"]

The `when` must describe a kind of task that future prompts can be recognised by: not "always" or "any task", and
never a lesson id. `look_in` and `skip` name lesson folders from the list given (at least one of them for a rule).
Refuse (decision "refuse", when and then null, look_in and skip empty) when the only thing to say is about a lesson
rather than a kind of task (e.g. "n_abc is rarely useful": how often a lesson is used says nothing about which work
needs it), when an existing rule already says it, or when the session teaches nothing about where to look.""") \
        .data("task", r.task, "The session's task:") \
        .lines("served", served, "Lessons served (id | title | gist, its folder, and whether the work used it):")
    if r.looked_up:
        prompt = prompt.lines("looked_up", [line(c) for c in r.looked_up],
                              "Lessons the agent found by itself, which recall had not served:")
    return prompt \
        .lines("families", r.families or ["(none)"], "Lesson folders (nodes/<name>/):") \
        .lines("rules", r.rules, "Existing selection rules:") \
        .data("searches", r.searches or "(not recorded)", "How the session searched the store:") \
        .render('Return {"decision": "rule"|"refuse", "when", "then", "look_in", "skip", "reason"}.')


def _check_route(data: dict[str, Any], r: RouteRequest) -> list[str]:
    from rose.routing import unconditioned

    if data["decision"] == RouteDecision.REFUSE.value:
        return [f"{k}: a refusal names no folders" for k in ("look_in", "skip") if data[k]]
    out = [f"{k}: a rule needs a non-empty {k!r}" for k in ("when", "then") if not (data[k] or "").strip()]
    why = unconditioned(data["when"] or "") if (data["when"] or "").strip() else None
    if why:
        out.append(f"when: {why}")
    if not data["look_in"] and not data["skip"]:
        out.append("look_in, skip: a rule names at least one lesson folder it points at or rules out")
    if r.families:
        out += [f"{k}: {f!r} is not a lesson folder of this store" for k in ("look_in", "skip") for f in data[k]
                if f not in r.families]
    both = set(data["look_in"]) & set(data["skip"])
    if both:
        out.append(f"look_in, skip: {sorted(both)} cannot be both looked in and skipped")
    return out


def _parse_route(d: dict[str, Any]) -> RouteAnswer:
    decision = RouteDecision(d["decision"])
    if decision is RouteDecision.REFUSE:
        return RouteAnswer(decision, None, None, d["reason"])
    return RouteAnswer(decision, d["when"].strip(), d["then"].strip(), d["reason"], list(d["look_in"]),
                       list(d["skip"]))


ROUTE: Call[RouteRequest, RouteAnswer] = Call(
    name="route", version=ROUTE_VERSION, question="which selection rule (when <kind of task>, then ...) does this teach?",
    request_type=RouteRequest, answer_type=RouteAnswer, schema=ROUTE_SCHEMA, render=_render_route,
    parse=_parse_route, checks=_check_route)
