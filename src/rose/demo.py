"""`rose demo`: rose's main job on a throwaway store, offline and in seconds.

A scripted series of coding sessions in the simulated world (rose.sim), each one through the real hook entry
points (UserPromptSubmit recalls and injects; SessionEnd queues the learner) and the real learner, run in-process
with the simulated judge. It shows what a user would see (the notice line of every prompt) and what rose does with
it: lessons earning shorter forms validated by replay, a short form failing and descent recovering the detail it
dropped, the recovered detail sticking and then folding back in, a knowledge gap, two lessons merged, and the
tokens injected per session falling.

Nothing outside a temporary folder is touched: the project store and the global store (ROSE_HOME) both live in it,
and it is deleted afterwards unless `keep` is set.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path
from typing import TextIO

FAMILIES = ["retry", "testing", "database"]
BAR_WIDTH = 44


class _Printer:
    def __init__(self, out: TextIO):
        self.out = out

    def __call__(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def section(self, title: str) -> None:
        self()
        self(f"== {title} " + "=" * max(0, 76 - len(title)))


def run_demo(keep: bool, out: TextIO) -> int:
    from rose.sim import SimBackend, SimConfig, Simulation, default_world

    say = _Printer(out)
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="rose-demo-"))
    world = default_world()
    backend = SimBackend(world, SimConfig(seed=5))
    backend.schedule("compress", "under_report")   # the first candidate "forgets" to declare what it dropped
    try:
        with Simulation(workdir, world=world, backend=backend, families=FAMILIES, tag="demo1") as sim:
            _story(sim, say)
            say.section("the token curve (tokens of the whole injected block, per session)")
            _curve(sim, say)
            say.section("$ rose status")
            from rose import render, report

            assert sim.layers is not None  # set by Simulation.__enter__
            say(render.status(report.status(sim.layers)))
        say()
        say(f"demo finished in {time.monotonic() - started:.1f}s: {sim.n} sessions through the real hooks and "
            "learner, every judgement simulated offline (rose.sim).")
        if keep:
            home = sim.root / "global-store"   # the demo's own: this machine's record of the project is under it
            say(f"store kept at {sim.project / '.rose'}  (try: ROSE_HOME={home} rose view --cwd {sim.project})")
        return 0
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _session(sim, say, task, note: str = "") -> object:
    result = sim.run(task)
    mark = "ok  " if result.success else "FAIL"
    say(f"#{result.n:02d} {mark} {task.prompt}" + (f"   <- {note}" if note else ""))
    if result.notice:
        say(f"     {result.notice}")
    for detail in result.learner:
        for part in detail.split("; "):
            if part.startswith("episode ") or part.startswith("minted 0, rejected 0"):
                continue   # every session records an episode; the seeded world mints nothing new
            say(f"     learner: {part}")
    return result


def _task(sim, family: str, *keys: str, kind: str = "family"):
    fam = sim.world.family(family)
    return sim.world.task(family, [fam.core.key, *keys], 100 + sim.n + 1, kind)


def _apex(sim, family: str):
    from rose.model import SERVABLE, Origin

    return next(n for n in sim.nodes() if n.family == family and n.origin is not Origin.MERGE
                and n.status in SERVABLE)


def _tree(sim, say, family: str | None = None) -> None:
    """The graph as it stands: levels, size, status, the manifest (facts it dropped, sticky patches, detail under
    trial), held-out results and gaps. `rose tree` prints the full manifests."""
    from rose import report
    from rose.compress.graph import base_body
    from rose.model import SERVABLE
    from rose.tokens import estimate

    nodes = {n.id: n for n in sim.nodes()}
    for line in report.tree(sim.layers, family=family):
        node = nodes.get(line.id)
        if node is None:
            continue
        pad = "  " * line.depth + ("\u2514\u2500 " if line.depth else "")
        status = "" if line.status == "active" else f" [{line.status}]"
        if line.repeat:
            say(f"{pad}L{line.level} {line.id} (see above)")
            continue
        extra = [f"{estimate(base_body(node.body))} tok"]
        if node.dropped:
            extra.append(f"manifest {len(node.dropped)} claims")
        if node.heldout_total:
            extra.append(f"held-out {node.heldout_passed}/{node.heldout_total}")
        if node.gaps:
            extra.append(f"{len(node.gaps)} knowledge gap")
        say(f"{pad}L{line.level} {line.id} {line.family}/{line.title}{status}  ({', '.join(extra)})")
        if line.depth or node.status not in SERVABLE:
            continue
        inner = "  " * (line.depth + 2)
        for claim in node.dropped:
            if claim.rescues:
                say(f"{inner}sticky patch ({claim.rescues} rescues): {claim.claim}")
            elif claim.kind.value not in ("rationale", "example"):
                say(f"{inner}dropped {claim.kind.value} (held by {claim.holder}): {claim.claim}")
        for trial in node.trials:
            say(f"{inner}under trial after a failure ({trial.strategy}): {' / '.join(trial.attached)}")


def _story(sim, say) -> None:
    from rose.compress.graph import base_body

    retry = sim.world.family("retry")
    common = retry.facts[0].key
    say("rose demo: a simulated project with three lessons rose learned earlier (retry, testing, database).")
    say("Each line is one coding session: the prompt, what rose injected, and what the detached learner did after.")
    say.section("the store before any work")
    _tree(sim, say)

    say.section("usage earns a smaller form (validated by replaying past episodes)")
    for _ in range(4):
        _session(sim, say, _task(sim, "retry", common))
    for _ in range(2):
        _session(sim, say, _task(sim, "retry", common, retry.facts[1].key))
    _tree(sim, say, "retry")

    apex = _apex(sim, "retry")
    dropped = [k for c in apex.dropped for k in sim.world.keys_in(c.claim) if k not in base_body(apex.body)]
    rare = dropped[-1] if dropped else retry.facts[-1].key
    say.section("a short form fails; descent recovers the detail it dropped")
    say(f"(the next tasks need \u201c{rare}\u201d, which the level-{apex.level} form dropped and declared)")
    _session(sim, say, _task(sim, "retry", rare), "the short form lacks it")
    _tree(sim, say, "retry")
    _session(sim, say, _task(sim, "retry", rare), "the detail under trial is served")
    for _ in range(2):
        _session(sim, say, _task(sim, "retry", rare), "now a sticky patch")
    _tree(sim, say, "retry")

    say.section("a failure nothing below explains is a knowledge gap, not a compression bug")
    _session(sim, say, _task(sim, "retry", retry.gap.key, kind="gap"))

    say.section("lessons used together earn a shared parent (merge)")
    say("(a parent pays only where a selector chooses, in a store past the recall budget; this one is served whole, "
        "so the demo makes the merge anyway, to show it)")
    from rose.compress import Stages, only
    from rose.sim.world import PORT_5433

    t, d = sim.world.family("testing"), sim.world.family("database")
    with only(Stages(merge_always=True)):
        for _ in range(5):
            _session(sim, say, sim.world.task("testing", [t.core.key, d.core.key, PORT_5433.key], 100 + sim.n + 1,
                                              "cross"))
    say.section("the store after the sessions")
    _tree(sim, say)


def _curve(sim, say) -> None:
    results = sim.results
    top = max((r.tokens for r in results), default=1) or 1
    first = results[0].tokens if results else 0
    for r in results:
        bar = "#" * max(1, round(BAR_WIDTH * r.tokens / top))
        say(f"#{r.n:02d} {r.tokens:5d} tok {bar}")
    if results:
        low = min(r.tokens for r in results)
        say(f"first session {first} tokens, lowest {low} ({low / max(first, 1):.0%}); "
            f"{sum(r.success for r in results)}/{len(results)} sessions succeeded")
