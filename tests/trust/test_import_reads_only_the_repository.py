"""`rose import .` in a fresh clone reads the repository's rule files (CLAUDE.md, AGENTS.md, .cursor/rules/*.mdc)
into the project's lessons, which the user then commits. git commits symlinks: a rule file linked to a file outside
the repository (a private note, another project's CLAUDE.md) or a `.cursor` folder linked elsewhere would copy
that file into lessons the user pushes; a link to /dev/zero read until memory ran out, a FIFO never ended the
command. A rule file found in the repository is read only as a regular file inside it, within the size of a
record; one the user names outside the repository is theirs to name (a dotfile link included)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_rose

PRIVATE = "# Private notes\n\n- The staging database password rotates on Fridays; ask Dana in person\n"


def _every_byte_under(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _import(repo: Path, *args: str) -> dict:
    done = run_rose("import", *args, "--json", cwd=repo, env={"ROSE_AGENT_BACKEND": "none"}, timeout=120)
    return json.loads(done.stdout)


def test_a_rule_file_linked_out_of_the_repository_is_never_imported(project: Path, tmp_path: Path) -> None:
    assert run_rose("init", cwd=project).returncode == 0
    outside = tmp_path / "home" / "private"
    (outside / "rules").mkdir(parents=True)
    (outside / "notes.md").write_text(PRIVATE)
    (outside / "rules" / "db.mdc").write_text(PRIVATE)
    (project / "CLAUDE.md").symlink_to(outside / "notes.md")
    (project / ".cursor").symlink_to(outside)                   # .cursor/rules/db.mdc: a folder link on the way
    (project / "AGENTS.md").write_text("# Build\n\n- Run `make check` before every push in this repository\n")
    result = _import(project, ".")
    stored = _every_byte_under(project / ".rose")
    assert "make check" in stored                                # the repository's own file is imported
    assert "Dana" not in stored and "staging database" not in stored
    errors = "\n".join(result["errors"])
    assert "CLAUDE.md" in errors and "db.mdc" in errors, errors  # said, not skipped in silence


def test_a_fifo_a_device_or_a_huge_file_as_a_rule_file_never_holds_the_command(project: Path) -> None:
    from rose.store import reader

    assert run_rose("init", cwd=project).returncode == 0
    os.mkfifo(project / "AGENTS.md")
    (project / "CLAUDE.md").symlink_to("/dev/zero")
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "style.mdc").write_text("Format with black at line length 100 everywhere.\n")
    with open(project / ".cursor" / "rules" / "huge.mdc", "w") as handle:   # past a record's size: refused unread
        handle.write("Always run the linter first.\n" * (reader.RECORD // 28 + 1))
    result = _import(project, ".", "--dry-run")                   # bounded by run_rose's timeout: a hang fails
    assert [f["path"] for f in result["files"]] == [".cursor/rules/style.mdc"]
    errors = "\n".join(result["errors"])
    assert "huge.mdc" in errors, errors
