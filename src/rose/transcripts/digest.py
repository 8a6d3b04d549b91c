"""The session digest: a redacted, budgeted text of a conversation for the reflection and attribution judges.

Each kept message is one entry `[n] label: text`, in chronological order, so a judge can cite
`session://<session>/message/<n>`. What is kept, most important first (the `Tier`s):

    USER       every prompt and command, verbatim
    FINAL      the agent's last text before each next prompt (its answer), compaction markers
    REASONING  the agent's visible reasoning
    FAILURE    failed tool calls: tool, input summary, exit code and the error output
    MIDDLE     the agent's other texts
    TOOL_OK    successful tool calls, one line each (tool + input summary), no output
    NOTE       synthetic prompts and injected context, one line each

Over budget, the digest gives way in this order: NOTE and TOOL_OK entries go (oldest first); MIDDLE texts are
trimmed, then go; REASONING, FAILURE and FINAL entries are trimmed (head and tail kept; more of the tail for an
error) down to a floor; then REASONING and FAILURE entries share what is left after the user's words and the
answers, half each, losing their oldest entries to fit; then the oldest answers go (the last one stays); the
user's words are touched only when they alone exceed the budget: the longest are trimmed first, and the first
and last prompts stay. Room a late cut frees goes back, most important first: entries left out return (newest
first, trimmed), then trimmed entries grow.
Every piece of text goes through `redact()` before it is cut (so no secret is ever half-cut), and the finished
digest once more.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import IntEnum

from rose.redact import redact
from rose.tokens import CHARS_PER_TOKEN, estimate
from rose.transcripts.model import Conversation, Kind, Message, ToolOutcome
from rose.transcripts.queries import counts

DEFAULT_BUDGET_TOKENS = 3000
INPUT_SUMMARY_CHARS = 120      # a tool call's input, on one line
NOTE_CHARS = 160               # a synthetic prompt or injected context, on one line
_REDACT_MARGIN = 2000          # redaction looks this far past a cut, so a secret is never split by it
_CUT = " [...] "


class Tier(IntEnum):
    USER = 0
    FINAL = 1
    REASONING = 2
    FAILURE = 3
    MIDDLE = 4
    TOOL_OK = 5
    NOTE = 6


# The longest an entry of each tier is before any budget pressure (user words: the reader's cap only).
_START_CHARS = {Tier.FINAL: 2400, Tier.REASONING: 1600, Tier.FAILURE: 1200, Tier.MIDDLE: 1200}
_TIER_NAMES = {Tier.USER: "user messages", Tier.FINAL: "answers", Tier.REASONING: "reasoning",
               Tier.FAILURE: "failed tool calls", Tier.MIDDLE: "assistant texts",
               Tier.TOOL_OK: "successful tool calls", Tier.NOTE: "notes"}


@dataclass(frozen=True)
class Digest:
    text: str
    tokens: int
    budget_tokens: int
    session_id: str
    shown: tuple[int, ...]   # message indices with an entry in the text
    omitted: int             # entries left out to fit the budget
    trimmed: int             # entries shortened to fit the budget

    @property
    def complete(self) -> bool:
        return self.omitted == 0 and self.trimmed == 0


def digest(conversation: Conversation, budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> Digest:
    """A redacted text of about budget_tokens (rose.tokens.estimate) covering the session (module docstring)."""
    entries = _entries(conversation)
    header = redact(_header(conversation))
    target = budget_tokens * CHARS_PER_TOKEN
    # Pass 1 plans on unredacted text, so a long session only pays redaction for what survives; pass 2 redacts
    # the survivors (whole, before any cut) and plans again, since placeholders change lengths.
    _Plan(entries, header, target).fit()
    for e in entries:
        if not e.dropped:
            e.body = _redacted_cut(e.source, e.start_cap, e.head_share)
            e.cap = None
    plan = _Plan(entries, header, target)
    plan.fit()
    text = redact(plan.render())
    kept = [e for e in entries if not e.dropped]
    return Digest(text=text, tokens=estimate(text), budget_tokens=budget_tokens,
                  session_id=conversation.session_id, shown=tuple(e.n for e in kept),
                  omitted=len(entries) - len(kept), trimmed=sum(1 for e in kept if e.trimmed))


# -- entries ---------------------------------------------------------------------------------------------------

@dataclass
class _Entry:
    n: int
    tier: Tier
    prefix: str                    # "[n] label: " (or "[n] label" for a one-liner), redacted
    source: str = ""               # the message text, unredacted
    start_cap: int | None = None   # the longest this entry is before any budget pressure
    body: str = ""                 # source tidied and cut to start_cap; redacted once the entry survives pass 1
    cap: int | None = None         # the cut the budget imposes on body
    dropped: bool = False

    def __post_init__(self) -> None:
        tidy = _tidy(self.source)
        self.body = tidy if self.start_cap is None else _shorten(tidy, self.start_cap, self.head_share)

    @property
    def head_share(self) -> float:
        """How much of a cut keeps the start: an error output's end (the traceback's last line) matters more."""
        return 0.4 if self.tier is Tier.FAILURE else 2 / 3

    @property
    def shown_body(self) -> str:
        return _shorten(self.body, self.cap, self.head_share) if self.cap is not None else self.body

    @property
    def trimmed(self) -> bool:
        return self.cap is not None and len(self.body) > self.cap

    def cost(self, cap: int | None = None) -> int:
        cap = self.cap if cap is None else cap
        body = len(self.body) if cap is None else min(len(self.body), cap)
        return len(self.prefix) + body + 1   # + the newline


def _entries(conv: Conversation) -> list[_Entry]:
    finals = _final_texts(conv)
    calls = {m.call_id: m for m in conv.messages if m.kind is Kind.TOOL_CALL and m.call_id}
    answered = {m.call_id for m in conv.messages if m.kind is Kind.TOOL_RESULT and m.call_id}
    out: list[_Entry] = []
    for m in conv.messages:
        entry = _entry(m, m.n in finals, calls, answered)
        if entry is not None:
            out.append(entry)
    return out


def _entry(m: Message, final: bool, calls: dict[str, Message], answered: set[str | None]) -> _Entry | None:
    n = m.n
    if m.kind is Kind.PROMPT:
        return _Entry(n, Tier.USER, f"[{n}] user: ", m.text)
    if m.kind is Kind.COMMAND:
        return _Entry(n, Tier.USER, f"[{n}] user command: ", m.text)
    if m.kind is Kind.TEXT:
        tier = Tier.FINAL if final else Tier.MIDDLE
        return _Entry(n, tier, f"[{n}] assistant: ", m.text, _START_CHARS[tier])
    if m.kind is Kind.REASONING:
        return _Entry(n, Tier.REASONING, f"[{n}] reasoning: ", m.text, _START_CHARS[Tier.REASONING])
    if m.kind is Kind.COMPACTION:
        return _Entry(n, Tier.FINAL, f"[{n}] -- context compacted here --")
    if m.kind is Kind.TOOL_RESULT:
        call = calls.get(m.call_id or "")
        tool = m.tool_name or (call.tool_name if call else None) or "tool"
        summary = _input_summary(tool, call.text) if call else ""
        what = f"{tool} {summary}".strip()
        if m.failed:
            code = f", exit {m.exit_code}" if m.exit_code is not None else ""
            return _Entry(n, Tier.FAILURE, f"[{n}] FAILED{code} {what}: ", m.text, _START_CHARS[Tier.FAILURE])
        status = "no verdict" if m.outcome is ToolOutcome.UNKNOWN else "ok"
        return _Entry(n, Tier.TOOL_OK, f"[{n}] {status} {what}")
    if m.kind is Kind.TOOL_CALL:
        if m.call_id in answered:
            return None   # shown with its result
        return _Entry(n, Tier.TOOL_OK, f"[{n}] called {(m.tool_name or 'tool')} "
                                       f"{_input_summary(m.tool_name or '', m.text)} (no result recorded)")
    if m.kind is Kind.SYNTHETIC:
        note = _one_line(_redacted_head(m.text, NOTE_CHARS * 4), NOTE_CHARS)
        return _Entry(n, Tier.NOTE, f"[{n}] (not the user) {note}")
    if m.kind is Kind.INJECTED:
        return _Entry(n, Tier.NOTE, f"[{n}] (context injected by a hook or the harness, {len(m.text)} chars)")
    return None


def _final_texts(conv: Conversation) -> set[int]:
    """The last assistant text before each next user message (and at the end): the agent's answers."""
    finals: set[int] = set()
    last: int | None = None
    for m in conv.messages:
        if m.kind is Kind.TEXT:
            last = m.n
        elif m.is_user_words and last is not None:
            finals.add(last)
            last = None
    if last is not None:
        finals.add(last)
    return finals


_INPUT_KEYS = ("command", "cmd", "file_path", "path", "notebook_path", "pattern", "url", "query", "description",
               "prompt", "skill", "subject", "plan")
_PATCH_FILE_RE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


def _input_summary(tool: str, raw: str) -> str:
    """A tool call's input on one short line: its command, path, pattern or URL when it has one."""
    text = raw
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in _INPUT_KEYS:
            if key in value and value[key]:
                picked = value[key]
                if isinstance(picked, list):
                    picked = picked[-1] if len(picked) == 3 and picked[1] in ("-lc", "-c") else " ".join(
                        str(p) for p in picked)
                text = str(picked)
                break
    elif "*** Begin Patch" in raw:
        text = "patch " + ", ".join(_PATCH_FILE_RE.findall(raw)[:4])
    return "`" + _one_line(_redacted_head(text, INPUT_SUMMARY_CHARS * 4), INPUT_SUMMARY_CHARS) + "`"


# -- text helpers ----------------------------------------------------------------------------------------------

def _shorten(text: str, cap: int, head_share: float = 2 / 3) -> str:
    """text in at most cap chars: head and tail kept, a [...] mark between."""
    if len(text) <= cap:
        return text
    keep = cap - len(_CUT)
    if keep <= 0:
        return text[:cap]
    head = int(keep * head_share)
    tail = keep - head
    return text[:head] + _CUT + (text[-tail:] if tail else "")


def _redacted_head(text: str, n: int) -> str:
    """The first n chars of redact(text), redacting a margin past the cut so no secret is split by it."""
    return redact(text[:n + _REDACT_MARGIN])[:n]


def _redacted_cut(text: str, cap: int | None, head_share: float = 2 / 3) -> str:
    """redact(text) shortened to cap, redacting only windows around what is kept (with a margin past each cut)."""
    text = _tidy(text)
    if cap is None:
        return redact(text)
    if len(text) <= cap + 2 * _REDACT_MARGIN:
        return _shorten(redact(text), cap, head_share)
    keep = cap - len(_CUT)
    head_n = int(keep * head_share)
    tail_n = keep - head_n
    head = redact(text[:head_n + _REDACT_MARGIN])[:head_n]
    tail = redact(text[-(tail_n + _REDACT_MARGIN):])[-tail_n:] if tail_n > 0 else ""
    return head + _CUT + tail


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text.strip())


def _one_line(text: str, cap: int) -> str:
    return _shorten(" ".join(text.split()), cap)


def _header(conv: Conversation) -> str:
    c = counts(conv)
    where = f" in {conv.cwd}" if conv.cwd else ""
    return (f"Session {conv.session_id} ({conv.agent.value}){where}: {c.user_turns} prompts, {c.tool_calls} tool "
            f"calls ({c.failed_tool_calls} failed), {c.compactions} compactions. Entries are in order; [n] is "
            f"message n, to cite as session://{conv.session_id}/message/<n>.")


# -- fitting the budget ----------------------------------------------------------------------------------------

_FLOOR_SOFT = {Tier.MIDDLE: 200, Tier.REASONING: 500, Tier.FAILURE: 400, Tier.FINAL: 700}
_FLOOR_HARD = {Tier.REASONING: 200, Tier.FAILURE: 240, Tier.FINAL: 300}
_USER_FLOOR = 120
_USER_FLOOR_LAST_RESORT = 40
_OMITTED_LINE_RESERVE = 200


class _Plan:
    """The entries' current cuts and drops, with the rendered size kept up to date incrementally."""

    def __init__(self, entries: list[_Entry], header: str, target_chars: int):
        self.entries = entries
        self.header = header
        self.target = target_chars
        self.total = sum(e.cost() for e in entries if not e.dropped)
        self.dropped: dict[Tier, int] = {}
        for e in entries:
            if e.dropped:
                self.dropped[e.tier] = self.dropped.get(e.tier, 0) + 1

    def size(self) -> int:
        return len(self.header) + 1 + self.total + len(self._omitted_line()) + 1

    def fits(self) -> bool:
        return self.size() <= self.target

    def render(self) -> str:
        lines = [self.header] + [e.prefix + e.shown_body for e in self.entries if not e.dropped]
        omitted = self._omitted_line()
        return "\n".join(lines + [omitted] if omitted else lines)

    def _omitted_line(self) -> str:
        if not self.dropped:
            return ""
        parts = ", ".join(f"{k} {_TIER_NAMES[t]}" for t, k in sorted(self.dropped.items()))
        return f"(left out to fit the budget: {parts})"

    def of(self, tier: Tier) -> list[_Entry]:
        return [e for e in self.entries if e.tier is tier and not e.dropped]

    def cost_of(self, tier: Tier) -> int:
        return sum(e.cost() for e in self.of(tier))

    def set_cap(self, e: _Entry, cap: int | None) -> None:
        self.total += e.cost(cap if cap is not None else len(e.body)) - e.cost()
        e.cap = cap

    def drop(self, e: _Entry) -> None:
        self.total -= e.cost()
        e.dropped = True
        self.dropped[e.tier] = self.dropped.get(e.tier, 0) + 1

    def drop_oldest(self, tier: Tier, keep_last: int = 0, down_to: int | None = None) -> None:
        """Drop the tier's oldest entries until the digest fits (or the tier costs at most down_to)."""
        candidates = self.of(tier)
        cost = sum(e.cost() for e in candidates)
        for e in candidates[:max(0, len(candidates) - keep_last)]:
            if (down_to is None and self.fits()) or (down_to is not None and cost <= down_to):
                return
            cost -= e.cost()
            self.drop(e)

    def cap_tier(self, entries: list[_Entry], floor: int) -> None:
        """The largest common cut >= floor that fits (water-filling: the longest entries are cut first)."""
        entries = [e for e in entries if len(e.body) > floor]
        if not entries:
            return
        others = self.size() - sum(e.cost() for e in entries)

        def size_at(cap: int) -> int:
            return others + sum(e.cost(cap) for e in entries)

        lo, hi = floor, max(len(e.body) for e in entries)
        if size_at(hi) <= self.target:
            best = hi
        elif size_at(lo) > self.target:
            best = lo
        else:
            while lo < hi:   # the largest cut in [lo, hi] that fits
                mid = (lo + hi + 1) // 2
                if size_at(mid) <= self.target:
                    lo = mid
                else:
                    hi = mid - 1
            best = lo
        for e in entries:
            self.set_cap(e, best if best < len(e.body) else None)

    def fit(self) -> None:
        steps = [
            lambda: self.drop_oldest(Tier.NOTE),
            lambda: self.drop_oldest(Tier.TOOL_OK),
            lambda: self.cap_tier(self.of(Tier.MIDDLE), _FLOOR_SOFT[Tier.MIDDLE]),
            lambda: self.drop_oldest(Tier.MIDDLE),
            lambda: self.cap_tier(self.of(Tier.REASONING), _FLOOR_SOFT[Tier.REASONING]),
            lambda: self.cap_tier(self.of(Tier.FAILURE), _FLOOR_SOFT[Tier.FAILURE]),
            lambda: self.cap_tier(self.of(Tier.FINAL), _FLOOR_SOFT[Tier.FINAL]),
            lambda: self.cap_tier(self.of(Tier.REASONING), _FLOOR_HARD[Tier.REASONING]),
            lambda: self.cap_tier(self.of(Tier.FAILURE), _FLOOR_HARD[Tier.FAILURE]),
            lambda: self.cap_tier(self.of(Tier.FINAL), _FLOOR_HARD[Tier.FINAL]),
            self._share_reasoning_and_failures,
            lambda: self.drop_oldest(Tier.FINAL, keep_last=1),
            self._fit_user_words,
        ]
        for step in steps:
            if self.fits():
                break
            step()
        self._refill()

    def _share_reasoning_and_failures(self) -> None:
        """Reasoning and failures split what is left after the user's words and the answers, half each (one
        tier's unused half goes to the other), and each loses its oldest entries down to its share."""
        reasoning, failures = self.cost_of(Tier.REASONING), self.cost_of(Tier.FAILURE)
        room = self.target - (self.size() - reasoning - failures) - _OMITTED_LINE_RESERVE
        room = max(0, room)
        failure_share = max(room // 2, room - reasoning)
        reasoning_share = room - min(failures, failure_share)
        self.drop_oldest(Tier.FAILURE, down_to=failure_share)
        self.drop_oldest(Tier.REASONING, down_to=reasoning_share)
        self.drop_oldest(Tier.FAILURE)      # in case the omitted line outgrew its reserve
        self.drop_oldest(Tier.REASONING)

    def _fit_user_words(self) -> None:
        """Only the user's words are left over budget: trim the longest middle prompts, then drop middle prompts
        (oldest first), and only then cut the first and last prompts, which stay to the end."""
        users = self.of(Tier.USER)
        middle = users[1:-1]
        self.cap_tier(middle, _USER_FLOOR)
        for e in middle:
            if self.fits():
                return
            self.drop(e)
        self.cap_tier(self.of(Tier.USER), _USER_FLOOR_LAST_RESORT)
        if not self.fits():
            self.drop_oldest(Tier.FINAL)

    def undrop(self, e: _Entry, cap: int | None) -> None:
        e.dropped = False
        e.cap = cap if cap is not None and cap < len(e.body) else None
        self.total += e.cost()
        self.dropped[e.tier] -= 1
        if not self.dropped[e.tier]:
            del self.dropped[e.tier]

    def _refill(self) -> None:
        """Room freed by a late cut goes back: first to entries left out (by tier, newest first, at their floor;
        a tier's entries come back only when every more important one has), then to trimmed entries."""
        for tier in Tier:
            floor = _USER_FLOOR if tier is Tier.USER else _FLOOR_HARD.get(tier, _FLOOR_SOFT.get(tier))
            for e in reversed([e for e in self.entries if e.tier is tier and e.dropped]):
                self.undrop(e, floor)
                if not self.fits():
                    self.drop(e)
                    break
            else:
                continue
            break
        for tier in (Tier.USER, Tier.FINAL, Tier.REASONING, Tier.FAILURE, Tier.MIDDLE):
            trimmed = [e for e in self.of(tier) if e.trimmed]
            if not trimmed or not self.fits():
                continue
            floor = min(e.cap for e in trimmed if e.cap is not None)
            self.cap_tier(trimmed, floor)
