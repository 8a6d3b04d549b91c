"""The simulated agent: it reads the block rose injected, applies every fact its task needs that the block states,
and succeeds iff none is missing. It writes what it did into a transcript in Claude Code's own line format, so the
real learner reads it through the real transcript reader and digest.

Where each fact came from is part of what it writes ("Applying [key] from lesson n_x", or "from the detail attached
under lesson n_x" when only a sticky patch or detail under trial held it), which is what lets a judge reading the
digest tell whether re-attached detail was used.

A *misleading* lesson (rose.sim.world.misleading: it says the rule about a fact's topic was reverted) is followed
when it comes before any statement of the fact in the block: the agent applies it, names it, and the task fails
on that fact. With `correct=True` the simulated user answers a failure with a correction per missing fact (its
terse statement), which is what a miner learns a useful lesson from.
"""
from __future__ import annotations

import html
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from rose.compress.graph import PATCH_HEADER, TRIAL_HEADER
from rose.sim.world import Task, World, misleading

_LESSON = re.compile(r'<lesson id="([^"]+)"(?: ref="[^"]*")? title="([^"]*)"[^>]*>\n(.*?)\n</lesson>', re.DOTALL)


@dataclass
class ServedLesson:
    id: str
    title: str
    base: str        # the lesson's own text
    attached: str    # detail under trial and sticky patches


def parse_block(block: str) -> list[ServedLesson]:
    out = []
    for node_id, title, body in _LESSON.findall(block or ""):
        title, body = html.unescape(title), html.unescape(body)   # the block escapes lesson text; a reader sees it plain
        cuts = [i for i in (body.find(TRIAL_HEADER), body.find(PATCH_HEADER)) if i >= 0]
        cut = min(cuts) if cuts else len(body)
        out.append(ServedLesson(node_id, title, body[:cut], body[cut:]))
    return out


@dataclass
class Attempt:
    task: Task
    applied: list[tuple[str, str, bool]] = field(default_factory=list)   # (key, lesson id, from attached detail)
    missing: list[str] = field(default_factory=list)
    misled: list[tuple[str, str, str]] = field(default_factory=list)     # (needed key, advice applied, lesson id)

    @property
    def success(self) -> bool:
        return not self.missing and not self.misled


def act(world: World, task: Task, block: str) -> Attempt:
    served = parse_block(block)
    attempt = Attempt(task)
    for key in task.needs:
        trap = next(((t, s.id) for s in served for t in world.traps_in(s.base + s.attached) if key in t.spoils), None)
        if trap is not None:   # a harmful lesson's advice wins over the fact it contradicts
            attempt.misled.append((key, trap[0].key, trap[1]))
            continue
        wrong = misleading(world.fact(key))
        first = next((s for s in served if key in s.base or wrong in s.base), None)
        if first is not None and wrong in first.base and key not in first.base:   # read before the fact: followed
            attempt.misled.append((key, wrong, first.id))
            attempt.missing.append(key)
            continue
        source = next(((s.id, False) for s in served if key in s.base), None) or \
            next(((s.id, True) for s in served if key in s.attached), None)
        if source is None:
            attempt.missing.append(key)
        else:
            attempt.applied.append((key, *source))
    return attempt


def narrate(world: World, attempt: Attempt) -> tuple[str, str, str, bool]:
    """(plan text, test output, final answer, test failed)."""
    lines = [f"Applying [{key}] from {'the detail attached under ' if attached else ''}lesson {lesson}."
             for key, lesson, attached in attempt.applied]
    lines += [f"Applying [{advice}] from lesson {lesson}." for advice, lesson in dict.fromkeys(
        (advice, lesson) for _k, advice, lesson in attempt.misled)]
    lines = lines or ["No remembered lesson applies; working from the code."]
    symptoms = [world.fact(k).symptom for k in attempt.missing]
    symptoms += list(dict.fromkeys(t.symptom for _k, advice, _l in attempt.misled for t in world.traps
                                   if t.key == advice))   # a misleading lesson's failure is its fact's, above
    if attempt.success:
        return "\n".join(lines), "42 passed in 3.1s", "Done: the change works and the checks pass.", False
    output = "\n".join(f"FAILED: {s}" for s in symptoms)
    return "\n".join(lines), output, "The work failed: " + "; ".join(symptoms) + ".", True


class ClaudeTranscript:
    """Writes the line shapes Claude Code writes (user, assistant text, tool use and result, hook context)."""

    def __init__(self, path: Path, session_id: str, cwd: str):
        self.path, self.session_id, self.cwd = path, session_id, cwd
        self._n = itertools.count(1)
        self._lines: list[str] = []

    def _line(self, kind: str, **fields) -> None:
        n = next(self._n)
        rec = {"parentUuid": None, "isSidechain": False, "type": kind, "uuid": f"{self.session_id}-{n}",
               "timestamp": f"2026-01-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z", "cwd": self.cwd,
               "sessionId": self.session_id, "version": "2.1.0"}
        rec.update(fields)
        self._lines.append(json.dumps(rec, ensure_ascii=False))

    def prompt(self, text: str) -> None:
        self._line("user", message={"role": "user", "content": text})

    def injected(self, text: str) -> None:
        self._line("attachment", attachment={"type": "hook_additional_context", "content": [text],
                                             "hookEvent": "UserPromptSubmit"})

    def say(self, text: str) -> None:
        self._line("assistant", message={"id": f"msg_{next(self._n)}", "type": "message", "role": "assistant",
                                         "model": "sim", "content": [{"type": "text", "text": text}]})

    def tool(self, command: str, output: str, error: bool) -> None:
        call_id = f"toolu_{next(self._n)}"
        self._line("assistant", message={"id": f"msg_{next(self._n)}", "type": "message", "role": "assistant",
                                         "model": "sim", "content": [{"type": "tool_use", "id": call_id,
                                                                      "name": "Bash",
                                                                      "input": {"command": command}}]})
        self._line("user", message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": error}]})

    def edit(self, file_path: str, old: str, new: str) -> None:
        """An Edit tool call and its successful result: the session changed the code (what execution evidence of
        an outcome needs before a check counts, rose.transcripts.outcome)."""
        call_id = f"toolu_{next(self._n)}"
        self._line("assistant", message={"id": f"msg_{next(self._n)}", "type": "message", "role": "assistant",
                                         "model": "sim", "content": [{"type": "tool_use", "id": call_id,
                                                                      "name": "Edit",
                                                                      "input": {"file_path": file_path,
                                                                                "old_string": old,
                                                                                "new_string": new}}]})
        self._line("user", message={"role": "user", "content": [
            {"tool_use_id": call_id, "type": "tool_result", "content": f"The file {file_path} has been updated.",
             "is_error": False}]})

    def write(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(self._lines) + "\n", encoding="utf-8")
        return self.path


CORRECTION = "No: "   # how the simulated user starts a correction (rose.sim.mining learns from it)


def write_session(world: World, attempt: Attempt, path: Path, session_id: str, cwd: str, block: str,
                  correct: bool = False) -> Path:
    t = ClaudeTranscript(path, session_id, cwd)
    t.prompt(attempt.task.prompt)
    if block:
        t.injected(block)
    plan, output, final, failed = narrate(world, attempt)
    t.say(plan)
    if attempt.task.needs:   # work that needs facts changes the code, then runs the tests: an outcome from execution
        t.edit(f"{cwd}/src/app.py", "TODO", f"done: {attempt.task.id}")
    t.tool("uv run pytest", output, failed)
    t.say(final)
    if correct and failed:
        for key in attempt.missing:
            t.prompt(CORRECTION + world.fact(key).terse)
    return t.write()
