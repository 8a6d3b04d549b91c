"""The `sim` judge backend: every semantic call answered by simulation, so the real stage code runs unchanged.

    from rose.sim import SimBackend, default_world
    judge = Judge(SimBackend(default_world()))          # or agent.backend: sim, after rose.sim.register()

Each answer is computed from the request alone, by which facts its texts state (rose.sim.world), never from the
store: the replay probe sees only the candidate lesson and the prompt (not the original it was made from), the
replay judge only the prompt, the accepted outcome and the approach.

    assess         outcome and use, read from the agent's own narration in the digest
    compress       drops filler, then rationale, then (given span evidence) facts never seen doing work, declaring
                   each as a claim; conservative (no fact dropped) when evidence is absent
    replay_probe   "Apply [key]" for every fact the candidate states ("Skip [key]" for a statement that skips one)
    replay_judge   pass iff every fact the accepted outcome used is applied and none skipped
    rank_repairs   a claim scores high iff its fact's symptom is in the failure (plus `judge_noise`)
    merge          the facts both lessons state, under a one-line generalisation
    extract        nothing to mint (lessons are seeded); related: none; scope: project; probe: echo

Faults, as rates (`SimConfig`) or scheduled for the next calls (`schedule("compress", "under_report")`):
under_report (declares nothing), lose_needed (also drops a fact seen doing work), silent_drop (drops one more fact
without declaring it), overgeneralise (a merge parent that tells the agent to skip a needed fact) and unreadable
(replay_judge answers out of schema).
"""
from __future__ import annotations

import json
import random
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure
from rose.sim.world import World, default_world
from rose.tokens import estimate

_APPLIED = re.compile(r"Applying \[(.+?)\] from (the detail attached under )?lesson (\S+?)\.")
_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
_FAILED = re.compile(r"FAILED: (.+)")
TARGET_MARGIN = 0.97   # the simulated compressor aims a little under the ratio it is asked for


@dataclass
class SimConfig:
    under_report: float = 0.0
    lose_needed: float = 0.0
    silent_drop: float = 0.0
    overgeneralise: float = 0.0
    unreadable: float = 0.0
    judge_noise: float = 0.05
    seed: int = 11


@dataclass
class Faults:
    scheduled: str | None
    rng: random.Random | None     # None: a scheduled fault decides, rates do not apply
    config: SimConfig
    fired: dict[str, int]

    def __call__(self, name: str) -> bool:
        if self.rng is None:
            hit = self.scheduled == name
        else:
            rate = getattr(self.config, name)
            hit = rate > 0 and self.rng.random() < rate
        if hit:
            self.fired[name] = self.fired.get(name, 0) + 1
        return hit


@dataclass
class Calls:
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1


class SimBackend(Backend):
    name = "sim"
    can_fork = False

    def __init__(self, world: World | None = None, config: SimConfig | None = None, model: str = "world"):
        self.world = world or default_world()
        self.config = config or SimConfig()
        self.model = model
        self.rng = random.Random(self.config.seed)
        self.calls = Calls()
        self.fired: dict[str, int] = {}      # faults injected so far, by name
        self._faults: dict[str, deque[str | None]] = {}

    def schedule(self, call: str, *faults: str | None) -> SimBackend:
        """Faults for the next calls of this kind, in order (None = no fault for that one)."""
        self._faults.setdefault(call, deque()).extend(faults)
        return self

    def _draw(self, call: str) -> Faults:
        """This call's faults: the next scheduled one if any was scheduled, else each drawn at its rate."""
        queue = self._faults.get(call)
        if queue:
            return Faults(scheduled=queue.popleft(), rng=None, config=self.config, fired=self.fired)
        return Faults(scheduled=None, rng=self.rng, config=self.config, fired=self.fired)

    def complete(self, request: BackendRequest) -> BackendReply:
        self.calls.add(request.call)
        handler = getattr(self, "_" + request.call, None)
        if handler is None or request.payload is None:
            raise JudgeFailure(FailureKind.SCRIPT, f"the simulated world does not answer {request.call!r}")
        data = handler(request.payload)
        raw = json.dumps(data, ensure_ascii=False)
        return BackendReply(data=data, raw=raw, input_tokens=estimate(request.prompt), output_tokens=estimate(raw))

    # -- attribution -------------------------------------------------------------------------------------------
    def _assess(self, r: Any) -> dict[str, Any]:
        applied = _APPLIED.findall(r.digest)
        failed = _FAILED.findall(r.digest)
        bracketed = set(_BRACKETED.findall(r.digest))
        keys = [k for k, _a, _l in applied]
        if failed:
            summary = "Failed: " + "; ".join(dict.fromkeys(failed)) + ". Applied " + \
                "; ".join(f"[{k}]" for k in keys) + "."
        else:
            summary = "Accepted: the work applied " + ("; ".join(f"[{k}]" for k in keys) or "no remembered fact") + "."
        lessons = []
        for lesson in r.served:
            node, _sep, piece = lesson.id.partition("~")
            in_text = set(self.world.keys_in(lesson.body))
            if piece.startswith("s"):        # one sentence: did the work use a fact it states?
                used = bool(in_text & (bracketed | set(keys)))
            elif piece:                      # detail attached under a lesson: was a fact taken from it?
                used = any(k in in_text and att and lid == node for k, att, lid in applied)
            else:
                used = any(lid == lesson.id for _k, _a, lid in applied)
            lessons.append({"id": lesson.id, "used": used, "reason": "the narration cites it" if used else
                            "nothing in the digest was taken from it"})
        return {"outcome": "failure" if failed else "success", "accepted_summary": summary, "lessons": lessons}

    def _rank_repairs(self, r: Any) -> dict[str, Any]:
        scores = []
        for c in r.claims:
            hit = any(self.world.fact(k).symptom in r.failure for k in self.world.keys_in(c.claim))
            base = 0.9 if hit else 0.05
            noisy = min(1.0, max(0.0, base + self.rng.gauss(0, self.config.judge_noise)))
            scores.append({"id": c.id, "score": round(noisy, 3),
                           "reason": "its absence explains the failure" if hit else "unrelated to the failure"})
        return {"scores": scores}

    # -- compression -------------------------------------------------------------------------------------------
    def _compress(self, r: Any) -> dict[str, Any]:
        fault = self._draw("compress")
        lines = [ln for ln in r.lesson.body.splitlines() if ln.strip()]
        evidence = " ".join([*(r.working_spans or []), *r.preserve])
        observed = set(self.world.keys_in(evidence))
        target = r.target_ratio * estimate(r.lesson.body) * TARGET_MARGIN
        dropped: list[dict[str, str]] = []
        kept = list(lines)

        def size() -> int:
            return estimate("\n".join(kept))

        def drop(line: str, claim: str, kind: str, declare: bool = True) -> None:
            kept.remove(line)
            if declare:
                dropped.append({"claim": claim.lstrip("- ").strip(), "kind": kind, "holder": r.lesson.id})

        for line in list(kept):                                     # 1. filler
            if size() <= target:
                break
            if not self.world.keys_in(line):
                drop(line, line, "example" if line.lower().startswith("example") else "rationale")
        for line in list(kept):                                     # 2. rationale sentences of facts
            if size() <= target:
                break
            fact = self.world.fact_of_claim(line)
            if fact is not None and fact.why and fact.why in line:
                short = line.replace(" " + fact.why, "")
                kept[kept.index(line)] = short
                dropped.append({"claim": fact.why, "kind": "rationale", "holder": r.lesson.id})
        if r.working_spans is not None:                             # 3. facts never seen doing work
            for line in reversed(list(kept)):
                if size() <= target:
                    break
                keys = self.world.keys_in(line)
                if keys and not set(keys) & observed:
                    drop(line, line, self.world.fact(keys[0]).kind)
            spare = [ln for ln in kept if self.world.keys_in(ln) and set(self.world.keys_in(ln)) & observed]
            if spare[1:] and fault("lose_needed"):
                line = spare[-1]
                drop(line, line, self.world.fact(self.world.keys_in(line)[0]).kind)
            rest = [ln for ln in kept[1:] if self.world.keys_in(ln) and not set(self.world.keys_in(ln)) & observed]
            if rest and fault("silent_drop"):
                drop(rest[-1], rest[-1], "fact", declare=False)
        if fault("under_report"):
            dropped = []
        body = "\n".join(kept)
        first = kept[0].lstrip("- ") if kept else r.lesson.title
        return {"title": r.lesson.title, "gist": first[:200], "body": body or r.lesson.body,
                "dropped": dropped}

    def _replay_probe(self, r: Any) -> dict[str, Any]:
        text = r.lesson.text()
        skips = {k for line in text.splitlines() if line.strip().startswith("Skip") for k in self.world.keys_in(line)}
        applies = [k for k in self.world.keys_in(text) if k not in skips]
        steps = [f"Apply [{k}]." for k in applies] + [f"Skip [{k}]." for k in sorted(skips)]
        return {"approach": " ".join(steps) or "No specific guidance: proceed from the code."}

    def _replay_judge(self, r: Any) -> dict[str, Any]:
        if self._draw("replay_judge")("unreadable"):
            return {"verdict": "probably", "reason": ""}            # out of schema: an unreadable judge
        needed = set(_BRACKETED.findall(r.accepted_summary))
        applied = set(re.findall(r"Apply \[([^\[\]]+)\]", r.approach))
        skipped = set(re.findall(r"Skip \[([^\[\]]+)\]", r.approach))
        missing = sorted(needed - applied)
        wrong = sorted(needed & skipped)
        if missing or wrong:
            why = "; ".join([f"the approach lacks [{k}]" for k in missing] +
                            [f"the approach skips [{k}], which the accepted work needed" for k in wrong])
            return {"verdict": "fail", "reason": why}
        return {"verdict": "pass", "reason": "every element the accepted outcome depended on is there"}

    # -- consolidation -----------------------------------------------------------------------------------------
    def _merge(self, r: Any) -> dict[str, Any]:
        keysets = [set(self.world.keys_in(lesson.body)) for lesson in r.lessons]
        shared = [k for k in self.world.keys_in(" ".join(lesson.body for lesson in r.lessons))
                  if all(k in ks for ks in keysets)]
        titles = " and ".join(lesson.title for lesson in r.lessons)
        lines = [f"When work touches both {titles}, they apply together."]
        lines += [f"- {self.world.fact(k).terse}" for k in shared]
        if len(r.lessons) > 1 and self._draw("merge")("overgeneralise"):
            other = [k for k in self.world.keys_in(r.lessons[1].body) if k not in shared]
            if other:
                lines.append(f"Skip {other[0]}: the shared rule covers it.")
        return {"title": f"Working across {titles}"[:120], "gist": lines[0][:200], "body": "\n".join(lines),
                "covers": [lesson.id for lesson in r.lessons]}

    def _extract(self, r: Any) -> dict[str, Any]:
        return {"decision": "NONE", "lessons": [], "orientation": [], "experience": None}

    def _related(self, r: Any) -> dict[str, Any]:
        return {"related": []}

    def _scope(self, r: Any) -> dict[str, Any]:
        return {"scope": "project", "reason": "the simulated world has one repository"}

    def _probe(self, r: Any) -> dict[str, Any]:
        return {"echo": r.nonce}

    def _route(self, r: Any) -> dict[str, Any]:
        # The world serves every lesson every time (five fit the budget), so there is no place a selector failed to
        # look: refusing is the right answer, and answering (not failing) keeps the call's tokens in the accounting.
        return {"decision": "refuse", "when": None, "then": None, "look_in": [], "skip": [],
                "reason": "the simulated world's lessons are all served; no folder was missed"}


def from_settings(agent: Any) -> SimBackend:
    """`agent.backend: sim` (after rose.sim.register()): the default world; `agent.model` may name its seed."""
    seed = int(agent.model) if str(getattr(agent, "model", "")).isdigit() else 11
    return SimBackend(default_world(), SimConfig(seed=seed), model=agent.model or "world")


def register() -> None:
    """Make `agent.backend: sim` available in this process (kept out of import: opting in is explicit)."""
    from rose.judge import register_backend

    register_backend("sim", from_settings)
