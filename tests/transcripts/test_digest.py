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


def test_short_corrections_survive_when_the_users_words_alone_exceed_the_budget(tmp_path):
    # the maintainers' case: two pasted 10k blocks kept 5.6k chars each while a 95-char correction was lost
    w = ClaudeWriter(tmp_path / "pastes.jsonl")
    w.prompt("Here is the failing log:\n" + words(1600, 1) + "\nwhat is wrong?")
    correction = "no, don't patch the retry loop in client.py; the timeout belongs in the session config file now"
    assert len(correction) == 95
    shorts = [f"PROMPT-{p:02d} " + words(12, p) for p in range(12)]
    for p, text in enumerate(shorts):
        w.prompt(correction if p == 6 else text)
        w.say(f"answer {p}")
    w.prompt("And this one:\n" + words(1600, 2) + "\nsame thing?")
    conv = read_claude(w.close())
    assert sum(len(t) for _, t in user_turns(conv)) > 4 * 4 * 1000   # the user's words alone: over the budget
    d = digest(conv, budget_tokens=1000)
    assert d.tokens <= 1100
    assert f"user: {correction}" in d.text
    for p, text in enumerate(shorts):
        if p != 6:
            assert f"user: {text}" in d.text
    pastes = [e for e in re.split(r"\n(?=\[\d+\] )", d.text) if e.startswith(("[0] ", f"[{len(conv) - 1}] "))]
    assert len(pastes) == 2 and all(len(e) < 1200 for e in pastes)   # the pastes gave way, head and tail kept
    assert "Here is the failing log:" in pastes[0] and "what is wrong?" in pastes[0]


def test_many_long_prompts_share_the_budget(tmp_path):
    w = ClaudeWriter(tmp_path / "talky.jsonl")
    for p in range(40):
        w.prompt(f"PROMPT-{p:02d} " + words(120, p))
        w.say(f"answer {p}")
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=1000)
    assert 900 <= d.tokens <= 1100
    assert "[0] user: PROMPT-00 " in d.text and f"[{len(conv) - 2}] user: PROMPT-39 " in d.text   # first, last
    assert "user messages" in d.text.splitlines()[-1]          # the rest is said to be left out


def failing_session(tmp_path, failures=60):
    w = ClaudeWriter(tmp_path / "failing.jsonl")
    w.prompt("make the build green")
    tokens = []
    for i in range(failures):
        w.thinking(f"reasoning {i}: " + words(150, i))
        token = f"ERR{chr(97 + i // 26)}{chr(97 + i % 26)}"   # each failure its own error
        tokens.append(token)
        w.tool("Bash", {"command": f"make step-{i}"}, words(300, i) + f"\nerror: {token} in step", error=True)
        w.tool("Read", {"file_path": f"/src/f{i}.py"}, words(400, i + 1))
        w.say(f"answer {i}: " + words(80, i))
    return read_claude(w.close()), tokens


def test_failures_are_kept_spread_over_the_session(tmp_path):
    conv, tokens = failing_session(tmp_path)
    d = digest(conv, budget_tokens=1500)
    kept = [t in d.text for t in tokens]
    assert 4 < sum(kept) < len(tokens)                    # not all fit, and more than a token few do
    assert kept[0] and kept[-1]                           # the first and the last
    quarters = [kept[i * 15:(i + 1) * 15] for i in range(4)]
    assert all(any(q) for q in quarters), kept            # every part of the session keeps some
    gaps = [j - i for i, j in zip([i for i, k in enumerate(kept) if k], [j for j, k in enumerate(kept) if k][1:])]
    assert max(gaps) <= 2 * len(tokens) / sum(kept) + 1   # evenly: no long run of failures left out


def test_a_repeated_error_gives_way_to_distinct_ones(tmp_path):
    w = ClaudeWriter(tmp_path / "repeats.jsonl")
    w.prompt("fix the tests")
    for i in range(30):
        w.tool("Bash", {"command": "pytest -x"}, words(200, i) + "\nE   KeyError: 'items'", error=True)
        if i in (5, 15, 25):
            name = {5: "alpha", 15: "beta", 25: "gamma"}[i]
            w.tool("Bash", {"command": "mypy src"}, words(200, i) + f"\nsrc/x.py:{i}: error: name {name} unknown",
                   error=True)
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=800)
    assert all(f"name {name} unknown" in d.text for name in ("alpha", "beta", "gamma"))
    assert 0 < d.text.count("KeyError: 'items'") < 30


def test_every_session_with_failures_shows_some_even_when_answers_are_long(tmp_path):
    w = ClaudeWriter(tmp_path / "chatty.jsonl")
    for p in range(30):
        w.prompt(f"step {p}: " + words(30, p))
        w.tool("Bash", {"command": f"make t{p}"}, words(50, p) + f"\nFAIL-{p:02d}", error=p % 10 == 3)
        w.say(f"answer {p}: " + words(400, p))
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=1500)
    assert all(f"FAIL-{p:02d}" in d.text for p in (3, 13, 23))


def test_reasoning_right_after_feedback_is_kept_first(tmp_path):
    w = ClaudeWriter(tmp_path / "think.jsonl")
    w.prompt("speed up the importer")
    for i in range(40):
        w.thinking(f"PLAIN-{i:02d} " + words(250, i))
        w.tool("Bash", {"command": f"bench {i}"}, words(100, i), error=i % 8 == 0)
        if i % 8 == 0:
            w.thinking(f"AFTER-FAILURE-{i:02d} " + words(250, i + 100))
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=1500)
    after = [i for i in range(0, 40, 8) if f"AFTER-FAILURE-{i:02d}" in d.text]
    plain = [i for i in range(40) if f"PLAIN-{i:02d}" in d.text]
    assert after == list(range(0, 40, 8))                 # every reaction to a failure
    assert 0 < len(plain) < 40                            # and some of the rest, as room allows


def test_a_paste_is_cut_before_any_failure_is_lost(tmp_path):
    w = ClaudeWriter(tmp_path / "paste-fail.jsonl")
    w.prompt("The deploy log:\n" + words(5000, 3) + "\nwhy?")
    for i in range(5):
        w.tool("Bash", {"command": f"deploy --step {i}"}, words(300, i) + f"\nDEPLOY-ERR-{i}", error=True)
    w.say("It fails on the migration step.")
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=1500)
    assert all(f"DEPLOY-ERR-{i}" in d.text for i in range(5))
    assert "The deploy log:" in d.text and "why?" in d.text and d.tokens <= 1650


def test_one_enormous_prompt_is_trimmed_head_and_tail(tmp_path):
    w = ClaudeWriter(tmp_path / "paste.jsonl")
    w.prompt("START of my request. " + words(6000, 1) + " END of my request.")
    conv = read_claude(w.close())
    d = digest(conv, budget_tokens=500)
    assert 450 <= d.tokens <= 550                              # what nothing else needs, the paste may use
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
