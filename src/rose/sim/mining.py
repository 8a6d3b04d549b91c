"""A simulated miner: the `sim` backend, plus extraction that mints lessons of varying quality from each session.

The plain `sim` backend mints nothing (its lessons are seeded). For a long life (bench/bench_retention.py) the store
must grow the way a real one does, so this backend's `extract` answers with what a noisy extractor would find:

    useful      the user's correction of a failed session (rose.sim.agent, `correct=True`), stated as the fact's
                terse form and quoting the user verbatim: it makes a later task that needs the fact succeed
    useless     a note that states no fact (it quotes the prompt as its evidence, as the extractor must, but says
                only something generic): rarely served, never used
    wrong       a lesson quoting the prompt that says the rule about a fact the task needed was reverted
                (rose.sim.world.misleading): an agent served it first fails on that fact
    orientation a restatement of a fact the session applied, citing the tool output: near-duplicates of each
                other across sessions, which is what retention's similar-pair consolidation is for

Every quote is the user's verbatim words (checked in code by the real minting stage), and the real verify call is
answered yes. The retention calls are answered by the world's facts: a consolidation states every fact of both
sources (and every misleading statement), and the verifier accepts it only if it neither adds nor loses one;
recurrence is declined (the simulated world has one project).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from rose.sim.agent import CORRECTION
from rose.sim.backend import SimBackend, SimConfig
from rose.sim.world import World, default_world, misleading

_APPLIED = re.compile(r"Applying \[(.+?)\] from (?:the detail attached under )?lesson (\S+?)\.")
_TICKET = re.compile(r"\s*\(ticket \d+\)\s*$")
GENERIC = ("keep the change small and mention it in the summary.", "ask before refactoring anything nearby.",
           "prefer clear names over comments.", "run the checks before saying it is done.",
           "write the summary in plain words.", "leave the code a little tidier than it was.")


@dataclass
class MiningConfig:
    useless: float = 0.25      # chance a session mints a useless note
    wrong: float = 0.03        # chance a session mints a wrong lesson about a fact its task needed
    orientation: float = 0.30  # chance a session mints an orientation record restating a fact it applied
    seed: int = 5


class MiningBackend(SimBackend):
    name = "sim"

    def __init__(self, world: World | None = None, config: SimConfig | None = None,
                 mining: MiningConfig | None = None):
        super().__init__(world or default_world(), config)
        self.mining = mining or MiningConfig()
        self.mine_rng = random.Random(self.mining.seed)
        self.minted: dict[str, int] = {}   # kind -> candidates answered (what the extractor proposed)

    def _count(self, kind: str) -> None:
        self.minted[kind] = self.minted.get(kind, 0) + 1

    def _extract(self, r: Any) -> dict[str, Any]:
        users = [m for m in r.messages if m.role == "user"]
        tools = [m for m in r.messages if m.role == "tool"]
        lessons: list[dict[str, Any]] = []
        orientation: list[dict[str, Any]] = []
        if not users:
            return {"decision": "NONE", "lessons": [], "orientation": [], "experience": None}
        prompt = users[0]
        quote = _TICKET.sub("", prompt.text).strip()
        session = prompt.handle.split("/")[2] if prompt.handle.count("/") >= 3 else "?"
        for m in users[1:]:
            if m.text.startswith(CORRECTION):
                fact = self.world.fact_of_claim(m.text)
                if fact is not None:
                    self._count("useful")
                    lessons.append(self._lesson(fact.terse, f"Correction: {fact.topic}", m.text, "high"))
        needed = [self.world.fact(k) for k, _lesson in
                  ((k, lid) for k, lid in _APPLIED.findall(" ".join(m.text for m in r.messages))
                   if k in {f.key for f in self.world.facts})]
        roll = self.mine_rng.random()
        if roll < self.mining.wrong and needed and quote:
            fact = self.mine_rng.choice(needed)
            self._count("wrong")
            lessons.append(self._lesson(f"For {fact.topic}: {misleading(fact)} (said in {session}).",
                                        f"Change to {fact.topic}", quote, "medium"))
        elif roll < self.mining.wrong + self.mining.useless and quote:
            self._count("useless")
            # it names the prompt's subject, as a real one does (a quote sharing no word with it grounds nothing)
            lessons.append(self._lesson(f"Note from {session} on {quote}: {self.mine_rng.choice(GENERIC)}",
                                        f"Note from {session}", quote, "medium"))
        if needed and tools and self.mine_rng.random() < self.mining.orientation:
            fact = self.mine_rng.choice(needed)
            self._count("orientation")
            orientation.append({"title": f"How {fact.topic} works here", "body": f"{fact.terse} (seen in {session})",
                                "evidence": [tools[-1].handle]})
        decision = "LEARN" if lessons else "NONE"
        return {"decision": decision, "lessons": lessons[:3], "orientation": orientation, "experience": None}

    @staticmethod
    def _lesson(body: str, title: str, quote: str, confidence: str) -> dict[str, Any]:
        return {"title": title[:120], "body": body, "quote": quote, "confidence": confidence, "scope": "project",
                "tags": []}

    def _verify(self, r: Any) -> dict[str, Any]:
        return {"supported": True, "reason": "the simulated evidence states it"}

    # -- retention ---------------------------------------------------------------------------------------------
    def _statements(self, text: str) -> list[str]:
        facts = [self.world.fact(k).terse for k in self.world.keys_in(text)]
        wrong = [misleading(f) for f in self.world.facts if misleading(f) in text]
        return facts + wrong

    def _consolidate(self, r: Any) -> dict[str, Any]:
        lines = list(dict.fromkeys(s for src in r.sources for s in self._statements(src.body)))
        body = "\n".join(lines) or r.sources[0].body
        return {"title": r.sources[0].title, "body": body}

    def _verify_consolidation(self, r: Any) -> dict[str, Any]:
        have = set(self._statements(r.replacement.body))
        want = {s for src in r.sources for s in self._statements(src.body)}
        ok = have == want
        return {"adds_no_claim": have <= want, "hides_no_contradiction": True, "keeps_boundaries": True,
                "keeps_constraints": want <= have,
                "reason": "the same facts, stated once" if ok else "the facts differ from the sources'"}

    def _recurrence(self, r: Any) -> dict[str, Any]:
        return {"everywhere": False, "reason": "the simulated world has one project"}
