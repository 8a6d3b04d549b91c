"""The digest the judges read: budgeted, chronological, citable, redacted, and keeping what matters most."""
from __future__ import annotations

import random
import re
import string

import pytest

from rose.tokens import estimate
from rose.transcripts import Kind, digest, read_claude, read_codex, user_turns

from .build import FIXTURES, ClaudeWriter, CodexWriter

_RNG = random.Random(7)
ENTRY_RE = re.compile(r"^\[(\d+)\] ", re.M)


def fake_anthropic_key() -> str:
    """A key of the real shape, made at test time so no committed file holds one."""
    body = "".join(_RNG.choice(string.ascii_letters + string.digits + "_-") for _ in range(93))
    return "sk-ant-api03-" + body + "AA"


def words(n: int, seed: int) -> str:
    rng = random.Random(seed)
    vocab = "cache retry module build error value schema handler queue worker deploy config".split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def big_session(tmp_path, prompts=6, steps=60):
    w = ClaudeWriter(tmp_path / "big.jsonl")
    for p in range(prompts):
        w.prompt(f"prompt {p}: " + words(25, p))
        for s in range(steps // prompts):
            i = p * 100 + s
            w.thinking(f"reasoning {i}: " + words(300, i))
            w.tool("Bash", {"command": f"make step-{i}"}, words(2000, i + 1), error=s == 3)
            w.say(f"middle {i}: " + words(200, i + 2))
        w.say(f"answer {p}: " + words(150, p + 3))
    return read_claude(w.close())


@pytest.fixture(scope="module")
def rich_claude():
    return read_claude(FIXTURES / "claude_rich.jsonl")


def test_a_small_session_is_shown_whole(rich_claude):
    d = digest(rich_claude)
    assert d.complete and d.omitted == 0 and d.tokens <= 3000
    for _, text in user_turns(rich_claude):
        assert text.strip() in d.text or " ".join(text.split()) in " ".join(d.text.split())
    assert "[2] reasoning: The user says the checkout tests fail" in d.text
    assert "[5] FAILED, exit 4 Bash `pytest tests/test_checkout.py -x -q`: " in d.text
    assert "ModuleNotFoundError: No module named 'shop'" in d.text
    assert "[10] ok Read `/home/dev/shop/shop/checkout.py`" in d.text     # success: one line, no output
    assert "line 799 of" not in d.text
    assert "[27] -- context compacted here --" in d.text
    assert "Primary Request and Intent" not in d.text                    # the summary is not repeated
    assert "(not the user) <task-notification>" in d.text
    assert "[1] (context injected by a hook or the harness" in d.text and "n_ab12cd" not in d.text
    assert d.text.endswith("[33] assistant: All set: checkout fixed and verified with `uv run pytest` (2 passed).")


def test_entries_are_chronological_and_cite_real_messages(rich_claude):
    d = digest(rich_claude)
    ns = [int(n) for n in ENTRY_RE.findall(d.text)]
    assert ns == sorted(ns) and list(d.shown) == ns
    assert all(0 <= n < len(rich_claude) for n in ns)
    assert f"session://{rich_claude.session_id}/message/<n>" in d.text.splitlines()[0]
    # a tool entry cites the result (role tool): the evidence that it ran and how it went
    assert all(rich_claude.messages[int(n)].kind is Kind.TOOL_RESULT
               for n in re.findall(r"^\[(\d+)\] (?:ok|FAILED)", d.text, re.M))


def test_codex_digest(tmp_path):
    conv = read_codex(FIXTURES / "codex_rich.jsonl")
    d = digest(conv)
    assert "[5] FAILED, exit 2 exec_command `make test`: " in d.text and "KeyError: 'items'" in d.text
    assert "[10] FAILED apply_patch `patch api/orders.py`" in d.text
    assert "[16] no verdict exec_command `make serve`" in d.text
    assert "[8] ok shell `grep -n \"items\" api/orders.py`" in d.text
    assert "Never call pytest directly" not in d.text                     # AGENTS.md is not shown as words


@pytest.mark.parametrize("budget", [800, 1500, 3000, 6000])
def test_budget_is_kept_within_ten_percent(tmp_path, budget):
    conv = big_session(tmp_path)
    d = digest(conv, budget_tokens=budget)
    assert estimate(d.text) == d.tokens
    assert 0.9 * budget <= d.tokens <= 1.1 * budget, d.tokens
    assert not d.complete and "(left out to fit the budget:" in d.text


def test_priorities_when_over_budget(tmp_path):
    conv = big_session(tmp_path)
    d = digest(conv, budget_tokens=3000)
    for _, text in user_turns(conv):                       # every prompt, verbatim
        assert f"user: {text}" in d.text
    failures = [m for m in conv.messages if m.kind is Kind.TOOL_RESULT and m.failed]
    for m in failures:                                     # every failure fits, so every failure is there
        assert re.search(rf"^\[{m.n}\] FAILED Bash `make step-\d+`: ", d.text, re.M)
    assert "reasoning: reasoning " in d.text               # reasoning keeps a place
    assert "answer 5:" in d.text                           # the last answer
    assert not re.search(r"^\[\d+\] ok ", d.text, re.M)    # successful calls go first
    assert "successful tool calls" in d.text.splitlines()[-1]


def test_user_words_are_trimmed_only_when_they_alone_exceed_the_budget(tmp_path):
    w = ClaudeWriter(tmp_path / "talky.jsonl")
    for p in range(40):
        w.prompt(f"PROMPT-{p:02d} " + words(120, p))
        w.say(f"answer {p}")
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=1000)
    assert d.tokens <= 1100
    turns = user_turns(conv)
    assert f"user: {turns[0][1]}" in d.text and f"user: {turns[-1][1]}" in d.text   # first and last intact
    assert "PROMPT-20" in d.text or "user messages" in d.text.splitlines()[-1]


def test_one_enormous_prompt_is_trimmed_head_and_tail(tmp_path):
    w = ClaudeWriter(tmp_path / "paste.jsonl")
    w.prompt("START of my request. " + words(6000, 1) + " END of my request.")
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=500)
    assert d.tokens <= 550
    assert "START of my request." in d.text and "END of my request." in d.text and "[...]" in d.text


def test_secrets_never_reach_the_digest(tmp_path):
    key, key2 = fake_anthropic_key(), fake_anthropic_key()
    w = ClaudeWriter(tmp_path / "secret.jsonl")
    w.prompt(f"Use my key {key} and the db password=Tr0ub4dor-3-horse for the migration.")
    w.tool("Bash", {"command": f"ANTHROPIC_API_KEY={key2} ./migrate"},
           f"connecting with password=Tr0ub4dor-3-horse\nauth failed for {key2}", error=True)
    w.tool("Bash", {"command": "cat .env"}, f"ANTHROPIC_API_KEY={key}\nDB_PASSWORD=Tr0ub4dor-3-horse")
    w.say(f"I used {key} as asked.")
    conv = read_claude(w.close())
    d = digest(conv)
    for secret in (key, key2, "Tr0ub4dor-3-horse", key[20:60], key2[20:60]):
        assert secret not in d.text
    assert d.text.count("[REDACTED:") >= 5
    assert "password=[REDACTED:" in d.text


def test_a_secret_on_a_cut_is_never_half_shown(tmp_path):
    key = fake_anthropic_key()
    w = ClaudeWriter(tmp_path / "cut.jsonl")
    w.prompt("run it")
    for offset in range(0, 4000, 97):     # place the key across every likely cut point of a long output
        output = "x" * (300 + offset) + key + "y" * 30_000
        w.tool("Bash", {"command": "run"}, output, error=True)
    conv = read_claude(w.close())
    for budget in (600, 3000):
        text = digest(conv, budget_tokens=budget).text
        pieces = {key[i:i + 12] for i in range(13, len(key) - 12)}   # any 12 chars of the key's random part
        assert not any(p in text for p in pieces)


def test_codex_secrets_and_budget(tmp_path):
    key = fake_anthropic_key()
    w = CodexWriter(tmp_path / "rollout-x.jsonl")
    w.prompt(f"deploy with {key}")
    for i in range(200):
        w.thinking(f"thinking {i} " + words(80, i))
        w.tool(f"deploy --step {i}", words(500, i), exit_code=1 if i % 50 == 0 else 0)
    w.say("deployed")
    d = digest(read_codex(w.close()), budget_tokens=2000)
    assert key not in d.text and 1800 <= d.tokens <= 2200
    assert "user: deploy with [REDACTED:anthropic-api-key]" in d.text
    assert len(re.findall(r"^\[\d+\] FAILED, exit 1 exec_command", d.text, re.M)) == 4


def test_empty_conversation(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    d = digest(read_claude(path))
    assert d.shown == () and d.complete and d.text.startswith("Session empty (claude)")
