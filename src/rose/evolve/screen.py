"""Triggers, and the deterministic screen every proposal passes before a verifier is asked about it.

A skill's trigger is a list of phrases; a prompt activates the skill when every word of one phrase is among the
prompt's words (lower case, punctuation aside). A guardrail's trigger is a command pattern: its words, `*` for any
one word; a shell command matches when one of its simple commands (split at && || ; | and newlines) starts with the
pattern's first word and contains each of the others as a word. Both are plain code, fast enough for every prompt
and every tool call.

The screen (seed 003's, made concrete) rejects, in code and before any verifier call:
    a name that is not lowercase-words-with-hyphens, or is taken (an authored skill in the project's or the user's
      .claude/skills, or another record)
    a trigger with quoted arguments or shell operators (&&, ;, |, $(, backticks), a one-word command pattern (it
      would fire on every use of the program), phrases of more than 4 words, or none
    replay cases that do not include one that fires and one that does not, or that the rendered trigger gets wrong
    a body that embeds session evidence handles or machine-local paths: an experience dump, not a procedure
"""
from __future__ import annotations

import re
from pathlib import Path

from rose.typedrecord import Record

NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
NAME_LEN = (3, 40)
MAX_PHRASES = 8
MAX_PHRASE_WORDS = 4
MIN_COMMAND_WORDS = 2
MAX_BODY_WORDS = 600
MAX_MESSAGE_CHARS = 400
_WORD = re.compile(r"[a-z0-9][a-z0-9_.+-]*")
_OPERATORS = re.compile(r"&&|\|\||[;|`]|\$\(|[<>]")
_QUOTES = re.compile(r"['\"]")
_SPLIT = re.compile(r"&&|\|\||[;|\n]")
_HANDLE = re.compile(r"session://", re.IGNORECASE)
_LOCAL_PATH = re.compile(r"(?:^|[\s`'\"(=])(?:/home/|/Users/|/root/|/tmp/|/var/folders/|~/|[A-Za-z]:\\\\)")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def skill_fires(phrases: list[str], prompt: str) -> bool:
    have = set(words(prompt))
    return any(ws and all(w in have for w in ws) for ws in (words(p) for p in phrases))


def command_fires(pattern: str, command: str) -> bool:
    want = pattern.split()
    if not want:
        return False
    for segment in _SPLIT.split(command):
        tokens = segment.split()
        while tokens and "=" in tokens[0] and not tokens[0].startswith("="):   # FOO=1 git push ...
            tokens = tokens[1:]
        if tokens and tokens[0] in ("sudo", "command", "exec", "env"):
            tokens = tokens[1:]
        if not tokens or (want[0] != "*" and tokens[0].split("/")[-1] != want[0]):
            continue
        rest = tokens[1:]
        if all(w == "*" or w in rest for w in want[1:]):
            return True
    return False


class Proposal(Record, frozen=True):
    kind: str                  # skill | guardrail
    name: str
    description: str
    phrases: tuple[str, ...]
    command: str
    action: str                # warn | block (guardrails)
    body: str
    cases: tuple[tuple[str, bool], ...]

    def fires(self, text: str) -> bool:
        return skill_fires(list(self.phrases), text) if self.kind == "skill" else command_fires(self.command, text)

    @property
    def trigger(self) -> str:
        return " / ".join(self.phrases) if self.kind == "skill" else self.command


def authored_skills(project_root: Path | None, home: Path | None) -> set[str]:
    """Skill names the user (or their team) wrote: generated behaviour never takes one of them."""
    names: set[str] = set()
    for root in (project_root, home):
        folder = root / ".claude" / "skills" if root is not None else None
        try:
            if folder is not None and folder.is_dir():
                names.update(p.name for p in folder.iterdir() if p.is_dir())
        except OSError:
            continue
    return names


def screen(p: Proposal, taken: set[str]) -> str | None:
    """None when the proposal passes; else why it is rejected (one line)."""
    if p.kind not in ("skill", "guardrail"):
        return f"unknown kind {p.kind!r}"
    if not NAME_RE.fullmatch(p.name) or not NAME_LEN[0] <= len(p.name) <= NAME_LEN[1]:
        return f"name {p.name!r} is not lowercase-words-with-hyphens of {NAME_LEN[0]}-{NAME_LEN[1]} characters"
    if p.name in taken:
        return f"name {p.name!r} is taken (an authored skill or another record)"
    if p.kind == "skill":
        if not p.phrases or len(p.phrases) > MAX_PHRASES:
            return f"a skill needs 1-{MAX_PHRASES} activation phrases"
        for phrase in p.phrases:
            if _QUOTES.search(phrase) or _OPERATORS.search(phrase):
                return f"phrase {phrase!r} holds quotes or shell operators"
            if not 1 <= len(words(phrase)) <= MAX_PHRASE_WORDS:
                return f"phrase {phrase!r} is not 1-{MAX_PHRASE_WORDS} plain words"
        if len(p.body.split()) > MAX_BODY_WORDS:
            return f"the procedure is over {MAX_BODY_WORDS} words"
    else:
        if _QUOTES.search(p.command):
            return "the command pattern holds quoted arguments"
        if _OPERATORS.search(p.command):
            return "the command pattern holds shell operators (&&, ;, |, $(, backticks, redirections)"
        if len(p.command.split()) < MIN_COMMAND_WORDS or p.command.split()[0] == "*":
            return "a one-word command pattern (or one starting with *) would fire on every use of the program"
        if p.action not in ("warn", "block"):
            return f"action {p.action!r} is neither warn nor block"
        if len(p.body) > MAX_MESSAGE_CHARS:
            return f"the message is over {MAX_MESSAGE_CHARS} characters"
    if _HANDLE.search(p.body) or _HANDLE.search(p.description):
        return "the body embeds session evidence handles: an experience dump, not a procedure"
    if _LOCAL_PATH.search(p.body) or _LOCAL_PATH.search(p.description):
        return "the body embeds a machine-local path: an experience dump, not a procedure"
    if not any(f for _t, f in p.cases) or all(f for _t, f in p.cases):
        return "the replay cases need at least one that fires and one that does not"
    for text, expected in p.cases:
        if p.fires(text) != expected:
            return (f"replay case {text[:80]!r} should {'fire' if expected else 'not fire'}, and the trigger as "
                    f"rendered {'does not' if expected else 'does'}")
    return None
