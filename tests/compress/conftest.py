"""Fixtures for compression and descent: the simulated world, driven through the real hooks and learner."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.judge.backends import base
from rose.sim import SimBackend, SimConfig, Simulation, default_world


@pytest.fixture
def sim_registered(monkeypatch: pytest.MonkeyPatch):
    """`agent.backend: sim` for this test only (the registry is global; tests/judge expects it unregistered)."""
    monkeypatch.setattr(base, "_FACTORIES", dict(base._FACTORIES))
    from rose.sim import register

    register()


def make_sim(tmp_path: Path, *, families=("retry",), config=None, faults=None, **backend_config) -> Simulation:
    world = default_world()
    backend = SimBackend(world, SimConfig(**backend_config))
    cfg = {"compression": {"heldout_fraction": 0.0}}
    for section, values in (config or {}).items():
        cfg.setdefault(section, {}).update(values)
    return Simulation(tmp_path / "sim", world=world, backend=backend, config=cfg, families=list(families))


@pytest.fixture
def sim(tmp_path: Path, sim_registered):
    with make_sim(tmp_path) as s:
        yield s
