"""Sessions in the simulated world, through rose's real entry points.

    with Simulation(tmp_dir) as sim:                 # a throwaway project store and global store
        result = sim.run(task)                       # one whole session
        sim.measure()                                # levels, tokens, descents, rescues, held-out

One session is what an agent harness does, in order: the UserPromptSubmit hook (`rose.hooks.entry.run`, the real
recall), the simulated agent working from the injected block, a transcript in Claude Code's format, the
SessionEnd hook (which queues the learner job), then the learner over the queue (`rose.learn.learner.run_queue`)
in-process with the `sim` judge instead of a detached process. Nothing outside `root` is touched: ROSE_HOME points
into it for the duration, and the detached learner the hook would spawn is not started. Ids are drawn from a
generator seeded by `tag` for the duration, so the same tasks give the same run. With a `clock`, every time rose
stamps (creation, last use, events) is read from it, so a benchmark can live through months of sessions in minutes.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rose.text import load_json
from rose import envvars, model
from rose.model import Node, Origin, Status
from rose.sim.agent import Attempt, act, write_session
from rose.sim.backend import SimBackend, SimConfig
from rose.sim.world import Task, World, default_world
from rose.tokens import estimate

if TYPE_CHECKING:
    from rose.store import Layers

BASE_CONFIG = {
    "embed": {"provider": "none"},
    "recall": {"selector": "hybrid", "max_pack_tokens": 6000},
    "compression": {"cooldown_s": 0},
    "agent": {"backend": "sim"},
    # withholding (rose.credit) perturbs every story told here; the runs that measure it turn it on
    "credit": {"withhold_rate": 0},
}


@dataclass
class SessionResult:
    n: int
    task: Task
    session: str
    block: str
    notice: str
    attempt: Attempt
    learner: list[str] = field(default_factory=list)
    recall_ms: float = 0.0              # the UserPromptSubmit hook, end to end (recall and its notice)

    @property
    def tokens(self) -> int:
        return estimate(self.block)

    @property
    def success(self) -> bool:
        return self.attempt.success


@dataclass
class Measure:
    levels: dict[int, int]              # servable lessons by level
    statuses: dict[str, int]
    store_tokens: int                   # tokens of every servable lesson's body
    level_ratio: dict[int, float]       # mean tokens of a compressed lesson / its level-0 original, by level
                                        # (compressions of a merge parent are left out: no level-0 original)
    descents: int                       # descents opened (stats.expansions)
    rescues: int                        # rescues credited to claims (trials and sticky patches)
    repairs: int                        # claims folded back into a body
    gaps: int
    heldout_passed: int
    heldout_total: int
    demoted: int
    merges: int

    @property
    def heldout_rate(self) -> float | None:
        return self.heldout_passed / self.heldout_total if self.heldout_total else None


def _deep_merge(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    out = {k: dict(v) for k, v in base.items()}
    for section, values in (more or {}).items():
        out.setdefault(section, {}).update(values)
    return out


class Simulation:
    def __init__(self, root: Path, *, world: World | None = None, backend: SimBackend | None = None,
                 config: dict[str, Any] | None = None, families: list[str] | None = None, seed_lessons: bool = True,
                 agent: str = "claude", tag: str = "s", clock: Callable[[], Any] | None = None,
                 correct: bool = False):
        self.root = Path(root)
        self.world = world or default_world()
        self.backend = backend or SimBackend(self.world, SimConfig())
        self.config = _deep_merge(BASE_CONFIG, config or {})
        self.families = families
        self.seed_lessons = seed_lessons
        self.agent = agent
        self.tag = tag
        self.clock = clock
        self.correct = correct     # the simulated user corrects a failed session (what a miner learns from)
        self.project = self.root / "project"
        self.n = 0
        self.results: list[SessionResult] = []
        self._saved_env: dict[str, str | None] = {}
        self._saved_spawn: Any = None   # jobs.request_learning, while the simulation stands in for it
        self.layers: Layers | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------
    def __enter__(self) -> Simulation:
        import rose.learn.jobs as jobs
        from rose.store import Layers
        from rose.store.frontmatter import dump_yaml

        self.project.mkdir(parents=True, exist_ok=True)
        for key, value in ((envvars.HOME, str(self.root / "global-store")), (envvars.WARM_HELPER, "0")):
            self._saved_env[key] = os.environ.get(key)
            os.environ[key] = value
        self._saved_spawn = jobs.request_learning
        jobs.request_learning = lambda store: False   # the learner runs in-process below, with the sim judge
        ids = random.Random("ids|" + self.tag)    # reproducible node and episode ids: same seed, same run
        self._saved_hex = model._random_hex
        model._random_hex = lambda chars: "".join(ids.choice("0123456789abcdef") for _ in range(chars))
        self._saved_now = model._utcnow
        if self.clock is not None:
            model._utcnow = self.clock
        self.layers = Layers.discover(self.project)
        self.layers.init_project()
        # the simulated user's own config (the global store's): it chooses the backend, which a project file cannot
        own = self.layers.writable(model.Scope.GLOBAL)
        own.config_path.write_text(dump_yaml(self.config), encoding="utf-8")
        if self.seed_lessons:
            self.seed(self.families)
        return self

    def __exit__(self, *exc: object) -> None:
        import rose.learn.jobs as jobs

        if self.layers is not None:
            self.layers.close()
        jobs.request_learning = self._saved_spawn
        model._random_hex = self._saved_hex
        model._utcnow = self._saved_now
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    @property
    def store(self):
        return self.layers.project

    def seed(self, families: list[str] | None = None) -> list[Node]:
        """Each family's level-0 lesson, as a reflection would have written it in an earlier session."""
        nodes = []
        for fam in self.world.families:
            if families is not None and fam.name not in families:
                continue
            nodes.append(Node(id=self.store.new_id(), family=fam.name, title=fam.title, body=fam.lesson_body(),
                              gist=fam.core.terse, tags=list(fam.tags), origin=Origin.REFLECTION,
                              importance=0.7))
        self.store.save_many(nodes)
        return nodes

    # -- one session -------------------------------------------------------------------------------------------
    def _hook(self, event: str, data: dict[str, Any]) -> dict[str, Any]:
        from rose.hooks.entry import run

        out = io.StringIO()
        run([self.agent, event], io.BytesIO(json.dumps(data).encode()), out, cwd=self.project)
        return load_json(out.getvalue() or "{}")

    def _judge(self, store, settings):
        from rose.judge import Judge

        return Judge(self.backend, events_path=store.events_path)

    def session_id(self, n: int) -> str:
        """The id session `n` runs under (held-out membership is a function of it)."""
        return f"sim-{self.tag}-{n:04d}"

    def run(self, task: Task) -> SessionResult:
        from rose.learn.learner import run_queue

        self.n += 1
        sid = self.session_id(self.n)
        transcript = self.root / "transcripts" / f"{sid}.jsonl"
        base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(self.project)}
        started = time.perf_counter()
        out = self._hook("UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": task.prompt})
        recall_ms = (time.perf_counter() - started) * 1000
        block = (out.get("hookSpecificOutput") or {}).get("additionalContext", "")
        attempt = act(self.world, task, block)
        write_session(self.world, attempt, transcript, sid, str(self.project), block, correct=self.correct)
        self._hook("SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
        done = run_queue(self.store, judge_factory=self._judge)
        result = SessionResult(self.n, task, sid, block, out.get("systemMessage", ""), attempt,
                               [r.detail for r in done], recall_ms)
        self.results.append(result)
        return result

    # -- measurement -------------------------------------------------------------------------------------------
    def nodes(self) -> list[Node]:
        self.store.sync()
        return list(self.store.iter_nodes())

    def measure(self) -> Measure:
        from rose.compress.graph import base_body

        nodes = self.nodes()
        by_id = {n.id: n for n in nodes}
        servable = [n for n in nodes if n.status in model.SERVABLE]

        def root(n: Node) -> Node:
            seen = n
            while seen.derived_from and seen.origin is Origin.COMPRESSION and seen.derived_from[0] in by_id:
                seen = by_id[seen.derived_from[0]]
            return seen
        ratios: dict[int, list[float]] = {}
        for n in nodes:
            base = root(n)
            if n.origin is Origin.COMPRESSION and base.level == 0:   # a chain of compressions down to level 0
                ratios.setdefault(n.level, []).append(estimate(base_body(n.body)) / max(estimate(base.body), 1))
        rescues = repairs = 0
        from rose.store import events

        for ev in events.read(self.store.events_path, kind="update"):
            if ev.get("stage") == "descent" and ev.get("action") == "rescued":
                rescues += 1
            if ev.get("stage") == "repair":
                repairs += len(ev.get("folded") or [])
        evaluated = [n for n in nodes if n.heldout_total]
        return Measure(
            levels=dict(sorted(Counter(n.level for n in servable).items())),
            statuses=dict(sorted(Counter(n.status.value for n in nodes).items())),
            store_tokens=sum(estimate(n.body) for n in servable),
            level_ratio={lvl: sum(v) / len(v) for lvl, v in sorted(ratios.items())},
            descents=sum(n.stats.expansions for n in nodes),
            rescues=rescues, repairs=repairs,
            gaps=sum(len(n.gaps) for n in nodes),
            heldout_passed=sum(n.heldout_passed for n in evaluated),
            heldout_total=sum(n.heldout_total for n in evaluated),
            demoted=sum(1 for n in nodes if n.status is Status.DEMOTED),
            merges=sum(1 for n in nodes if n.origin is Origin.MERGE),
        )


@contextlib.contextmanager
def simulation(root: Path, **kwargs: Any):
    with Simulation(root, **kwargs) as sim:
        yield sim
