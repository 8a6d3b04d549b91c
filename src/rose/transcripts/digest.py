"""The session digest: a redacted, budgeted text of a conversation for the reflection and attribution judges.

Each kept message is one entry `[n] label: text`, in chronological order, so a judge can cite
`session://<session>/message/<n>`. The kinds of entry (the `Tier`s):

    USER       every prompt and command, verbatim while it fits
    FINAL      the agent's last text before each next prompt (its answer), compaction markers
    REASONING  the agent's visible reasoning
    FAILURE    failed tool calls: tool, input summary, exit code and the error output (its end kept first)
    MIDDLE     the agent's other texts
    TOOL_OK    successful tool calls, one line each (tool + input summary), no output
    NOTE       synthetic prompts and injected context, one line each

Over budget, the digest gives way in this order: NOTE and TOOL_OK entries go (oldest first); MIDDLE texts are
trimmed, then go; long prompts (pastes) are cut to LONG_SOFT; then the four core tiers (user words, failures,
answers, reasoning) split the room deliberately: each is first guaranteed its minimum (every short prompt whole;
a few failures and reasoning blocks; the last answer), and what is left is shared by weight; within its share a
tier trims its entries to a floor and then keeps them by rank (failures and reasoning spread over the whole
session, not the newest only). The split and its measurements: the comment above SHORT_PROMPT, and
docs/benchmarks-digest.md. A user's short prompt (a correction) is never cut or left out while the user's words
fit in the user's share; long pastes are always cut before it.
Room a late cut frees goes back: entries left out return (best rank first, at their floor), then trimmed entries
grow together, and long prompts grow last.
Every piece of text goes through `redact()` before it is cut (so no secret is ever half-cut), and the finished
digest once more.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from rose.text import load_json
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
    # a conversation redacted as it was read (rose.transcripts.redacted) is only budgeted here: nothing is redacted
    # twice; any other is redacted piece by piece, each before it is cut
    scrub = _as_is if conversation.redacted else redact
    entries = _entries(conversation, scrub)
    _rank(entries, conversation)
    header = scrub(_header(conversation))
    target = budget_tokens * CHARS_PER_TOKEN
    # Pass 1 plans on unredacted text, so a long session only pays redaction for what survives; pass 2 redacts
    # the survivors (whole, before any cut) and plans again, since placeholders change lengths.
    _Plan(entries, header, target).fit()
    for e in entries:
        if not e.dropped:
            e.body = _redacted_cut(e.source, e.start_cap, e.head_share, scrub)
            e.cap = None
    plan = _Plan(entries, header, target)
    plan.fit()
    text = scrub(plan.render())
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
    rank: int = 0                  # the order its tier keeps entries in when not all fit (0 first)

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


def _entries(conv: Conversation, scrub: Callable[[str], str] = redact) -> list[_Entry]:
    finals = _final_texts(conv)
    calls = {m.call_id: m for m in conv.messages if m.kind is Kind.TOOL_CALL and m.call_id}
    answered = {m.call_id for m in conv.messages if m.kind is Kind.TOOL_RESULT and m.call_id}
    out: list[_Entry] = []
    for m in conv.messages:
        entry = _entry(m, m.n in finals, calls, answered, scrub)
        if entry is not None:
            out.append(entry)
    return out


def _entry(m: Message, final: bool, calls: dict[str, Message], answered: set[str],
           scrub: Callable[[str], str] = redact) -> _Entry | None:
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
        summary = _input_summary(tool, call.text, scrub) if call else ""
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
                                       f"{_input_summary(m.tool_name or '', m.text, scrub)} (no result recorded)")
    if m.kind is Kind.SYNTHETIC:
        note = _one_line(_redacted_head(m.text, NOTE_CHARS * 4, scrub), NOTE_CHARS)
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


def _input_summary(tool: str, raw: str, scrub: Callable[[str], str] = redact) -> str:
    """A tool call's input on one short line: its command, path, pattern or URL when it has one."""
    text = raw
    try:
        value = load_json(raw)
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in _INPUT_KEYS:
            if value.get(key):
                picked = value[key]
                if isinstance(picked, list):
                    picked = picked[-1] if len(picked) == 3 and picked[1] in ("-lc", "-c") else " ".join(
                        str(p) for p in picked)
                text = str(picked)
                break
    elif "*** Begin Patch" in raw:
        text = "patch " + ", ".join(_PATCH_FILE_RE.findall(raw)[:4])
    return "`" + _one_line(_redacted_head(text, INPUT_SUMMARY_CHARS * 4, scrub), INPUT_SUMMARY_CHARS) + "`"


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


def _as_is(text: str) -> str:
    return text


def _redacted_head(text: str, n: int, scrub: Callable[[str], str] = redact) -> str:
    """The first n chars of scrub(text), redacting a margin past the cut so no secret is split by it."""
    return scrub(text[:n + _REDACT_MARGIN])[:n]


def _redacted_cut(text: str, cap: int | None, head_share: float = 2 / 3, scrub: Callable[[str], str] = redact) -> str:
    """scrub(text) shortened to cap, redacting only windows around what is kept (with a margin past each cut)."""
    text = _tidy(text)
    if cap is None:
        return scrub(text)
    if len(text) <= cap + 2 * _REDACT_MARGIN:
        return _shorten(scrub(text), cap, head_share)
    keep = cap - len(_CUT)
    head_n = int(keep * head_share)
    tail_n = keep - head_n
    head = scrub(text[:head_n + _REDACT_MARGIN])[:head_n]
    tail = scrub(text[-(tail_n + _REDACT_MARGIN):])[-tail_n:] if tail_n > 0 else ""
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
#
# The split, measured by bench/bench_digest.py (docs/benchmarks-digest.md says why these numbers):
#
#   room        the budget less the header and a reserve for the "left out" line
#   guarantee   each core tier is first given its minimum, up to a share of the room:
#                 user words   every short prompt whole, every long one at LONG_FLOOR       up to 55%
#                 failures     the first FAIL_GUARANTEE failures (by rank) at their floor    up to 15%
#                 answers      the last answer at its floor                                  up to  8%
#                 reasoning    the first REASON_GUARANTEE blocks (by rank) at their floor    up to 10%
#   the rest    goes to what each tier still wants, in proportion to WEIGHTS (water-filling: a tier that
#               wants less than its part gives the difference to the others)
#
# Within its allowance a tier trims its entries (longest first, down to the floor), then keeps its entries in
# rank order:
#   user words  the first and last prompts, then short prompts (newest first), then long ones
#   failures    spread over the session (the last, the first, then midpoints), one of each distinct error
#               first, repeats of an error after
#   reasoning   blocks right after feedback (a failure or a prompt) first, spread; then the others, spread
#   answers     the last, then newest first; compaction markers always
# Room left at the end comes back: dropped core entries return (by rank, at the floor), trimmed ones grow
# together (up to their starting length; a long prompt only to LONG_SOFT), the assistant's other texts and
# the one-line entries return, and only then may long prompts grow past LONG_SOFT.

SHORT_PROMPT = 600             # a prompt this long or shorter is never trimmed while the user's share holds it
LONG_SOFT = 1200               # long prompts (pastes) are cut to this before any other core tier loses anything
LONG_FLOOR = 400
FAIL_GUARANTEE = 3
REASON_GUARANTEE = 2
GUARANTEE_SHARE = {Tier.USER: 0.55, Tier.FAILURE: 0.15, Tier.FINAL: 0.08, Tier.REASONING: 0.10}
WEIGHTS = {Tier.USER: 0.05, Tier.FAILURE: 0.25, Tier.FINAL: 0.20, Tier.REASONING: 0.50}
CORE = (Tier.USER, Tier.FAILURE, Tier.FINAL, Tier.REASONING)
_FLOOR = {Tier.USER: 200, Tier.FAILURE: 200, Tier.FINAL: 200, Tier.REASONING: 200, Tier.MIDDLE: 200}
_OMITTED_LINE_RESERVE = 200


def _spread(m: int) -> list[int]:
    """0..m-1 in an order that covers the range evenly at every prefix: the last, the first, then midpoints."""
    if m <= 0:
        return []
    order = [m - 1] + ([0] if m > 1 else [])
    intervals = [(0, m - 1)]
    while intervals:
        nxt = []
        for lo, hi in intervals:
            if hi - lo > 1:
                mid = (lo + hi) // 2
                order.append(mid)
                nxt += [(lo, mid), (mid, hi)]
        intervals = nxt
    return order


def _signature(text: str) -> str:
    """What makes two failures the same error: the last line of the output, numbers and hex blurred."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return re.sub(r"0x[0-9a-f]+|\d+", "#", last.strip().lower())[:160]


def _rank(entries: list[_Entry], conv: Conversation) -> None:
    """Each entry's rank within its tier: the order in which the tier keeps entries when not all fit."""
    by_tier: dict[Tier, list[_Entry]] = {}
    for e in entries:
        by_tier.setdefault(e.tier, []).append(e)
    for tier, items in by_tier.items():
        if tier is Tier.FAILURE:
            last_of: dict[str, int] = {}
            for i, e in enumerate(items):
                last_of[_signature(e.source)] = i
            firsts = sorted(last_of.values())
            first_set = set(firsts)
            repeats = [i for i in range(len(items)) if i not in first_set]
            order = [firsts[j] for j in _spread(len(firsts))] + [repeats[j] for j in _spread(len(repeats))]
        elif tier is Tier.REASONING:
            fed = [i for i, e in enumerate(items) if _after_feedback(conv, e.n)]
            fed_set = set(fed)
            rest = [i for i in range(len(items)) if i not in fed_set]
            order = [fed[j] for j in _spread(len(fed))] + [rest[j] for j in _spread(len(rest))]
        elif tier is Tier.USER:
            ends = [len(items) - 1, 0] if len(items) > 1 else [0]
            short = [i for i in reversed(range(len(items))) if i not in ends and len(items[i].body) <= SHORT_PROMPT]
            long = [i for i in reversed(range(len(items))) if i not in ends and len(items[i].body) > SHORT_PROMPT]
            order = ends + short + long
        elif tier is Tier.FINAL:
            markers = [i for i, e in enumerate(items) if not e.source]
            texts = [i for i in reversed(range(len(items))) if items[i].source]
            order = markers + texts
        else:
            order = list(reversed(range(len(items))))   # newest first
        for r, i in enumerate(order):
            items[i].rank = r


def _after_feedback(conv: Conversation, n: int) -> bool:
    """Whether the message before reasoning n (skipping the agent's own blocks) is a failure or a prompt."""
    for m in reversed(conv.messages[max(0, n - 6):n]):
        if m.kind in (Kind.REASONING, Kind.TEXT):
            continue
        return (m.kind is Kind.TOOL_RESULT and m.failed) or m.kind in (Kind.PROMPT, Kind.COMMAND)
    return False


class _Plan:
    """The entries' current cuts and drops, with the rendered size kept up to date incrementally.

    Only entries in `eligible` may come back once dropped (in the second pass, those whose text was redacted)."""

    def __init__(self, entries: list[_Entry], header: str, target_chars: int):
        self.entries = entries
        self.header = header
        self.target = target_chars
        self.total = sum(e.cost() for e in entries if not e.dropped)
        self.eligible = {id(e) for e in entries if not e.dropped}
        self.dropped: dict[Tier, int] = {}
        for e in entries:
            if e.dropped:
                self.dropped[e.tier] = self.dropped.get(e.tier, 0) + 1

    # -- size --------------------------------------------------------------------------------------------------

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

    # -- moves -------------------------------------------------------------------------------------------------

    def set_cap(self, e: _Entry, cap: int | None) -> None:
        cap = cap if cap is not None and cap < len(e.body) else None
        self.total += e.cost(cap if cap is not None else len(e.body)) - e.cost()
        e.cap = cap

    def drop(self, e: _Entry) -> None:
        self.total -= e.cost()
        e.dropped = True
        self.dropped[e.tier] = self.dropped.get(e.tier, 0) + 1

    def undrop(self, e: _Entry, cap: int | None) -> None:
        e.dropped = False
        e.cap = cap if cap is not None and cap < len(e.body) else None
        self.total += e.cost()
        self.dropped[e.tier] -= 1
        if not self.dropped[e.tier]:
            del self.dropped[e.tier]

    def drop_oldest(self, tier: Tier) -> None:
        for e in self.of(tier):
            if self.fits():
                return
            self.drop(e)

    def cap_to(self, entries: list[_Entry], floor: int, limit: int | None = None,
               ceiling: dict[int, int] | None = None) -> None:
        """The largest common cut >= floor (water-filling: the longest entries are cut first) under which these
        entries cost at most `limit` (or, without one, the digest fits). `ceiling` bounds an entry's growth."""
        def top(e: _Entry) -> int:
            return min(len(e.body), ceiling.get(id(e), len(e.body))) if ceiling else len(e.body)

        fixed = sum(e.cost() for e in entries if top(e) <= floor)   # listed, but already at or under the floor
        entries = [e for e in entries if top(e) > floor]
        if not entries:
            return
        others = self.size() - sum(e.cost() for e in entries)

        def over(cap: int) -> bool:
            cost = sum(e.cost(min(cap, top(e))) for e in entries)
            return fixed + cost > limit if limit is not None else others + cost > self.target

        lo, hi = floor, max(top(e) for e in entries)
        if not over(hi):
            best = hi
        elif over(lo):
            best = lo
        else:
            while lo < hi:   # the largest cut in [lo, hi] that fits
                mid = (lo + hi + 1) // 2
                if over(mid):
                    hi = mid - 1
                else:
                    lo = mid
            best = lo
        for e in entries:
            self.set_cap(e, min(best, top(e)))

    def keep_by_rank(self, tier: Tier, limit: int) -> None:
        """Drop the tier's entries of worst rank until it costs at most limit."""
        cost = self.cost_of(tier)
        for e in sorted(self.of(tier), key=lambda e: -e.rank):
            if cost <= limit:
                return
            cost -= e.cost()
            self.drop(e)

    # -- the fit -----------------------------------------------------------------------------------------------

    def fit(self) -> None:
        if not self.fits():
            self.drop_oldest(Tier.NOTE)
        if not self.fits():
            self.drop_oldest(Tier.TOOL_OK)
        if not self.fits():
            self.cap_to(self.of(Tier.MIDDLE), _FLOOR[Tier.MIDDLE])
        if not self.fits():
            self.drop_oldest(Tier.MIDDLE)
        if not self.fits():   # pastes and other long prompts give way before anything that matters more
            self.cap_to([e for e in self.of(Tier.USER) if len(e.body) > SHORT_PROMPT], LONG_SOFT)
        if not self.fits():
            self._share_core()
        self._refill()

    def _room(self) -> int:
        core = sum(self.cost_of(t) for t in CORE)
        return max(0, self.target - (self.size() - core) - _OMITTED_LINE_RESERVE)

    def _minimum(self, tier: Tier) -> int:
        items = self.of(tier)
        floor = _FLOOR[tier]
        if tier is Tier.USER:
            return sum(e.cost() if len(e.body) <= SHORT_PROMPT else e.cost(LONG_FLOOR) for e in items)
        ranked = sorted(items, key=lambda e: e.rank)
        take = {Tier.FAILURE: FAIL_GUARANTEE, Tier.REASONING: REASON_GUARANTEE}.get(tier)
        if tier is Tier.FINAL:
            ranked = [e for e in ranked if not e.source] + [e for e in ranked if e.source][:1]
        elif take is not None:
            ranked = ranked[:take]
        return sum(e.cost(floor) for e in ranked)

    def _share_core(self) -> None:
        room = self._room()
        need = {t: self.cost_of(t) for t in CORE}
        alloc = {t: min(need[t], self._minimum(t), int(GUARANTEE_SHARE[t] * room)) for t in CORE}
        left = room - sum(alloc.values())
        wants = {t: need[t] - alloc[t] for t in CORE}
        active = [t for t in CORE if wants[t] > 0]
        while left > 0 and active:   # weighted water-filling of what is left
            total_w = sum(WEIGHTS[t] for t in active)
            part = {t: left * WEIGHTS[t] / total_w for t in active}
            satisfied = [t for t in active if wants[t] <= part[t]]
            if not satisfied:
                for t in active:
                    alloc[t] += int(part[t])
                break
            for t in satisfied:
                alloc[t] += wants[t]
                left -= wants[t]
                wants[t] = 0
            active = [t for t in active if wants[t] > 0]
        for t in CORE:
            self._fit_tier(t, alloc[t])

    def _fit_tier(self, tier: Tier, limit: int) -> None:
        if self.cost_of(tier) <= limit:
            return
        if tier is Tier.USER:
            long = [e for e in self.of(tier) if len(e.body) > SHORT_PROMPT]
            self.cap_to(long, LONG_FLOOR, limit - (self.cost_of(tier) - sum(e.cost() for e in long)))
            if self.cost_of(tier) > limit:
                self.cap_to(self.of(tier), _FLOOR[tier], limit)
        else:
            self.cap_to(self.of(tier), _FLOOR[tier], limit)
        self.keep_by_rank(tier, limit)

    def _refill(self) -> None:
        """Room a late cut left goes back (see the comment above the constants)."""
        if not self.fits():
            for tier in (Tier.FINAL, Tier.REASONING, Tier.FAILURE, Tier.USER):   # rounding: the cheapest first
                while not self.fits() and self.of(tier):
                    worst = max(self.of(tier), key=lambda e: e.rank)
                    if tier is Tier.USER and len(self.of(tier)) <= 1:
                        self.cap_to(self.of(tier), 40)
                        break
                    self.drop(worst)
            return
        for tier in CORE:
            self._undrop(tier, _FLOOR[tier])
        trimmed = [e for t in CORE for e in self.of(t) if e.trimmed]
        ceiling = {id(e): LONG_SOFT for e in trimmed if e.tier is Tier.USER}
        if trimmed:
            self.cap_to(trimmed, min(e.cap for e in trimmed if e.cap is not None), ceiling=ceiling)
        self._undrop(Tier.MIDDLE, _FLOOR[Tier.MIDDLE])
        middle = [e for e in self.of(Tier.MIDDLE) if e.trimmed]
        if middle:
            self.cap_to(middle, min(e.cap for e in middle if e.cap is not None))
        self._undrop(Tier.TOOL_OK, None)
        self._undrop(Tier.NOTE, None)
        long = [e for e in self.of(Tier.USER) if e.trimmed]
        if long:
            self.cap_to(long, min(e.cap for e in long if e.cap is not None))

    def _undrop(self, tier: Tier, floor: int | None) -> None:
        """Bring back the tier's dropped entries that fit, best rank first (the newest, for the one-liners)."""
        candidates = [e for e in self.entries if e.tier is tier and e.dropped and id(e) in self.eligible]
        for e in sorted(candidates, key=lambda e: e.rank):
            self.undrop(e, floor)
            if not self.fits():
                self.drop(e)
