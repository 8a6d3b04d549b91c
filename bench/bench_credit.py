"""Knowing what helps, measured: the decision code under seeded simulation, and a harmful lesson in the simulated world.

    .venv/bin/python bench/bench_credit.py                  # both parts (a few minutes on two cores)
    .venv/bin/python bench/bench_credit.py --decisions      # part 1 only
    .venv/bin/python bench/bench_credit.py --world          # part 2 only
    .venv/bin/python bench/bench_credit.py --write-doc      # both, and rewrite docs/benchmarks-credit.md

Part 1 runs the runtime's own decision functions (rose.credit.decide, rose.evolve.decide; nothing here re-implements
a rule) over seeded simulated sessions, with the default settings:

    lesson credit   every session the lesson would be served, it is withheld with the default rate (never twice in a
                    row); the session succeeds with the served or the withheld arm's pass rate; the verdict is read
                    after every sample, until it is final or the withheld arm reaches max_withheld
    evolution       every matched session is randomized half and half; the session passes with its arm's rate and
                    makes a lognormal number of API calls (the same in both arms); the trial is judged after every
                    treatment sample, until a decision or max_trial_uses

For an effect of zero at base pass rates 0.5-0.95 it reports how often a lesson is flagged harmful (or a behaviour
promoted); for one that lowers the pass rate from 0.85 to 0.70, how often it is caught and within how many sessions.

Part 2 plants a harmful lesson among the five good ones of the simulated world (rose.sim): it tells the agent to run
the tests with plain pytest and to skip down migrations, so every task that needs the testing or the database
lesson's core fact fails while it is served. Each arm runs the same task stream through the real hooks and the real
learner: with and without the harmful lesson, with withholding on (the default rate) and off. It prints when the
harmful lesson was withdrawn, what else was, and the success rate before and after.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
DOC = ROOT / "docs" / "benchmarks-credit.md"
BASE_RATES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
HARM = (0.85, 0.70)          # (withheld / control pass rate, served / treatment pass rate) of a harmful one
GOOD = (0.70, 0.85)
MAX_SESSIONS = 20000         # a trial that never decides stops here (none reaches it with the defaults)


# -- part 1: the decision code --------------------------------------------------------------------------------------
@dataclass
class Row:
    label: str
    trials: int
    outcomes: dict[str, int] = field(default_factory=dict)
    sessions: list[int] = field(default_factory=list)        # sessions until the decision this row is about

    def share(self, what: str) -> float:
        return self.outcomes.get(what, 0) / self.trials


def credit_trial(rng: random.Random, p_served: float, p_withheld: float) -> tuple[str, int]:
    """One lesson, sessions until a final verdict: (verdict, sessions)."""
    from rose.config import CreditSettings
    from rose.credit.decide import SERVED, WITHHELD, Credit, Rules, Verdict, advance, should_withhold

    cs = CreditSettings()
    rules = Rules(min_samples=cs.min_samples, max_withheld=cs.max_withheld)
    credit, last, suspect = Credit(), None, None
    for session in range(1, MAX_SESSIONS + 1):
        judged_now, suspect = advance(credit, rules, suspect)
        judged = judged_now.verdict
        if judged.final:
            return judged.value, session - 1
        if should_withhold(rng.random(), cs.withhold_rate, last, judged):
            last = WITHHELD
            credit = Credit(credit.served, credit.withheld.add(rng.random() < p_withheld))
        else:
            last = SERVED
            credit = Credit(credit.served.add(rng.random() < p_served), credit.withheld)
    return Verdict.MEASURING.value, MAX_SESSIONS


def evolution_trial(rng: random.Random, p_treatment: float, p_control: float) -> tuple[str, int]:
    """One trial, matched sessions until a decision: (decision, sessions)."""
    from rose.config import EvolutionSettings
    from rose.evolve.decide import CONTROL, ArmStats, Decision, TrialRules, advance_trial, assign_arm

    es = EvolutionSettings()
    rules = TrialRules(min_samples=es.min_samples, max_trial_uses=es.max_trial_uses, noise_margin=es.noise_margin,
                       cost_allowance=es.cost_allowance, cost_per_gain=es.cost_per_gain)
    t, c, pending = ArmStats(), ArmStats(), None
    for session in range(1, MAX_SESSIONS + 1):
        calls = max(1, round(rng.lognormvariate(2.0, 0.5)))   # ~8 API calls a session, the same in both arms
        if assign_arm(rng.random(), False, es.active_control_rate) == CONTROL:
            c = c.add(rng.random() < p_control, calls)
            continue
        t = t.add(rng.random() < p_treatment, calls)
        judged, pending = advance_trial(t, c, rules, pending)
        if judged.decision not in (Decision.CONTINUE, Decision.CONFIRMING):
            return judged.decision.value, session
    return Decision.CONTINUE.value, MAX_SESSIONS


def run_row(kind: str, label: str, p_arm: float, p_base: float, trials: int, seed: int, about: str) -> Row:
    rng = random.Random(f"{seed}|{kind}|{label}")
    trial = credit_trial if kind == "credit" else evolution_trial
    row = Row(label, trials)
    for _ in range(trials):
        outcome, sessions = trial(rng, p_arm, p_base)
        row.outcomes[outcome] = row.outcomes.get(outcome, 0) + 1
        if outcome == about:
            row.sessions.append(sessions)
    return row


def _q(values: list[int], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))]:,}"


def decision_tables(trials: int, seed: int, workers: int) -> str:
    from rose.config import CreditSettings, EvolutionSettings

    jobs = []
    for p in BASE_RATES:
        jobs.append(("credit", f"no effect, pass rate {p:.2f}", p, p, trials, seed, "harmful"))
    jobs.append(("credit", f"harmful: {HARM[0]:.2f} withheld, {HARM[1]:.2f} served", HARM[1], HARM[0], trials, seed,
                 "harmful"))
    jobs.append(("credit", f"helps: {GOOD[0]:.2f} withheld, {GOOD[1]:.2f} served", GOOD[1], GOOD[0], trials, seed,
                 "helps"))
    for p in BASE_RATES:
        jobs.append(("evolution", f"no effect, pass rate {p:.2f}", p, p, trials, seed, "promote"))
    jobs.append(("evolution", f"harmful: control {HARM[0]:.2f}, treatment {HARM[1]:.2f}", HARM[1], HARM[0], trials,
                 seed, "regress"))
    jobs.append(("evolution", f"helps: control {GOOD[0]:.2f}, treatment {GOOD[1]:.2f}", GOOD[1], GOOD[0], trials,
                 seed, "promote"))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = list(pool.map(run_row, *zip(*jobs)))
    credit_rows, evo_rows = rows[:len(BASE_RATES) + 2], rows[len(BASE_RATES) + 2:]
    cs, es = CreditSettings(), EvolutionSettings()
    out = [f"{trials:,} seeded trials per row (seed {seed}).", "",
           f"**Lesson credit** (withhold_rate {cs.withhold_rate}, min_samples {cs.min_samples}, max_withheld "
           f"{cs.max_withheld}; sessions are sessions that would serve the lesson):", "",
           "| lesson | flagged harmful | helps | no effect | sessions to the verdict (median / 90th pct) |",
           "|---|---:|---:|---:|---|"]
    for r in credit_rows:
        about = "harmful" if not r.label.startswith("helps") else "helps"
        out.append(f"| {r.label} | {r.share('harmful'):.1%} | {r.share('helps'):.1%} | {r.share('no effect'):.1%} | "
                   f"{_q(r.sessions, 0.5)} / {_q(r.sessions, 0.9)} ({about}) |")
    out += ["", f"**Evolution trials** (min_samples {es.min_samples}, max_trial_uses {es.max_trial_uses}, noise_margin "
            f"{es.noise_margin}, cost_allowance {es.cost_allowance}; sessions are matched sessions, both arms):", "",
            "| behaviour | promoted | regressed (retired) | inconclusive | sessions to the decision (median / 90th pct) |",
            "|---|---:|---:|---:|---|"]
    for r in evo_rows:
        about = "regressed" if r.label.startswith("harmful") else "promoted"
        out.append(f"| {r.label} | {r.share('promote'):.1%} | {r.share('regress'):.1%} | "
                   f"{r.share('inconclusive'):.1%} | {_q(r.sessions, 0.5)} / {_q(r.sessions, 0.9)} ({about}) |")
    worst_credit = max(r.share("harmful") for r in credit_rows[:len(BASE_RATES)])
    worst_evo = max(r.share("promote") for r in evo_rows[:len(BASE_RATES)])
    harm_c, harm_e = credit_rows[len(BASE_RATES)], evo_rows[len(BASE_RATES)]
    out += ["", f"No effect: flagged harmful in at most {worst_credit:.1%} of trials, promoted in at most "
            f"{worst_evo:.1%} (bound: 5%). Lowering the pass rate from {HARM[0]} to {HARM[1]}: the lesson is caught "
            f"in {harm_c.share('harmful'):.1%} of trials (90% within {_q(harm_c.sessions, 0.9)} sessions that would "
            f"serve it), the behaviour retired as regressed in {harm_e.share('regress'):.1%} (90% within "
            f"{_q(harm_e.sessions, 0.9)} matched sessions) and promoted in {harm_e.share('promote'):.1%} "
            "(bounds: over 90% caught, under 1% promoted)."]
    return "\n".join(out)


# -- part 2: a harmful lesson in the simulated world ----------------------------------------------------------------
@dataclass
class WorldRun:
    arm: str
    seed: int
    sessions: int
    success: list[bool]
    withdrawn: dict[str, int]          # lesson title -> the session after which it was withdrawn
    withheld: int                      # withholdings named on the notice line
    harmful_credit: str = ""


def world_arm(arm: str, harmful: bool, withhold: bool, sessions: int, seed: int, rate: float) -> WorldRun:
    from rose.model import Node, Origin
    from rose.sim import SimBackend, SimConfig, Simulation
    from rose.sim.world import FAST_TESTS, World

    world = World(seed=seed, traps=(FAST_TESTS,) if harmful else ())
    tasks = world.sample_tasks(sessions, seed=seed)
    config = {"compression": {"enabled": False}, "credit": {"withhold_rate": rate if withhold else 0.0}}
    out = WorldRun(arm, seed, sessions, [], {}, 0)
    with tempfile.TemporaryDirectory(prefix="rose-credit-") as tmp, \
            Simulation(Path(tmp), world=world, backend=SimBackend(world, SimConfig(seed=seed)), config=config,
                       tag=f"c{seed}") as sim:
        harm_id = None
        if harmful:   # written like any reflected lesson from an earlier session
            node = Node(id=sim.store.new_id(), family="testing-speed", title=FAST_TESTS.title, body=FAST_TESTS.body,
                        gist=FAST_TESTS.body.splitlines()[0][2:], tags=list(FAST_TESTS.tags),
                        origin=Origin.REFLECTION, importance=0.7)
            sim.store.save(node)
            harm_id = node.id
        titles = {n.id: n.title for n in sim.nodes()}
        live = set(titles)
        for task in tasks:
            result = sim.run(task)
            out.success.append(result.success)
            out.withheld += "withheld to measure" in result.notice
            now = {n.id for n in sim.nodes() if n.status.value in ("active", "disputed")}
            for gone in sorted(live - now):
                out.withdrawn[titles.get(gone, gone)] = sim.n
            live = now
        if harm_id is not None:
            from rose.credit.report import lessons

            for item in lessons(sim.layers):
                if item.id == harm_id:
                    c = item.credit
                    out.harmful_credit = (f"served {c.served.passes}/{c.served.n}, withheld {c.withheld.passes}/"
                                          f"{c.withheld.n}, effect {c.effect:+.2f} ± {c.sd:.2f}")
    return out


WORLD_ARMS = (("good lessons, withholding on", False, True), ("harmful planted, withholding off", True, False),
              ("harmful planted, withholding on", True, True))


def world_table(sessions: int, seeds: list[int], workers: int, rate: float) -> str:
    from rose.sim.world import FAST_TESTS

    jobs = [(name, harmful, withhold, sessions, seed, rate) for seed in seeds for name, harmful, withhold in WORLD_ARMS]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        runs = list(pool.map(world_arm, *zip(*jobs)))
    by = {(r.arm, r.seed): r for r in runs}
    out = [f"{sessions} sessions per arm, seeds {', '.join(map(str, seeds))}; five good lessons (the simulated "
           f"world's) and, where planted, “{FAST_TESTS.title}”, which makes every task that needs the testing or the "
           f"database lesson's core fact fail while it is served. Withholding, where on: credit.withhold_rate {rate}; "
           "every other setting is the default. Compression is off in every arm.", "",
           "| seed | arm | success | withdrawn (after session) | withheld notices | harmful lesson's credit |",
           "|---|---|---:|---|---:|---|"]
    for r in runs:
        gone = ", ".join(f"{t} ({n})" for t, n in r.withdrawn.items()) or "none"
        out.append(f"| {r.seed} | {r.arm} | {sum(r.success) / len(r.success):.1%} | {gone} | {r.withheld} | "
                   f"{r.harmful_credit or '-'} |")
    out += ["", "Before and after the harmful lesson was withdrawn (the same sessions of the arm without withholding, "
            "and of the arm without the harmful lesson, for comparison):", "",
            "| seed | withdrawn after session | good lessons withdrawn | success before: with withholding / without / "
            "no harmful lesson | success after: with withholding / without / no harmful lesson |",
            "|---|---:|---|---|---|"]
    found = []
    for seed in seeds:
        on = by[("harmful planted, withholding on", seed)]
        off = by[("harmful planted, withholding off", seed)]
        clean = by[("good lessons, withholding on", seed)]
        n = on.withdrawn.get(FAST_TESTS.title)
        others = [t for t in on.withdrawn if t != FAST_TESTS.title]
        if n is None:
            out.append(f"| {seed} | not within {sessions} | {', '.join(others) or 'none'} | - | - |")
            continue
        found.append(n)

        def rate(run: WorldRun, a: int, b: int) -> str:
            part = run.success[a:b]
            return f"{sum(part) / len(part):.1%}" if part else "-"
        out.append(f"| {seed} | {n} | {', '.join(others) or 'none'} | {rate(on, 0, n)} / {rate(off, 0, n)} / "
                   f"{rate(clean, 0, n)} | {rate(on, n, sessions)} / {rate(off, n, sessions)} / "
                   f"{rate(clean, n, sessions)} |")
    if found:
        out += ["", f"N: the harmful lesson was withdrawn after {', '.join(map(str, found))} sessions "
                f"(median {statistics.median(found):.0f}) in {len(found)} of {len(seeds)} seeds."]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--decisions", action="store_true", help="part 1 only")
    ap.add_argument("--world", action="store_true", help="part 2 only")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--sessions", type=int, default=600)
    ap.add_argument("--seeds", default="7,8,9")
    ap.add_argument("--rate", type=float, default=0.1, help="credit.withhold_rate in the world's withholding arms")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--write-doc", action="store_true", help=f"rewrite the tables in {DOC.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    both = not args.decisions and not args.world
    parts = []
    started = time.monotonic()
    if args.decisions or both:
        text = decision_tables(args.trials, args.seed, args.workers)
        print(text + "\n", flush=True)
        parts.append(("### The decision code under simulation", text))
    if args.world or both:
        text = world_table(args.sessions, [int(s) for s in args.seeds.split(",")], args.workers, args.rate)
        print(text + "\n", flush=True)
        parts.append(("### A harmful lesson in the simulated world", text))
    print(f"wall time {time.monotonic() - started:.0f}s")
    if args.write_doc:
        write_doc(parts, args)
    return 0


def write_doc(parts: list[tuple[str, str]], args: argparse.Namespace) -> None:
    marker = "<!-- tables: generated by bench/bench_credit.py --write-doc -->"
    doc = DOC.read_text(encoding="utf-8") if DOC.exists() else marker + "\n"
    head, _sep, _old = doc.partition(marker)
    command = "python bench/bench_credit.py --write-doc" + \
        ("" if args.trials == 1000 else f" --trials {args.trials}") + \
        ("" if args.sessions == 600 else f" --sessions {args.sessions}") + \
        ("" if args.seeds == "7,8,9" else f" --seeds {args.seeds}") + \
        ("" if args.rate == 0.1 else f" --rate {args.rate}")
    body = "\n\n".join(f"{title}\n\n{text}" for title, text in parts)
    DOC.write_text(f"{head}{marker}\n\n`{command}`, {time.strftime('%Y-%m-%d')}:\n\n{body}\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
