"""Compression and descent, measured in the simulated world: does usage make memory cheaper without losing success?

    .venv/bin/python bench/bench_compression.py                 # 300 sessions, 3 phases, the table
    .venv/bin/python bench/bench_compression.py --sessions 600 --phases 4 --seed 3
    .venv/bin/python bench/bench_compression.py --clean         # no simulated compressor / judge faults
    .venv/bin/python bench/bench_compression.py --write-doc     # both, and rewrite docs/benchmarks-compression.md

Every arm runs the same task stream through the real hooks and the real learner (rose.sim.driver), each in its own
process and throwaway store:

    no memory        nothing is stored or served
    verbatim         the seeded lessons, served as they are (no compression, no descent, no merge)
    no descent       compression (with replay and held-out) but a failing short form is never repaired
    rose             compression, descent, repair and merge: the whole of stages 5 and 6

Per phase: tokens injected per task (the whole block), success rate, the level mix of what is served at the end of
the phase, descents opened and rescues credited during it, and the held-out pass rate of everything accepted so far.
The spec expects ~75% / 55% / 40% of the original's tokens at levels 1 / 2 / 3 with no loss of success; the last
table reports what the lessons reached.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

ARMS = ("no memory", "verbatim", "no descent", "rose")
FAULTS = {"under_report": 0.2, "lose_needed": 0.15, "silent_drop": 0.1, "unreadable": 0.03, "overgeneralise": 0.2,
          "judge_noise": 0.1}
DOC = ROOT / "docs" / "benchmarks-compression.md"


@dataclass
class Phase:
    sessions: int = 0
    tokens: float = 0.0
    success: float = 0.0
    levels: dict[int, int] = field(default_factory=dict)
    descents: int = 0
    rescues: int = 0
    heldout: str = "-"
    demoted: int = 0
    gaps: int = 0
    learner_tokens: float = 0.0   # per task: input + output tokens of the learner's model calls in the phase
    calls: float = 0.0            # per task: the learner's model calls

    @property
    def total_tokens(self) -> float:
        return self.tokens + self.learner_tokens


@dataclass
class ArmResult:
    arm: str
    phases: list[Phase]
    level_ratio: dict[int, float]
    merges: int
    seconds: float
    calls: dict[str, int]
    fired: dict[str, int]
    stages: dict[str, tuple[int, int]] = field(default_factory=dict)   # stage -> (learner tokens, calls), whole run


def run_arm(arm: str, sessions: int, phases: int, seed: int, clean: bool) -> ArmResult:
    from rose.compress import Stages, only
    from rose.sim import SimBackend, SimConfig, Simulation, default_world

    world = default_world(seed)
    tasks = world.sample_tasks(sessions, seed=seed)
    faults = {} if clean else FAULTS
    backend = SimBackend(world, SimConfig(seed=seed, **faults))
    # withholding is off here: it measures lessons, not compression (bench/bench_credit.py measures it)
    config = {"compression": {"enabled": arm not in ("verbatim", "no memory")}, "credit": {"withhold_rate": 0}}
    stages = {"no memory": Stages(False, False, False), "verbatim": Stages(False, False, False),
              "no descent": Stages(True, False, True), "rose": Stages()}[arm]
    started = time.monotonic()
    out: list[Phase] = []
    with tempfile.TemporaryDirectory(prefix="rose-bench-") as tmp, only(stages), \
            Simulation(Path(tmp), world=world, backend=backend, config=config, seed_lessons=arm != "no memory",
                       tag=f"b{seed}") as sim:
        size = max(1, sessions // phases)
        before = sim.measure()
        spent = learner_spend(sim)
        for p in range(phases):
            chunk = tasks[p * size: (p + 1) * size if p < phases - 1 else sessions]
            results = [sim.run(t) for t in chunk]
            after = sim.measure()
            now = learner_spend(sim)
            out.append(Phase(
                sessions=len(results), tokens=statistics.mean(r.tokens for r in results),
                success=sum(r.success for r in results) / len(results), levels=after.levels,
                descents=after.descents - before.descents, rescues=after.rescues - before.rescues,
                heldout=(f"{after.heldout_rate:.0%} ({after.heldout_passed}/{after.heldout_total})"
                         if after.heldout_total else "-"),
                demoted=after.demoted, gaps=after.gaps,
                learner_tokens=(now[0] - spent[0]) / len(results), calls=(now[1] - spent[1]) / len(results)))
            before, spent = after, now
        final = sim.measure()
        by_stage = stage_spend(sim)
    return ArmResult(arm, out, final.level_ratio, final.merges, time.monotonic() - started,
                     dict(sorted(backend.calls.counts.items())), dict(sorted(backend.fired.items())), by_stage)


def learner_spend(sim) -> tuple[int, int]:
    """(tokens, calls) of every model call the learner made so far, from the judge's own accounting events."""
    from rose.store import events

    tokens = calls = 0
    for ev in events.read(sim.store.events_path, kind="judge"):
        if ev.get("cached") or ev.get("stage") == "recall":
            continue
        calls += 1
        tokens += int(ev.get("input_tokens") or 0) + int(ev.get("output_tokens") or 0)
    return tokens, calls


def stage_spend(sim) -> dict[str, tuple[int, int]]:
    """Per learner stage: (tokens, calls), from the same judge events as `learner_spend`."""
    from rose.store import events

    out: dict[str, tuple[int, int]] = {}
    for ev in events.read(sim.store.events_path, kind="judge"):
        if ev.get("cached") or ev.get("stage") == "recall":
            continue
        stage = str(ev.get("stage") or "other")
        tokens, calls = out.get(stage, (0, 0))
        out[stage] = (tokens + int(ev.get("input_tokens") or 0) + int(ev.get("output_tokens") or 0), calls + 1)
    return dict(sorted(out.items()))


def stage_table(results: list[ArmResult]) -> str:
    """Learner tokens per task by stage (calls per task in brackets), over the whole run."""
    stages = sorted({s for r in results for s in r.stages})
    lines = ["| arm | " + " | ".join(stages) + " |", "|---|" + "---:|" * len(stages)]
    for r in results:
        n = sum(ph.sessions for ph in r.phases) or 1
        cells = [f"{r.stages[s][0] / n:.0f} ({r.stages[s][1] / n:.2f})" if s in r.stages else "-" for s in stages]
        lines.append(f"| {r.arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cost_table(results: list[ArmResult]) -> str:
    """Tokens per task, pack plus learner, per phase and over the whole run."""
    lines = ["| phase | arm | pack tokens / task | learner tokens / task | learner calls / task | total tokens / task |"
             " success |", "|---|---|---:|---:|---:|---:|---:|"]
    for p in range(len(results[0].phases)):
        for r in results:
            ph = r.phases[p]
            lines.append(f"| {p + 1} | {r.arm} | {ph.tokens:.0f} | {ph.learner_tokens:.0f} | {ph.calls:.1f} | "
                         f"{ph.total_tokens:.0f} | {ph.success:.0%} |")
    for r in results:
        n = sum(ph.sessions for ph in r.phases)
        total = sum(ph.total_tokens * ph.sessions for ph in r.phases) / n
        pack = sum(ph.tokens * ph.sessions for ph in r.phases) / n
        learner = sum(ph.learner_tokens * ph.sessions for ph in r.phases) / n
        calls = sum(ph.calls * ph.sessions for ph in r.phases) / n
        success = sum(ph.success * ph.sessions for ph in r.phases) / n
        lines.append(f"| all | {r.arm} | {pack:.0f} | {learner:.0f} | {calls:.1f} | {total:.0f} | {success:.0%} |")
    return "\n".join(lines)


def table(results: list[ArmResult]) -> str:
    lines = ["| phase | arm | tokens / task | success | levels served (end of phase) | descents | rescues | "
             "held-out pass | demoted | gaps |", "|---|---|---:|---:|---|---:|---:|---|---:|---:|"]
    phases = len(results[0].phases)
    start = 1
    for p in range(phases):
        n = results[0].phases[p].sessions
        label = f"{p + 1} (sessions {start}-{start + n - 1})"
        start += n
        for r in results:
            ph = r.phases[p]
            levels = ", ".join(f"L{k} {v}" for k, v in ph.levels.items()) or "-"
            lines.append(f"| {label} | {r.arm} | {ph.tokens:.0f} | {ph.success:.0%} | {levels} | {ph.descents} | "
                         f"{ph.rescues} | {ph.heldout} | {ph.demoted} | {ph.gaps} |")
    return "\n".join(lines)


def ratio_table(results: list[ArmResult]) -> str:
    expected = {1: "75%", 2: "55%", 3: "40%"}
    levels = sorted({lvl for r in results for lvl in r.level_ratio})
    lines = ["| level | spec expects | " + " | ".join(r.arm for r in results if r.level_ratio) + " |",
             "|---|---|" + "---|" * sum(1 for r in results if r.level_ratio)]
    for lvl in levels:
        cells = [f"{r.level_ratio[lvl]:.0%}" if lvl in r.level_ratio else "-" for r in results if r.level_ratio]
        lines.append(f"| L{lvl} | {expected.get(lvl, '-')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run(sessions: int, phases: int, seed: int, clean: bool, serial: bool) -> str:
    started = time.monotonic()
    jobs = [(arm, sessions, phases, seed, clean) for arm in ARMS]
    if serial:
        results = [run_arm(*job) for job in jobs]
    else:
        with ProcessPoolExecutor(max_workers=len(jobs)) as pool:
            results = list(pool.map(run_arm, *zip(*jobs)))
    faults = "none" if clean else ", ".join(f"{k} {v}" for k, v in FAULTS.items())
    head = f"{sessions} sessions, {phases} phases, seed {seed}, 5 families of facts; simulated faults: {faults}"
    body = [head, "", table(results), "", "Tokens of a compressed lesson as a share of its level-0 original "
            "(mean over every compression accepted, all statuses):", "", ratio_table(results), "",
            "Tokens per task, what the packs carried plus what the learner's model calls spent (input and output, "
            "as the simulated backend reports them; the same accounting `rose status` reads):", "",
            cost_table(results), "",
            "Learner tokens per task by stage (calls per task), the whole run:", "", stage_table(results), "",
            "Merges accepted: " + ", ".join(f"{r.arm} {r.merges}" for r in results),
            "Model calls (simulated): " + "; ".join(f"{r.arm}: {sum(r.calls.values())}" for r in results),
            "Faults injected: " + "; ".join(f"{r.arm}: " + (", ".join(f"{k} {v}" for k, v in r.fired.items()) or "none")
                                            for r in results if r.arm in ("no descent", "rose")),
            f"Wall time: {time.monotonic() - started:.0f}s ("
            + ", ".join(f"{r.arm} {r.seconds:.0f}s" for r in results) + ")"]
    return "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--phases", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--clean", action="store_true", help="no simulated compressor or judge faults")
    ap.add_argument("--serial", action="store_true", help="run the arms one after another (default: in parallel)")
    ap.add_argument("--write-doc", action="store_true",
                    help=f"run with and without faults and rewrite the tables in {DOC.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    runs = [args.clean] if not args.write_doc else [False, True]
    texts = []
    for clean in runs:
        text = run(args.sessions, args.phases, args.seed, clean, args.serial)
        print(text + "\n")
        texts.append(text)
    if args.write_doc:
        write_doc(texts, args)
    return 0


def write_doc(texts: list[str], args: argparse.Namespace) -> None:
    marker = "<!-- tables: generated by bench/bench_compression.py --write-doc -->"
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else marker + "\n"
    head, _sep, _old = doc.partition(marker)
    command = "python bench/bench_compression.py --write-doc" + \
        ("" if args.sessions == 300 else f" --sessions {args.sessions}") + \
        ("" if args.phases == 3 else f" --phases {args.phases}") + ("" if args.seed == 7 else f" --seed {args.seed}")
    titles = ["### With simulated faults (the default run)", "### Without faults (`--clean`)"]
    parts = [f"{title}\n\n{text}" for title, text in zip(titles, texts)]
    DOC.write_text(f"{head}{marker}\n\n`{command}`, {time.strftime('%Y-%m-%d')}:\n\n" + "\n\n".join(parts) + "\n",
                   encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
