"""The inspection commands run in their own process (no warm helper) define no dataclass: their records are
rose.typedrecord.Record, which generates no code, so `dataclasses` and the `inspect` it imports stay unloaded
(about a fifth of such a command's imports, docs/benchmarks.md "Inspection commands without the helper"); and
`typing` too (annotations under TYPE_CHECKING, rose.typedrecord.NamedTuple for the rows a command reads), `rose
doctor` included; and doctor loads neither hashlib nor tomllib (~8 and ~15 ms) where no config is pinned and no
Codex config is there to read."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_rose

# Run as `rose` itself (rose.launcher.main), helper off; the check runs in that process once the command is done.
_LEAN_COMMAND = """
import sys
argv = sys.argv[1:]
sys.argv = ["rose", *argv]
import rose.launcher
def returned(code):   # a read-only command ends the process itself (launcher._end): the check must run first
    raise SystemExit(code)
rose.launcher._end = returned
try:
    code = rose.launcher.main()
except SystemExit as exit:
    code = exit.code
heavy = ("dataclasses", "inspect", "typing") + (("hashlib", "tomllib") if argv[0] == "doctor" else ())
problems = [name + " loaded" for name in heavy if name in sys.modules]
sys.stderr.write("; ".join(problems))
sys.exit(3 if problems else code)
"""


@pytest.fixture
def stocked(project: Path) -> tuple[Path, str]:
    from tests.support.gen_store import populate

    populate(project / ".rose", 40).close()
    assert run_rose("index", cwd=project).returncode == 0
    lesson = sorted((project / ".rose" / "nodes").rglob("n_*.md"))[0].stem
    return project, lesson


@pytest.mark.parametrize("command", [["status"], ["list"], ["tree"], ["tree", "--json"], ["conflicts"], ["show"],
                                     ["credit"], ["evolution"], ["list", "--json"], ["status", "--json"],
                                     ["doctor"]])
def test_an_inspection_command_in_its_own_process_loads_no_dataclasses(stocked: tuple[Path, str],
                                                                     command: list[str]) -> None:
    project, lesson = stocked
    argv = [*command, lesson] if command == ["show"] else command
    out = subprocess.run([sys.executable, "-c", _LEAN_COMMAND, *argv], cwd=project, capture_output=True, text=True,
                         env={**os.environ, "ROSE_WARM_HELPER": "0"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip(), "the command printed nothing"
