"""The `rose` command as a user runs it: real files, one-line errors, well-formed --json. Most calls run in-process
through `cli.main(argv)` (run_rose_here); a few run the real `python -m rose` in a process of its own (run_rose):
the version, the one-line errors without a traceback, and the demo."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_rose, run_rose_here
from tests.support.gen_store import populate


@pytest.fixture
def store_dir(project: Path) -> Path:
    assert run_rose_here("init", cwd=project).returncode == 0
    return project


def test_add_then_status_tree_show_index(store_dir: Path) -> None:
    added = run_rose_here("add", "Retry idempotent calls with backoff: 100ms, 400ms.", "--family", "retry",
                          "--tags", "http,retry", "--json", cwd=store_dir)
    assert added.returncode == 0, added.stderr
    info = json.loads(added.stdout)
    assert info["id"].startswith("n_") and len(info["id"]) == 8
    assert Path(info["path"]).exists()

    status = json.loads(run_rose_here("status", "--json", cwd=store_dir).stdout)
    assert status["families"] == {"retry": 1}
    assert status["levels"] == {"0": 1}
    assert status["precision"]["value"] is None

    tree = run_rose_here("tree", cwd=store_dir)
    assert info["id"] in tree.stdout and "L0" in tree.stdout

    show = run_rose_here("show", info["id"], cwd=store_dir)
    assert "100ms, 400ms" in show.stdout and "family: retry" in show.stdout

    index = run_rose_here("index", "--rebuild", "--json", cwd=store_dir)
    assert json.loads(index.stdout)[0]["indexed"] == 1


def test_add_reads_stdin(store_dir: Path) -> None:
    text = "Line one: with colon\n\n- a list item\n\"quotes\" and \\backslashes\\"
    out = run_rose_here("add", "-", "--title", "From stdin", "--json", cwd=store_dir, input=text)
    assert out.returncode == 0, out.stderr
    node_id = json.loads(out.stdout)["id"]
    shown = json.loads(run_rose_here("show", node_id, "--json", cwd=store_dir).stdout)
    assert shown["body"] == text and shown["title"] == "From stdin"


def test_global_scope_lands_in_the_global_store(store_dir: Path, isolated_home: Path) -> None:
    out = run_rose_here("add", "Prefer uv.", "--scope", "global", "--json", cwd=store_dir)
    assert str(isolated_home / ".rose") in json.loads(out.stdout)["path"]
    status = json.loads(run_rose_here("status", "--json", cwd=store_dir).stdout)
    assert [s["scope"] for s in status["stores"]] == ["project", "global"]


@pytest.mark.parametrize("argv", [["status"], ["tree"], ["show", "n_abcdef"], ["index"], ["search", "x"],
                                  ["events"]])
def test_no_store_is_a_one_line_hint(project: Path, argv: list[str]) -> None:
    out = run_rose_here(*argv, cwd=project)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "rose init" in out.stderr and "--scope global" not in out.stderr
    assert "Traceback" not in out.stderr


def test_a_repository_without_a_store_learns_into_the_users_own_store_for_it(project: Path) -> None:
    (project / ".git").mkdir()
    (project / "src").mkdir()
    out = run_rose_here("add", "Run the linter before committing.", "--title", "Lint first", cwd=project / "src")
    assert out.returncode == 0 and "/.rose/projects/project-" in out.stdout
    assert not (project / ".rose").exists()                     # nothing written into the repository
    assert "Lint first" in run_rose_here("search", "linter", cwd=project).stdout   # found from the repository's root too
    moved = run_rose_here("init", cwd=project / "src")
    assert "moved in 1 file(s)" in moved.stdout and (project / ".rose" / "nodes").is_dir()
    assert list((project / ".rose" / "nodes").rglob("*.md")) and "Lint first" in run_rose_here(
        "search", "linter", cwd=project).stdout


def test_user_errors_are_messages_not_tracebacks(store_dir: Path) -> None:
    cases = [
        (["show", "n_nothere"], "no lesson with id"),
        (["config", "set", "recall.max_pack_tokens", "lots"], "recall.max_pack_tokens: expected integer"),
        (["config", "set", "recall.selector", "psychic"], "one of fork | judge | hybrid"),
        (["config", "get", "recall.nope"], "unknown setting 'recall.nope'"),
        (["add", "   "], "needs some text"),
    ]
    for argv, message in cases:
        out = run_rose(*argv, cwd=store_dir)
        assert out.returncode == 1, argv
        assert message in out.stderr, (argv, out.stderr)
        assert "Traceback" not in out.stderr


def test_text_that_is_not_utf8_is_refused_with_the_byte_named_and_nothing_stored(store_dir: Path) -> None:
    import os
    import subprocess
    import sys

    def rose(*argv: bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([os.fsencode(sys.executable), b"-m", b"rose", *argv], cwd=store_dir, input=stdin,
                              capture_output=True, timeout=60, env={**os.environ, "LC_ALL": "C.UTF-8"})

    for argv, stdin, message in (([b"add", b"retry \x9b with backoff"], b"", b"the lesson text"),
                                 ([b"add", b"-"], b"retry \xff\xfe backoff", b"the lesson text"),
                                 ([b"add", b"ok text", b"--title", b"t\xc3"], b"", b"the title"),
                                 ([b"add", b"ok text", b"--family", b"\xe9t\xe9"], b"", b"the family"),
                                 ([b"add", b"ok text", b"--tags", b"a,\x80"], b"", b"a tag")):
        done = rose(*argv, stdin=stdin)
        assert done.returncode == 1, (argv, done.stderr)
        assert message + b" is not UTF-8 text (byte 0x" in done.stderr and b"nothing was stored" in done.stderr
        assert b"Traceback" not in done.stderr and b"internal error" not in done.stderr
    assert json.loads(rose(b"list", b"--json").stdout)["rows"] == []
    assert rose(b"add", b"-", stdin="caf\u00e9 keys include the tenant".encode()).returncode == 0   # UTF-8 is


def test_a_lesson_file_the_index_has_not_met_is_found_by_show_first(store_dir: Path) -> None:
    """A lesson that arrived by a pull or was written by hand is found by `rose show ID`, `archive` and `delete`
    even when no command has caught the index up with it yet; an unknown id is still a one-line error."""
    folder = store_dir / ".rose" / "nodes" / "pulled"
    folder.mkdir(parents=True)
    (folder / "n_c00001.md").write_text("---\nid: n_c00001\nfamily: pulled\ntitle: Pulled lesson\nlevel: 0\n"
                                        "status: active\nmemory_type: lesson\nscope: project\n---\nFrom a pull.\n",
                                        encoding="utf-8")
    shown = run_rose("show", "n_c00001", cwd=store_dir)
    assert shown.returncode == 0 and "From a pull." in shown.stdout, shown.stderr
    missing = run_rose("show", "n_c0ffee", cwd=store_dir)
    assert missing.returncode == 1 and "no lesson with id 'n_c0ffee'" in missing.stderr


def test_config_list_get_set(store_dir: Path) -> None:
    assert run_rose_here("config", "set", "recall.max_pack_tokens", "3000", cwd=store_dir).returncode == 0
    assert run_rose_here("config", "get", "recall.max_pack_tokens", cwd=store_dir).stdout.strip() == "3000"
    assert run_rose_here("config", "agent", "codex", cwd=store_dir).returncode == 0
    assert run_rose_here("config", "agent", cwd=store_dir).stdout.strip() == "codex"
    rows = json.loads(run_rose_here("config", "--json", cwd=store_dir).stdout)
    by_key = {r["key"]: r for r in rows}
    assert by_key["recall.max_pack_tokens"]["value"] == "3000"
    assert by_key["agent.backend"]["value"] == "codex"
    assert all(r["reason"] for r in rows)
    broken = store_dir / ".rose" / "config.yaml"
    broken.write_text("recall: [1, 2\n", encoding="utf-8")
    out = run_rose_here("status", cwd=store_dir)
    assert out.returncode == 0  # status does not need settings
    doctor = run_rose_here("doctor", cwd=store_dir)  # a broken file is skipped with a warning: recall goes on without it
    assert doctor.returncode == 0 and "[WARN] config unreadable" in doctor.stdout and "config.yaml" in doctor.stdout


def test_doctor_and_events(store_dir: Path) -> None:
    run_rose_here("add", "A lesson.", cwd=store_dir)
    doctor = json.loads(run_rose_here("doctor", "--json", cwd=store_dir).stdout)
    names = {c["name"] for c in doctor}
    assert {"python", "project store", "config", "claude CLI", "codex CLI"} <= names
    events = json.loads(run_rose_here("events", "--kind", "add", "--json", cwd=store_dir).stdout)
    assert len(events) == 1 and events[0]["kind"] == "add"


def test_corrupt_file_shows_up_in_index_and_doctor(store_dir: Path) -> None:
    run_rose_here("add", "good lesson", "--family", "f", cwd=store_dir)
    bad = store_dir / ".rose" / "nodes" / "f" / "n_broken.md"
    bad.write_text("---\n: : :\n---\n", encoding="utf-8")
    index = run_rose_here("index", "--strict", cwd=store_dir)
    assert index.returncode == 1 and str(bad) in index.stdout
    assert "n_broken.md" in run_rose_here("doctor", cwd=store_dir).stdout
    assert bad.read_text(encoding="utf-8") == "---\n: : :\n---\n"


def test_a_thousand_lessons(project: Path) -> None:
    populate(project / ".rose", 1000)
    status = run_rose_here("status", "--json", cwd=project)
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert sum(data["families"].values()) == 1000
    assert run_rose_here("tree", "--all", cwd=project).stdout.count("\n") >= 1000
    bounded = run_rose_here("tree", cwd=project).stdout   # nobody reads 1,000 lines: each family and its first trees
    assert bounded.count("\n") < 100 and "`rose tree --all`" in bounded
    assert len(json.loads(run_rose_here("tree", "--json", cwd=project).stdout)) >= 1000   # --json stays whole
    listed = run_rose_here("list", cwd=project).stdout
    assert "… and 900 more" in listed and run_rose_here("list", "--all", cwd=project).stdout.count("\n") >= 1000
    assert len(json.loads(run_rose_here("list", "--json", cwd=project).stdout)["rows"]) == 1000
    assert "n_0003e7" in run_rose_here("show", "n_0003e7", cwd=project).stdout
    index = json.loads(run_rose_here("index", "--rebuild", "--json", cwd=project).stdout)
    assert index[0]["indexed"] == 1000 and index[0]["problems"] == []
    hits = json.loads(run_rose_here("search", "argo", "rollout", "--json", cwd=project).stdout)
    assert hits and all(h["family"] == "deploy" for h in hits[:3])


def test_python_dash_m_and_version(project: Path) -> None:
    out = run_rose("--version", cwd=project)
    assert out.returncode == 0 and out.stdout.startswith("rose ")


def test_the_demo_runs(project: Path) -> None:
    out = run_rose("demo", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "lessons" in out.stdout and "families" in out.stdout


def test_a_cwd_that_is_no_directory_is_refused_before_anything_is_made(project: Path, tmp_path: Path) -> None:
    a_file = project / "notes.txt"
    a_file.write_text("x\n", encoding="utf-8")
    for folder in (str(tmp_path / "no" / "such" / "folder"), str(a_file)):
        out = run_rose_here("add", "Use uv for everything.", "--cwd", folder, cwd=project)
        assert out.returncode == 2 and "not a directory" in out.stderr
        assert run_rose_here("status", "--cwd", folder, cwd=project).returncode == 2
    assert not (Path(os.environ["ROSE_HOME"]) / "projects").exists()   # no store was made for the typo
