"""`rose demo`: rose on a throwaway store, offline and in seconds, through the same commands a user runs.

It never touches the user's own stores: the demo gets a temporary project folder and a temporary global store.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TextIO

DEMO_LESSONS = [
    ("Retry idempotent remote calls with exponential backoff: 100ms, 400ms, 1.6s, jitter ±25%. Never retry a POST "
     "that is not idempotent.", "retry", "http,retry"),
    ("S3 returns HTTP 200 with an error document for some failures: parse the body, not just the status code.",
     "retry", "s3,http"),
    ("Run the integration tests with `pytest -m integration`; they need the local Postgres on port 5433.",
     "testing", "pytest,postgres"),
    ("Cache TTLs: user profiles 5 min, feature flags 30 s. A longer flag TTL made a rollback take 10 minutes.",
     "cache", "cache,ttl"),
]


def run_demo(keep: bool, out: TextIO) -> int:
    from rose.cli import main as rose

    workdir = Path(tempfile.mkdtemp(prefix="rose-demo-"))
    project = workdir / "project"
    project.mkdir()
    saved = os.environ.get("ROSE_HOME")
    os.environ["ROSE_HOME"] = str(workdir / "global-store")
    try:
        def step(title: str, *argv: str) -> int:
            print(f"\n$ rose {' '.join(argv)}    # {title}", file=out, flush=True)
            return rose([*argv, "--cwd", str(project)])

        step("create a project store", "init")
        for text, family, tags in DEMO_LESSONS:
            step("teach a lesson by hand", "add", text, "--family", family, "--tags", tags)
        step("a lesson for every project", "add", "Prefer `uv` over pip for new Python projects.",
             "--scope", "global", "--tags", "python")
        step("what is wired and what works", "doctor")
        step("what the store holds", "status")
        step("the lesson graph", "tree")
        step("what an agent finds when it searches", "search", "flaky", "s3", "upload")
        if keep:
            print(f"\ndemo store kept at {project / '.rose'} (global: {workdir / 'global-store'})", file=out)
        return 0
    finally:
        if saved is None:
            os.environ.pop("ROSE_HOME", None)
        else:
            os.environ["ROSE_HOME"] = saved
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)
