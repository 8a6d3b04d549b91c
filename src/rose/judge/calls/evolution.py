"""The call evolution asks (rose.evolve): which skill or guardrail, if any, a grounded memory should become.

    evolve          evolution        compile these memories into one candidate skill or guardrail (or none)

The answer is only a proposal. Everything checkable is checked in code before a second call (`verify`) reads it
against the memories: the name, the trigger's syntax, the replay cases run against the trigger as rendered, the body
for session handles and machine-local paths (rose.evolve.screen). The falsified hypotheses (records already rejected
or retired, with their reason) are shown so the same idea is not proposed again.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from rose.judge import schema as sch
from rose.judge.calls.base import REASON, Call, Lesson
from rose.judge.prompt import Prompt, one_line

EVOLVE_VERSION = 1


@dataclass
class Hypothesis:
    """A record evolution already made and dropped: what it was and why it went."""

    name: str
    kind: str
    trigger: str
    reason: str


@dataclass
class EvolveRequest:
    memories: list[Lesson]                           # the grounded memory (or a cluster of restatements of it)
    falsified: list[Hypothesis] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)   # names already used (authored or generated)
    allow_block: bool = False                        # may a guardrail block (else it can only warn)


@dataclass
class ReplayCase:
    text: str
    fires: bool


@dataclass
class EvolveAnswer:
    version: ClassVar[int] = EVOLVE_VERSION
    kind: str                     # skill | guardrail | none
    name: str
    description: str              # the answer's `summary`: one line, what it is for
    phrases: list[str]            # skill: the prompt words that activate it
    command: str                  # guardrail: the command pattern it matches
    action: str                   # guardrail: warn | block
    body: str                     # skill: the procedure; guardrail: the message
    cases: list[ReplayCase]
    reason: str


EVOLVE_SCHEMA = sch.obj(
    kind=sch.enum("skill", "guardrail", "none"),
    name=sch.string("lowercase-words-with-hyphens, 3-40 characters; empty for none", max_length=40),
    summary=sch.string("One line: when this applies and what it does; empty for none", max_length=300),
    phrases=sch.array(sch.string("1-4 plain words that all appear in a prompt this skill is for", max_length=60),
                      "skill only: any one phrase activates it; [] otherwise", max_items=8),
    command=sch.string("guardrail only: the command's words (`*` for any one word), e.g. `git push --force`; "
                       "no quotes, no && ; | or $(); empty otherwise", max_length=120),
    action=sch.enum("warn", "block", "none"),
    body=sch.string("skill: the procedure as short markdown steps; guardrail: the message shown when it fires",
                    max_length=4000),
    cases=sch.array(sch.obj(text=sch.text("a prompt (skill) or a shell command (guardrail)", 400),
                            fires=sch.boolean()),
                    "replay cases: at least one that fires and one that does not", max_items=12),
    reason=REASON,
)


def _render(r: EvolveRequest) -> str:
    p = Prompt("which skill or guardrail, if any, should these memories become?", """
rose remembers what sessions taught. One memory (or several restatements of one rule, below) has been grounded in
what a user said or in checks that ran. Decide whether it should become a reusable behaviour for the coding agent:

- a skill: a short procedure the agent follows when a prompt is about something specific. Give 1-8 activation
  phrases of 1-4 plain words each; a prompt activates the skill when every word of one phrase appears in it.
- a guardrail: a rule checked before the agent runs a shell command. Give the command's words (`*` stands for any
  one word); it matches a command that starts with the first word and contains all the others. No quotes and none
  of && ; | or $( in the pattern. Its action is warn, or block only when it says so below.
- none, when the memory is advice that needs judgement, is about one past task, or already reads as a rule the agent
  simply follows. Most memories are none.

The body of a skill is a procedure (steps, commands in general form), not an account of a session: never session
handles, message numbers, or paths of one machine. Give replay cases that show exactly when the trigger fires and when
it must not (at least one of each). Do not propose anything listed under falsified: those were tried and dropped.""")
    for m in r.memories:
        p.data(f"memory {one_line(m.id, 80)}", m.text(), "")
    p.lines("falsified", [f"{h.kind} {h.name}: {h.trigger} — dropped: {h.reason}" for h in r.falsified],
            "Records already tried and dropped (falsified hypotheses):")
    p.lines("taken", r.taken, "Names already taken:")
    p.data("guardrail actions", "warn or block" if r.allow_block else "warn only (the user has not allowed block)", "")
    return p.render('Return {"kind", "name", "summary", "phrases", "command", "action", "body", "cases": '
                    '[{"text", "fires"}], "reason"}; for none, empty strings and [] with action none.')


def _checks(d: dict, r: EvolveRequest) -> list[str]:
    out = []
    if d["kind"] != "none":
        if not d["name"] or not d["body"]:
            out.append("a skill or guardrail needs a name and a body")
        if d["kind"] == "skill" and not d["phrases"]:
            out.append("a skill needs at least one activation phrase")
        if d["kind"] == "guardrail" and (not d["command"] or d["action"] == "none"):
            out.append("a guardrail needs a command pattern and an action")
    if d["kind"] == "guardrail" and d["action"] == "block" and not r.allow_block:
        out.append("action block is not allowed here: use warn")
    return out


EVOLVE: Call[EvolveRequest, EvolveAnswer] = Call(
    name="evolve", version=EVOLVE_VERSION, question="which skill or guardrail, if any, should this memory become?",
    request_type=EvolveRequest, answer_type=EvolveAnswer, schema=EVOLVE_SCHEMA, render=_render,
    parse=lambda d: EvolveAnswer(d["kind"], d["name"], d["summary"], list(d["phrases"]), d["command"],
                                 d["action"], d["body"], [ReplayCase(c["text"], c["fires"]) for c in d["cases"]],
                                 d["reason"]),
    checks=_checks)
