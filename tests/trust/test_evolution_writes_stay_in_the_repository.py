"""Evolution writes three files into a repository: a live skill's `.claude/skills/<name>/SKILL.md`, rose's
guardrail hook in `.claude/settings.local.json`, and a line in `.git/info/exclude`. git commits symlinks (a
`.claude` or `.claude/skills` link), and a repository shared as an archive brings its `.git/` too: a link on the way
to any of those files would have rose write (or delete) wherever it points, another project's settings or the
user's own `~/.claude`. None is ever written, read for rewriting or removed through a link."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rose.evolve import after_job, placed, wiring
from rose.evolve.registry import State, editing, read
from rose.store import Layers
from tests.evolve.test_lifecycle import guard_in_trial, judge, rule, settings, skill_record


def _live_skill(layers: Layers) -> str:
    aid = skill_record(layers, rule(layers))
    with editing(layers.project) as artifacts:
        artifacts[0].move(State.ACTIVE, "promoted: test", "2026-01-01T00:00:00Z")
    return aid


def _files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_committed_claude_skills_link_never_has_a_skill_written_where_it_points(
        layers: Layers, project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "home" / ".claude" / "skills"   # the user's own skills, loaded in every project
    elsewhere.mkdir(parents=True)
    (project / ".claude").mkdir()
    (project / ".claude" / "skills").symlink_to(elsewhere)
    _live_skill(layers)
    notes = placed.sync(layers, True)
    assert _files_under(elsewhere) == [], notes
    assert any("link" in n for n in notes), notes        # said, not swallowed


def test_a_committed_claude_link_never_has_the_guardrail_hook_written_where_it_points(
        layers: Layers, project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-project" / ".claude"   # another project's settings, on this machine
    other.mkdir(parents=True)
    (project / ".claude").symlink_to(other)
    guard_in_trial(layers)
    j, _ = judge()
    note = after_job(layers, layers.project, "s1", settings(), j)
    assert _files_under(other) == [], note
    assert "symbolic link" in note and not wiring.wired(project)
    (other / "settings.local.json").write_text('{"permissions": {"allow": ["Bash(ls)"]}}\n')
    after_job(layers, layers.project, "s2", settings(), j)
    assert (other / "settings.local.json").read_text() == '{"permissions": {"allow": ["Bash(ls)"]}}\n'


def test_a_linked_exclude_file_is_never_appended_to(layers: Layers, project: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = tmp_path / "home" / ".bashrc"
    outside.write_text("export PATH=$HOME/bin:$PATH\n")
    exclude = project / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(outside)
    _live_skill(layers)
    placed.sync(layers, True)
    assert outside.read_text() == "export PATH=$HOME/bin:$PATH\n"
    # the info folder itself a link: the same
    os.unlink(exclude)
    info = project / ".git" / "info"
    info.rmdir()
    (tmp_path / "info-elsewhere").mkdir()
    info.symlink_to(tmp_path / "info-elsewhere")
    placed.sync(layers, False)
    placed.sync(layers, True)
    assert _files_under(tmp_path / "info-elsewhere") == []
    assert read(layers.project)[0].state is State.ACTIVE


def test_an_exclude_file_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    """A repository shared as an archive brings its `.git/` and can hold a FIFO there: the learner placing a skill
    waited on it for ever."""
    import threading

    from tests.support.waits import HANG_S

    info = tmp_path / ".git" / "info"
    info.mkdir(parents=True)
    os.mkfifo(info / "exclude")
    target = tmp_path / ".claude" / "skills" / "x"
    target.mkdir(parents=True)
    said: list[str] = []
    worker = threading.Thread(target=lambda: said.append(placed.exclude(tmp_path, target)), daemon=True)
    worker.start()
    worker.join(HANG_S)   # a bound on a hang, never a verdict on speed
    if worker.is_alive():   # let the blocked open go before failing
        os.close(os.open(info / "exclude", os.O_WRONLY | os.O_NONBLOCK))
        raise AssertionError("exclude() waited on a FIFO")
    assert said and "could not update" in said[0] and "regular file" in said[0], said
