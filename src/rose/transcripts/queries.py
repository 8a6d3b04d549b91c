"""Small structural questions about a conversation, answered in code: no judgement involved."""
from __future__ import annotations

import re

from rose.errors import QuoteFound
from rose.redact import redact
from rose.tokens import estimate
from rose.transcripts.markup import own_words
from rose.transcripts.model import USER_WORDS, Conversation, Counts, Kind, Message, Role
from rose.transcripts.reading import Builder

_QUOTE_CHARS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
})
_WS_RE = re.compile(r"\s+")


def user_turns(conversation: Conversation) -> list[tuple[int, str]]:
    """(n, text) of every message in the user's own words: typed prompts and typed commands, nothing the harness
    injected, and text the user pasted (inside <pasted_content>) replaced by a placeholder. Text is as typed, not
    redacted: use it to check quotes, redact before storing it."""
    return [(m.n, own_words(m.text)) for m in conversation.messages if m.kind in USER_WORDS]


def normalize_quote(text: str) -> str:
    """Whitespace runs become one space and curly/guillemet quotes become straight ones; nothing else changes."""
    return _WS_RE.sub(" ", text.translate(_QUOTE_CHARS)).strip()


def quote_in_user_turns(conversation: Conversation, quote: str) -> int | None:
    """The index of the first user turn that contains quote verbatim (up to whitespace and quote characters),
    or None. A quote found only in assistant text, tool output or injected context is None.

    The check is on the full text of the user's turns: the reader keeps each prompt up to USER_MAX_CHARS; when
    a turn was clipped even so, the transcript is read again (streaming, one full prompt held at a time) to look
    in the whole of it. A transcript that can no longer be read counts as not found."""
    candidates = _quote_candidates(quote)
    if not candidates:
        return None
    clipped: set[int] = set()
    for n, text in user_turns(conversation):
        if _holds(text, candidates):
            return n
        if conversation.messages[n].truncated:
            clipped.add(n)
    if clipped:
        return _quote_in_full_text(conversation, candidates, clipped)
    return None


def _quote_candidates(quote: str) -> list[str]:
    wanted = normalize_quote(quote)
    candidates = [wanted]
    if len(wanted) > 2 and wanted[0] == wanted[-1] and wanted[0] in "'\"":
        candidates.append(wanted[1:-1].strip())   # the quote arrived wrapped in its own quotation marks
    return [c for c in candidates if c]


def _holds(text: str, candidates: list[str]) -> bool:
    haystack = normalize_quote(text)
    if any(c in haystack for c in candidates):
        return True
    if any("[REDACTED:" in c for c in candidates):  # quoted from a redacted digest
        redacted = normalize_quote(redact(text))
        return any(c in redacted for c in candidates)
    return False




class _FullTextProbe(Builder):
    """A builder that keeps almost no text, but looks for the quote in the full text of the wanted user turns."""

    def __init__(self, conv: Conversation, wanted: set[int], candidates: list[str]):
        super().__init__(conv, max_chars=64, user_max_chars=64)
        self.wanted = wanted
        self.candidates = candidates

    def add(self, kind: Kind, text: str, **fields) -> Message:
        n = len(self.conv.messages)
        if kind in USER_WORDS and n in self.wanted and _holds(own_words(text), self.candidates):
            raise QuoteFound(n)
        return super().add(kind, text, **fields)


def _quote_in_full_text(conversation: Conversation, candidates: list[str], wanted: set[int]) -> int | None:
    from rose.transcripts.detect import new_conversation, new_reader
    from rose.transcripts.errors import TranscriptError
    from rose.transcripts.reading import feed_all, iter_records

    scratch = new_conversation(conversation.path, conversation.agent)
    reader = new_reader(conversation.agent, _FullTextProbe(scratch, wanted, candidates))
    records = iter_records(conversation.path, scratch)
    try:
        feed_all(records, reader.feed, scratch)
    except QuoteFound as found:
        return found.n
    except TranscriptError:
        return None
    finally:
        records.close()
    return None


def counts(conversation: Conversation) -> Counts:
    """Typed prompts, distinct assistant responses, tool calls and results, failures, compactions, tokens."""
    prompts = tool_calls = tool_results = failed = compactions = assistant_turns = tokens = 0
    previous_assistant = False
    last_response: str | None = None
    for m in conversation.messages:
        if m.kind is Kind.PROMPT:
            prompts += 1
        elif m.kind is Kind.TOOL_CALL:
            tool_calls += 1
        elif m.kind is Kind.TOOL_RESULT:
            tool_results += 1
            failed += m.failed
        elif m.kind is Kind.COMPACTION:
            compactions += 1
        if not m.synthetic:
            tokens += estimate(m.text)
        if m.role is Role.ASSISTANT:
            same_response = m.response_id is not None and m.response_id == last_response
            if not same_response and (not previous_assistant or (m.response_id is not None
                                      and last_response is not None)):
                assistant_turns += 1
            last_response = m.response_id
            previous_assistant = True
        else:
            previous_assistant = False
    return Counts(user_turns=prompts, assistant_turns=assistant_turns, tool_calls=tool_calls,
                  failed_tool_calls=failed, compactions=compactions, tool_results=tool_results, tokens=tokens)


def task_prompt(conversation: Conversation) -> str | None:
    """The session's task as the user first put it (the first typed prompt, pasted text kept), redacted."""
    for m in conversation.messages:
        if m.kind is Kind.PROMPT and m.text.strip():
            return m.text if conversation.redacted else redact(m.text)
    return None


def final_summary(conversation: Conversation) -> str | None:
    """The agent's last words (its last assistant text), redacted: the candidate summary of the session."""
    for m in reversed(conversation.messages):
        if m.kind is Kind.TEXT and m.text.strip():
            return m.text if conversation.redacted else redact(m.text)
    return None
