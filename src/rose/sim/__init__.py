"""The simulated knowledge world, where compress -> fail -> descend -> rescue -> repair genuinely executes.

    world.py     facts (recognised by a verbatim key), families, level-0 lessons, tasks that need facts
    agent.py     the simulated agent: succeeds iff the served block states every fact its task needs; writes a
                 transcript in Claude Code's format
    backend.py   the `sim` judge backend answering every call by simulation (with configurable faults)
    driver.py    whole sessions through the real hooks and the real learner, and measurements of the store
    mining.py    a simulated miner: lessons of varying quality (useful, useless, wrong, near-duplicate orientation)
                 minted from each session, and the retention calls answered by the world's facts

Used by the tests (tests/compress, tests/retention), the benchmarks (bench/bench_compression.py,
bench/bench_retention.py) and `rose demo`.
`register()` makes `agent.backend: sim` available in this process; importing does not register anything.
"""
from __future__ import annotations

from rose.sim.backend import SimBackend, SimConfig, register
from rose.sim.driver import Measure, SessionResult, Simulation
from rose.sim.world import Fact, Family, Task, World, default_world

__all__ = ["Fact", "Family", "Measure", "SessionResult", "SimBackend", "SimConfig", "Simulation", "Task", "World",
           "default_world", "register"]
