"""Agent-neutral session scripts: what happens in a session, with the facts the bench will look for.

A script is a list of steps. The writers (claude.py, codex.py) render each step in their agent's line format; the
facts planted here go to the manifest:

    Correction   a short user correction (40-200 chars), verbatim, unique in the corpus
    Failure      a failed tool call; its output's last line carries a unique token (the error the judge needs)
    KeyReasoning a sentence with a unique token inside one reasoning block, after feedback (a failure or a
                 correction) or anywhere
    Paste        a pasted block of 10k-30k chars inside a prompt
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Any

WORDS = ("cache retry module build error value schema handler queue worker deploy config request response token "
         "session client server route model field index cursor batch stream buffer parser lexer state event "
         "payload header timeout limit offset window checkout cart order invoice user account profile report "
         "migration table column query join filter reducer store action component render hook effect test "
         "fixture mock stub assert branch commit merge rebase patch release tag version manifest").split()
MODULES = ("orders", "billing", "auth", "cart", "search", "reports", "sync", "ingest", "notify", "export",
           "pricing", "inventory", "sessions", "audit", "webhooks", "scheduler")
TOOLS_PY = ("uv run pytest", "pytest -q", "python -m pytest -x", "make test", "tox -e py311", "uv run mypy src",
            "ruff check .")
TOOLS_JS = ("npm test", "pnpm test", "yarn jest", "npx tsc --noEmit", "npm run build", "npx vitest run",
            "npx eslint src")
TOOLS_OTHER = ("cargo test", "go test ./...", "cargo clippy", "make check", "./gradlew test", "dotnet test")


def token(rng: random.Random, n: int = 6) -> str:
    return "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(n))


def prose(rng: random.Random, n_words: int) -> str:
    out = []
    for i in range(n_words):
        w = rng.choice(WORDS)
        out.append(w.capitalize() if i == 0 or out[-1].endswith(".") else w)
        if rng.random() < 0.08:
            out[-1] += "."
    return " ".join(out) + "."


# -- steps --------------------------------------------------------------------------------------------------------

@dataclass
class Prompt:
    text: str
    kind: str = "task"              # task | correction | followup | ack | paste | image | command
    images: int = 0


@dataclass
class Think:
    text: str


@dataclass
class Say:
    text: str


@dataclass
class Tool:
    kind: str                       # read | edit | write | bash | grep | glob | patch | task
    target: str                     # path, command or pattern
    output: str
    failed: bool = False
    exit_code: int | None = None
    error_kind: str = "exit"        # exit | edit_miss | rejected | harness
    image: bool = False             # a Read of an image: the result is an image block
    sub: SubAgent | None = None     # a Task call's sub-agent


@dataclass
class SubAgent:
    agent_id: str
    prompt: str
    steps: list[Any] = field(default_factory=list)
    result: str = ""


@dataclass
class Compact:
    summary: str
    manual: bool = False


@dataclass
class Injected:
    text: str


@dataclass
class Synthetic:
    text: str                       # a <task-notification>, an interrupt note, a command's stdout


@dataclass
class Script:
    name: str
    agent: str                      # claude | codex
    version: str
    session_id: str
    cwd: str
    steps: list[Any] = field(default_factory=list)
    facts: dict[str, list[Any]] = field(default_factory=lambda: {
        "corrections": [], "failures": [], "reasoning": [], "pastes": [], "subagent_tokens": []})


# -- building a session -------------------------------------------------------------------------------------------

SIZES = {   # prompts, steps per prompt, output scale
    "tiny": ((1, 2), (1, 5), 0.3),
    "small": ((2, 6), (3, 10), 0.6),
    "medium": ((4, 12), (5, 14), 1.0),
    "large": ((4, 12), (8, 20), 3.0),
    "huge": ((5, 18), (10, 26), 4.5),
}


class Author:
    """Writes one session's script with planted facts, from a seeded random source."""

    def __init__(self, rng: random.Random, agent: str, version: str, size: str, name: str):
        self.rng = rng
        self.agent = agent
        self.size = size
        self.stack = rng.choice(("py", "py", "js", "other"))
        self.module = rng.choice(MODULES)
        root = f"/home/dev/{rng.choice(('shop', 'api', 'ledger', 'portal', 'atlas', 'relay'))}-{token(rng, 3)}"
        sid = (f"{token(rng, 8)}-{token(rng, 4)}-4{token(rng, 3)}-8{token(rng, 3)}-{token(rng, 12)}"
               if agent == "claude" else
               f"0199{token(rng, 4)}-{token(rng, 4)}-7{token(rng, 3)}-8{token(rng, 3)}-{token(rng, 12)}")
        sid = "".join(c if c in "0123456789abcdef-" else rng.choice("0123456789abcdef") for c in sid)
        self.s = Script(name=name, agent=agent, version=version, session_id=sid, cwd=root)
        self.last_feedback = False
        self.failures_since_prompt = 0

    # texts
    def path(self) -> str:
        ext = {"py": ".py", "js": ".ts", "other": self.rng.choice((".rs", ".go"))}[self.stack]
        return f"src/{self.module}/{self.rng.choice(WORDS)}_{self.rng.choice(WORDS)}{ext}"

    def check(self) -> str:
        pool = {"py": TOOLS_PY, "js": TOOLS_JS, "other": TOOLS_OTHER}[self.stack]
        return self.rng.choice(pool)

    def code(self, lines: int) -> str:
        out = []
        for i in range(1, lines + 1):
            indent = "    " * self.rng.randint(0, 3)
            out.append(f"{i:6d}\t{indent}{self.rng.choice(WORDS)}_{self.rng.choice(WORDS)} = "
                       f"{self.rng.choice(WORDS)}({self.rng.choice(WORDS)}, {self.rng.randint(0, 99)})")
        return "\n".join(out)

    def log(self, lines: int) -> str:
        return "\n".join(f"{self.rng.choice(('INFO', 'DEBUG', 'WARN'))} {self.module}.{self.rng.choice(WORDS)}: "
                         f"{prose(self.rng, self.rng.randint(4, 14))}" for _ in range(lines))

    def scale(self) -> float:
        return SIZES[self.size][2]

    # prompts
    def task_prompt(self) -> Prompt:
        n = self.rng.randint(20, 220)
        return Prompt(f"In the {self.module} module, {prose(self.rng, n)} Keep the public API unchanged.", "task")

    def correction(self) -> Prompt:
        r = self.rng
        t = token(r, 5)
        alt = f"{r.choice(WORDS)}_{t}"
        forms = [
            f"no, don't touch {self.path()}; the fix belongs in {alt}",
            f"stop: we never call {r.choice(WORDS)}() directly here, go through {alt}",
            f"that's the wrong approach. Use `{alt}` instead of patching the {r.choice(WORDS)}",
            f"please run the tests with `{self.check()} -k {alt}`, not the whole suite",
            f"{alt} is generated code, never edit it by hand",
            f"Actually keep the old {r.choice(WORDS)} behaviour, just rename it to {alt}",
            f"you removed the {r.choice(WORDS)} check in {alt} — put it back",
            f"I said {alt}, not {r.choice(WORDS)}_{token(r, 4)}. Read my message again.",
            f"Always use the {alt} helper for {r.choice(WORDS)} parsing in this repo",
            f"wrong file: the {r.choice(WORDS)} handler lives in src/{self.module}/{alt}.py",
            f"revert the change to {alt}, it broke the {r.choice(WORDS)} {r.choice(WORDS)}",
            f"hmm, why {r.choice(WORDS)}? the config key is {alt}, look it up",
        ]
        text = r.choice(forms)
        if r.random() < 0.3:
            text += f" {prose(r, r.randint(3, 14))}"
        text = text[:200]
        self.s.facts["corrections"].append(text)
        return Prompt(text, "correction")

    def followup(self) -> Prompt:
        r = self.rng
        forms = ["continue", "yes", "go ahead", "ok, do it", "looks good, commit it", "thanks",
                 f"now do the same for the {r.choice(MODULES)} module", "run the full suite again",
                 f"what does {r.choice(WORDS)}_{r.choice(WORDS)} do?", f"next: {prose(r, r.randint(6, 40))}",
                 "can you also add a test for that?", "push it"]
        return Prompt(r.choice(forms), "ack" if r.random() < 0.4 else "followup")

    def paste(self) -> Prompt:
        r = self.rng
        size = r.randint(10_000, 30_000)
        block = self.log(size // 70) if r.random() < 0.6 else self.code(size // 60)
        block = block[:size]
        t = token(r, 8)
        head, tail = f"PASTE-START-{t}", f"PASTE-END-{t}"
        text = f"Here is what I get:\n{head}\n{block}\n{tail}\nWhat is going on?"
        self.s.facts["pastes"].append({"head": head, "tail": tail, "chars": len(text)})
        return Prompt(text, "paste")

    # agent work
    def think(self, after_feedback: bool) -> Think:
        r = self.rng
        n = r.randint(30, 400) if self.agent == "claude" else r.randint(12, 60)
        body = prose(r, n)
        if self.agent == "codex":
            body = f"**{r.choice(WORDS).capitalize()} {r.choice(WORDS)}**\n\n{body}"
        p = 0.45 if after_feedback else 0.08
        if r.random() < p:
            t = token(r, 7)
            fact = f"The root cause is {r.choice(WORDS)}_{t} being reset before the {r.choice(WORDS)} runs."
            where = r.choice(("start", "middle", "end"))
            words = body.split(" ")
            cut = {"start": 0, "middle": len(words) // 2, "end": len(words)}[where]
            body = " ".join(words[:cut] + [fact] + words[cut:])
            self.s.facts["reasoning"].append({"token": t, "after_feedback": after_feedback, "where": where,
                                              "block_chars": len(body)})
        return Think(body)

    def tool(self) -> Tool:
        r = self.rng
        sc = self.scale()
        kind = r.choices(("read", "edit", "bash", "grep", "write", "glob"), (30, 22, 30, 9, 4, 5))[0]
        if kind == "read":
            if self.agent == "claude" and r.random() < 0.04:
                return Tool("read", f"docs/{r.choice(WORDS)}.png", "", image=True)
            return Tool("read", self.path(), self.code(max(5, int(r.randint(10, 260) * sc))))
        if kind == "grep":
            return Tool("grep", r.choice(WORDS), "\n".join(f"{self.path()}:{r.randint(1, 400)}"
                                                           for _ in range(r.randint(1, 30))))
        if kind == "glob":
            return Tool("glob", f"src/{self.module}/**/*", "\n".join(self.path() for _ in range(r.randint(2, 40))))
        if kind in ("edit", "write"):
            if r.random() < 0.04:
                return self._failure(Tool("edit", self.path(), "", failed=True, error_kind="edit_miss"))
            return Tool(kind if self.agent == "claude" else "patch", self.path(),
                        f"The file {self.path()} has been updated." if self.agent == "claude" else "Success.")
        cmd = self.check() if r.random() < 0.6 else r.choice(
            (f"git diff --stat", f"ls src/{self.module}", f"grep -rn {r.choice(WORDS)} src", "git status",
             f"cat src/{self.module}/__init__.py"))
        if r.random() < 0.12:
            return self._failure(Tool("bash", cmd, "", failed=True, exit_code=r.choice((1, 1, 1, 2, 4, 101, 127))))
        return Tool("bash", cmd, self.log(max(1, int(r.randint(2, 120) * sc))) + "\n" +
                    ("=== 42 passed in 3.10s ===" if "test" in cmd else ""), exit_code=0)

    def _failure(self, t: Tool) -> Tool:
        r = self.rng
        tok = token(r, 6)
        if t.error_kind == "edit_miss":
            line = f"String to replace not found in file: {t.target} ({tok})"
            t.output = line
        else:
            err = r.choice((f"KeyError: '{tok}'", f"AssertionError: expected {tok} in response",
                            f"TypeError: {r.choice(WORDS)}() missing argument '{tok}'",
                            f"error[E0425]: cannot find value `{tok}` in this scope",
                            f"src/{self.module}/x.ts(12,5): error TS2339: Property '{tok}' does not exist",
                            f"ModuleNotFoundError: No module named '{tok}'",
                            f"panic: runtime error: index out of range [{tok}]"))
            body = self.log(max(1, int(r.randint(5, 160) * self.scale())))
            t.output = f"{body}\n{err}"
            if r.random() < 0.08:
                t.error_kind = "rejected"
                t.output = (f"The user doesn't want to proceed with this tool use. The tool use was rejected "
                            f"({tok}).")
                t.exit_code = None
        self.s.facts["failures"].append({"token": tok, "kind": t.error_kind})
        self.failures_since_prompt += 1
        return t

    def subagent(self) -> Tool:
        r = self.rng
        agent_id = token(r, 16)
        leak = token(r, 9)
        sub = SubAgent(agent_id, f"Find every caller of {r.choice(WORDS)}_{leak} in the repo and report them.")
        for _ in range(r.randint(2, 8)):
            sub.steps.append(Think(prose(r, r.randint(10, 80)) + f" sidechain-{leak}"))
            t = Tool("grep", f"{r.choice(WORDS)}_{leak}", "\n".join(self.path() for _ in range(r.randint(1, 12))))
            if r.random() < 0.2:
                t = Tool("bash", self.check(), f"{self.log(5)}\nKeyError: 'sub{leak}'", failed=True, exit_code=1)
            sub.steps.append(t)
        sub.result = f"Found {r.randint(1, 9)} callers. {prose(r, r.randint(10, 60))}"
        self.s.facts["subagent_tokens"].append(leak)
        return Tool("task", sub.prompt, sub.result, sub=sub)

    def answer(self) -> Say:
        return Say(f"Done: {prose(self.rng, self.rng.randint(15, 120))}")

    def build(self) -> Script:
        r = self.rng
        (p_lo, p_hi), (s_lo, s_hi), _ = SIZES[self.size]
        n_prompts = r.randint(p_lo, p_hi)
        steps = self.s.steps
        # long sessions compact every 50-110 tool steps (mid-task too); half the medium ones once or so
        compact_every = r.randint(50, 110) if self.size in ("large", "huge") else (
            r.randint(40, 80) if self.size == "medium" and r.random() < 0.5 else 10**9)
        since_compact = 0
        for p in range(n_prompts):
            if p == 0:
                prompt = self.task_prompt()
            else:
                prompt = r.choices((self.correction, self.followup, self.task_prompt, self.paste),
                                   (24, 50, 20, 2 if self.size != "tiny" else 0))[0]()
            if self.agent == "claude" and p > 0 and r.random() < 0.05:
                prompt.images = 1
            if p == 0 and r.random() < 0.3:
                steps.append(Injected(f"<rose-lessons>\nLessons: {prose(r, 30)}\n</rose-lessons>"))
            steps.append(prompt)
            feedback = prompt.kind == "correction"
            self.failures_since_prompt = 0
            for _ in range(r.randint(s_lo, s_hi)):
                if r.random() < (0.3 if self.agent == "claude" else 0.4):
                    steps.append(self.think(feedback))
                feedback = False
                if r.random() < 0.15:
                    steps.append(Say(prose(r, r.randint(8, 60))))
                if self.agent == "claude" and r.random() < 0.03:
                    tool = self.subagent()
                else:
                    tool = self.tool()
                steps.append(tool)
                feedback = tool.failed
                since_compact += 1
                if since_compact >= compact_every:
                    steps.append(Compact(f"Primary Request and Intent: {prose(r, r.randint(80, 400))}",
                                         manual=r.random() < 0.2))
                    since_compact = 0
            if r.random() < 0.03:
                steps.append(Synthetic("[Request interrupted by user]"))
            steps.append(self.answer())
        return self.s
