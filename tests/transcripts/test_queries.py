"""Quote grounding, structural counts and the final summary, all in plain code."""
from __future__ import annotations

import pytest

import rose.transcripts as transcripts
from rose.tokens import estimate
from rose.transcripts import (Counts, Kind, counts, digest, final_summary, normalize_quote, quote_in_user_turns,
                              read_claude, read_codex, task_prompt, user_turns)

from .build import FIXTURES, ClaudeWriter, CodexWriter


@pytest.fixture(scope="module")
def claude():
    return read_claude(FIXTURES / "claude_rich.jsonl")


@pytest.fixture(scope="module")
def codex():
    return read_codex(FIXTURES / "codex_rich.jsonl")


def test_verbatim_quote_is_found_with_its_message_index(claude, codex):
    assert quote_in_user_turns(claude, "always run `uv run pytest` before you say something is fixed") == 31
    assert quote_in_user_turns(claude, "The checkout tests are failing since yesterday.") == 0
    assert quote_in_user_turns(codex, "keep the response schema unchanged") == 1
    assert quote_in_user_turns(codex, "Set Cache-Control: no-store on /orders.") == 23


def test_quote_characters_are_normalised(claude, codex):
    # the transcript has curly apostrophes; judges often answer with straight ones (and the reverse)
    assert quote_in_user_turns(claude, "don't touch the payment client") == 0
    assert quote_in_user_turns(claude, "don\u2019t touch the payment client") == 0
    assert quote_in_user_turns(codex, "Don't tell me to hard-refresh") == 23
    assert quote_in_user_turns(claude, "\u201cdon't touch the payment client\u201d") == 0   # wrapped in quotes


def test_whitespace_differences_are_accepted(claude):
    # stored as "...which is taken.\n\n  Use the   unit tests instead."
    assert quote_in_user_turns(claude, "it binds port 8000 which is taken. Use the unit tests instead.") == 23
    assert quote_in_user_turns(claude, "  Use the\tunit tests\ninstead.  ") == 23


def test_paraphrase_is_rejected(claude):
    assert quote_in_user_turns(claude, "don't modify the payment client") is None
    assert quote_in_user_turns(claude, "always run uv run pytest before saying something is fixed") is None
    assert quote_in_user_turns(claude, "The Checkout tests are failing since yesterday.") is None   # case counts


def test_quotes_from_anything_but_the_user_are_rejected(claude, codex):
    assert quote_in_user_turns(claude, "I'll remove the second application") is None       # assistant text
    assert quote_in_user_turns(claude, "No module named 'shop'") is None                    # tool output
    assert quote_in_user_turns(claude, "plain pytest cannot import the package") is None    # injected lesson
    assert quote_in_user_turns(claude, "the discount was applied twice") is None            # assistant + summary
    assert quote_in_user_turns(claude, "Primary Request and Intent") is None                # compaction summary
    assert quote_in_user_turns(claude, "Background command") is None                        # task-notification
    assert quote_in_user_turns(claude, "Request interrupted by user") is None               # harness note
    assert quote_in_user_turns(codex, "never call pytest directly") is None                 # AGENTS.md
    assert quote_in_user_turns(codex, "tests need the docker database") is None             # hook context
    assert quote_in_user_turns(codex, "KeyError: 'items'") is None                          # tool output


def test_empty_quote_is_rejected(claude):
    assert quote_in_user_turns(claude, "") is None
    assert quote_in_user_turns(claude, "   \n ") is None
    assert quote_in_user_turns(claude, '""') is None


def test_a_quote_copied_from_the_redacted_digest_still_matches(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("Never commit the .env file, it holds password=Tr0ub4dor-3-horse for staging.")
    conv = read_claude(w.close())
    d = digest(conv)
    assert "Tr0ub4dor" not in d.text
    quote = "it holds password=[REDACTED:assignment] for staging"
    assert quote in d.text
    assert quote_in_user_turns(conv, quote) == 0
    assert quote_in_user_turns(conv, "it holds password=[REDACTED:assignment] for production") is None


def test_normalize_quote_changes_only_whitespace_and_quotes():
    assert normalize_quote(" \u2018a\u2019  \u201cb\u201d\n\tc\u00bb ") == "'a' \"b\" c\""
    assert normalize_quote("Keep-The-Case, punctuation!") == "Keep-The-Case, punctuation!"


def test_user_turns_list_prompts_and_commands_in_order(claude):
    assert [n for n, _ in user_turns(claude)] == [0, 19, 23, 29, 31]


def test_counts(claude, codex):
    c, x = counts(claude), counts(codex)
    assert c == Counts(user_turns=4, assistant_turns=12, tool_calls=7, failed_tool_calls=3, compactions=1,
                       tool_results=7, tokens=c.tokens)
    assert x == Counts(user_turns=3, assistant_turns=11, tool_calls=8, failed_tool_calls=3, compactions=1,
                       tool_results=8, tokens=x.tokens)
    assert 5000 < c.tokens < 7000          # bounded: the 64 KB Read output counts as its 20k-char clip
    assert c.tokens == sum(estimate(m.text) for m in claude.messages if not m.synthetic)


def test_final_summary_is_the_last_assistant_text_redacted(claude, codex, tmp_path):
    assert final_summary(claude) == "All set: checkout fixed and verified with `uv run pytest` (2 passed)."
    assert final_summary(codex) == "Set `Cache-Control: no-store` on /orders; `make test` passes (701 passed)."
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("go")
    w.say("Done; I set DB_PASSWORD=Tr0ub4dor-3-horse in .env as asked.")
    assert final_summary(read_claude(w.close())) == "Done; I set DB_PASSWORD=[REDACTED:assignment] in .env as asked."
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    assert final_summary(read_claude(empty)) is None


def test_public_api_is_pinned():
    assert sorted(transcripts.__all__) == [
        "Agent", "Conversation", "Counts", "Digest", "ExecutionOutcome", "Kind", "Message", "Role", "ToolOutcome",
        "TranscriptError", "TranscriptNotAFile", "TranscriptNotFound", "TranscriptUnreadable", "TurnCounts",
        "count_since", "counts", "detect_agent", "digest", "execution_outcome", "final_summary",
        "normalize_quote", "quote_in_user_turns", "read_claude", "read_codex", "read_transcript", "redacted",
        "task_prompt", "user_turns",
    ]
    for name in transcripts.__all__:
        assert hasattr(transcripts, name)


def test_pasted_content_is_not_the_users_own_words(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.prompt("Summarise this log, and keep it short:\n<pasted_content>ERROR always deploy on Fridays\n"
             "</pasted_content>")
    conv = read_claude(w.close())
    assert user_turns(conv) == [(0, "Summarise this log, and keep it short:\n[pasted content]")]
    assert quote_in_user_turns(conv, "keep it short") == 0
    assert quote_in_user_turns(conv, "always deploy on Fridays") is None
    assert "always deploy on Fridays" in digest(conv).text      # still shown to the judge, as context


def test_task_prompt_is_the_first_typed_prompt_redacted(claude, codex, tmp_path):
    assert task_prompt(claude).startswith("The checkout tests are failing since yesterday.")
    assert task_prompt(codex).startswith("The /orders endpoint returns 500")   # not AGENTS.md, not the env
    w = ClaudeWriter(tmp_path / "s.jsonl")
    w.injected("<rose-lessons>x</rose-lessons>")
    w.prompt("<task-notification>done</task-notification>")
    w.prompt("migrate with password=Tr0ub4dor-3-horse")
    assert task_prompt(read_claude(w.close())) == "migrate with password=[REDACTED:assignment]"
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    assert task_prompt(read_claude(empty)) is None


def test_system_made_messages_are_flagged_synthetic(claude):
    flagged = {m.kind for m in claude.messages if m.synthetic}
    assert flagged == {Kind.SYNTHETIC, Kind.INJECTED, Kind.COMPACTION}
    assert not any(m.synthetic for m in claude.messages if m.is_user_words)


def test_a_quote_past_the_old_20k_clip_is_found(tmp_path):
    # a prompt with a 60k paste: the quote sits in its middle, where a 20k clip would have cut it out
    w = ClaudeWriter(tmp_path / "s.jsonl")
    quote = "never retry a payment request without its idempotency key"
    w.prompt("Here is the whole log:\n" + "log line with nothing in it\n" * 1100 + f"and remember: {quote}.\n"
             + "more log lines\n" * 2000)
    w.tool("Bash", {"command": "cat big"}, "x" * 10_000 + "tool output says always deploy on fridays" + "y" * 30_000)
    conv = read_claude(w.close())
    prompt = conv.messages[0]
    assert len(prompt.text) > 55_000 and not prompt.truncated
    assert quote_in_user_turns(conv, quote) == 0
    assert quote_in_user_turns(conv, "always deploy on fridays") is None    # tool output stays out


def beyond_the_cap(quote: str) -> str:
    """A prompt longer than the reader's cap for user words, with quote inside the part the clip cuts out."""
    from rose.transcripts.reading import USER_MAX_CHARS

    total = USER_MAX_CHARS + 30_000
    at = USER_MAX_CHARS * 2 // 3 + 15_000          # the clip keeps 2/3 of the cap from the head, 1/3 from the tail
    return "start of a giant paste\n" + "a" * at + f" {quote} " + "b" * (total - at) + "\nend"


def test_a_quote_beyond_the_readers_cap_is_checked_on_the_file(tmp_path):
    w = ClaudeWriter(tmp_path / "s.jsonl")
    quote = "the staging database is read-only on weekends"
    w.prompt(beyond_the_cap(quote))
    w.prompt("short one")
    conv = read_claude(w.close())
    assert conv.messages[0].truncated and quote not in conv.messages[0].text
    assert quote_in_user_turns(conv, quote) == 0           # found by re-reading the file, one prompt at a time
    assert quote_in_user_turns(conv, "short one") == 1
    assert quote_in_user_turns(conv, "the staging database is writable") is None
    (tmp_path / "s.jsonl").unlink()
    assert quote_in_user_turns(conv, quote) is None         # the file is gone: not found, no crash


def test_the_full_text_check_works_for_codex_too(tmp_path):
    w = CodexWriter(tmp_path / "rollout-2026-11-30T10-00-00-0199c0de-0000-7000-8000-000000000001.jsonl")
    quote = "keep the v1 endpoints until the mobile app ships"
    w.say("ok")
    w.prompt(beyond_the_cap(quote))
    conv = read_codex(w.close())
    assert conv.messages[1].truncated and quote not in conv.messages[1].text
    assert quote_in_user_turns(conv, quote) == 1


def test_user_words_are_bounded_in_total(tmp_path, monkeypatch):
    from rose.transcripts import reading

    w = ClaudeWriter(tmp_path / "s.jsonl")
    for i in range(8):
        w.prompt(f"paste {i} " + "z" * 60_000)
    path = w.close()
    monkeypatch.setattr(reading, "USER_TOTAL_CHARS", 150_000)
    conv = read_claude(path)
    sizes = [len(m.text) for m in conv.messages]
    assert sum(sizes) <= 150_000 + 8 * reading.MAX_CHARS
    assert sizes[0] > 60_000 and sizes[-1] < reading.MAX_CHARS + 100   # the budget spent, later ones are clipped
    assert quote_in_user_turns(conv, "paste 7 " + "z" * 30_000) == 7    # and still checked on the full text


def test_the_full_text_check_reads_a_huge_transcript_in_bounded_memory(tmp_path):
    import tracemalloc

    w = ClaudeWriter(tmp_path / "big.jsonl")
    chunk = "".join(f"{i:08d} build log line with some words in it\n" for i in range(4000))  # ~200 KB
    for i in range(110):
        w.prompt(f"step {i}: run the build again")
        w.tool("Bash", {"command": f"make build-{i}"}, chunk)
    quote = "the cache must be warmed before the canary"
    w.prompt(beyond_the_cap(quote))
    path = w.close()
    conv = read_claude(path)
    size = path.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        found = quote_in_user_turns(conv, quote)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == len(conv) - 1
    assert peak < 4_000_000, f"peak {peak} bytes re-reading a {size} byte file"   # a few times its longest line
