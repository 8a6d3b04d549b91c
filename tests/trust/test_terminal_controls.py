"""A lesson's words cannot drive the user's terminal. A repository's committed store can hold any characters: an
escape sequence in a title would set the terminal's title or clipboard, clear the screen or hide what follows, a
lone carriage return or backspaces would print over a line, a bidirectional override would show words in another
order. Whatever rose prints for a person (every command, in-process or served by the warm helper, the hook's notice
and context, index.md) shows such characters as `\\uXXXX` escapes; in `--json` output those are the JSON escapes
of the same characters, so the document stays valid and reads back exactly what the lesson holds."""
from __future__ import annotations

import json
import random
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from rose.terminal import Shown, visible
from tests.conftest import run_rose

# The attacks, one kind each (written here from ECMA-48 and the xterm control sequences' own documentation)
ATTACKS = {
    "osc-title": "\x1b]0;pwned\x07",
    "osc-clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "osc-hyperlink": "\x1b]8;;http://attacker.invalid/\x1b\\docs\x1b]8;;\x1b\\",
    "csi-clear": "\x1b[2J\x1b[H",
    "csi-erase-up": "\x1b[1A\x1b[2K",
    "sgr-conceal": "\x1b[8mhidden\x1b[0m",
    "dcs-query": "\x1bP+q544e\x1b\\",
    "c1-csi": "\x9b2J",
    "c1-osc": "\x9d0;pwned\x9c",
    "carriage-return": "safe\rEVIL",
    "backspaces": "abc\x08\x08\x08XYZ",
    "delete": "x\x7fy",
    "bell": "ding\x07",
    "bidi-override": "\u202eexe.txt",
    "bidi-isolate": "\u2067admin\u2069 user",
    "bidi-marks": "a\u200fb\u200ec\u061cd",
}
_BIDI_NAMES = {"LEFT-TO-RIGHT MARK", "RIGHT-TO-LEFT MARK", "ARABIC LETTER MARK"}


def _controls(text: str) -> list[str]:
    """Every character in `text` that controls a terminal or reorders text, found by Unicode's own tables
    (independently of how rose.terminal finds them). A carriage return counts unless a newline follows it."""
    found = []
    for i, c in enumerate(text):
        if c in "\t\n":
            continue
        if c == "\r":
            if text[i + 1:i + 2] != "\n":
                found.append(c)
            continue
        if unicodedata.category(c) == "Cc" or unicodedata.bidirectional(c) in (
                "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI") or unicodedata.name(c, "") in _BIDI_NAMES:
            found.append(c)
    return found


def test_every_control_character_is_shown_as_its_escape_and_nothing_else_changes() -> None:
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        c = chr(code)
        shown = visible(f"a{c}b")
        if _controls(f"a{c}b"):
            assert shown == f"a\\u{code:04x}b", hex(code)
        else:
            assert shown == f"a{c}b", hex(code)
    assert visible("one\r\ntwo\tthree\n") == "one\r\ntwo\tthree\n"   # CRLF, tab and newline are text
    assert visible("over\rwrite\r") == "over\\u000dwrite\\u000d"


def test_json_made_visible_is_still_json_and_reads_back_every_character() -> None:
    rng = random.Random(5)
    alphabet = [*map(chr, range(0x00, 0xA0)), "\u202e", "\u2066", "\u2069", "\u200f", "é", "中", "🙂", "\\", '"',
                "\\u001b", "\r\n"]
    for _ in range(2000):
        value = {"title": "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))),
                 "tags": ["".join(rng.choice(alphabet) for _ in range(4))]}
        text = visible(json.dumps(value, ensure_ascii=False, indent=2))
        assert not _controls(text)
        assert json.loads(text) == value


def test_a_stream_keeps_a_line_ending_return_split_across_writes_and_shows_a_lone_one() -> None:
    import io

    inner = io.StringIO()
    out = Shown(inner)
    assert out.write("windows line\r") == len("windows line\r")
    out.write("\n")               # print() writes its end apart from its text
    out.write("progress 10%\r")
    out.write("done")
    out.write("\x1b[31mred\r")
    out.flush()                   # nothing came after the last return
    assert inner.getvalue() == "windows line\r\nprogress 10%\\u000ddone\\u001b[31mred\\u000d"


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar holding `text` (JSON's escapes are YAML's too), as a hand-made file writes it."""
    return json.dumps(text)


def _hostile_store(project: Path) -> dict[str, str]:
    """A repository whose committed store carries one lesson per attack, in its title, gist, tags, family and body,
    as a clone would bring it. Returns each lesson's id -> its title."""
    run_rose("init", cwd=project)
    folder = project / ".rose" / "nodes" / "hostile"
    folder.mkdir(parents=True, exist_ok=True)
    titles = {}
    for i, (kind, attack) in enumerate(ATTACKS.items()):
        node_id = f"n_a{i:05x}"
        title = f"Deploy checklist {kind} {attack} step"
        titles[node_id] = title
        (folder / f"{node_id}.md").write_text(
            "---\n"
            f"id: {node_id}\nfamily: {_quoted('deploy' + attack)}\ntitle: {_quoted(title)}\n"
            f"gist: {_quoted('Run the deploy checklist ' + attack + ' before shipping.')}\n"
            "level: 0\nstatus: active\nmemory_type: lesson\nscope: project\nimportance: 0.8\n"
            "created: '2026-11-01T09:00:00Z'\n"   # a file without one reads as made now: two reads a second apart differ
            f"tags: [{_quoted('deploy' + attack)}]\n"
            "---\n"
            f"Run the deploy checklist before shipping {attack} every time.\n", encoding="utf-8", newline="")
    # and its config: a bad value rose names when it says the value is ignored
    (project / ".rose" / "config.yaml").write_text(
        f"recall:\n  selector: {_quoted('hybrid' + ATTACKS['osc-title'])}\n  max_pack_tokens: {_quoted(ATTACKS['c1-csi'])}\n",
        encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return titles


COMMANDS = [["list"], ["list", "--all"], ["tree"], ["status"], ["search", "deploy", "checklist"],
            ["recall", "--prompt", "run the deploy checklist"], ["trace", "--prompt", "run the deploy checklist"],
            ["credit"], ["events"], ["doctor"], ["config", "list"], ["config", "get", "recall.selector"]]


def _run(argv: list[str], project: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "rose", *argv], cwd=project, capture_output=True, timeout=120,
                          env=_env())


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "ROSE_WARM_HELPER": "0", "PYTHONIOENCODING": "utf-8"}


def test_no_command_prints_a_committed_lessons_control_characters(project: Path) -> None:
    titles = _hostile_store(project)
    first = next(iter(titles))
    for argv in [*COMMANDS, ["show", first], *([c, "--json"] for c in ("list", "tree", "status"))]:
        done = _run(argv, project)
        assert done.returncode in (0, 1), (argv, done.stderr)
        for name, data in (("stdout", done.stdout), ("stderr", done.stderr)):
            text = data.decode("utf-8")
            assert not _controls(text), (argv, name, _controls(text))
    shown = _run(["show", first], project).stdout.decode()
    # the words are all there, the control shown as its escape
    assert "Run the deploy checklist before shipping \\u001b]0;pwned\\u0007 every time." in shown


def test_json_output_reads_back_the_lessons_exact_words(project: Path) -> None:
    titles = _hostile_store(project)
    listed = json.loads(_run(["list", "--json"], project).stdout)
    assert {r["id"]: r["title"] for r in listed["rows"]} == titles
    found = json.loads(_run(["search", "--json", "deploy", "checklist"], project).stdout)
    assert found and all(hit["title"] == titles[hit["id"]] for hit in found)
    one = next(iter(titles))
    assert json.loads(_run(["show", "--json", one], project).stdout)["title"] == titles[one]


def test_the_hook_notice_context_and_index_md_show_them_as_escapes(project: Path) -> None:
    titles = _hostile_store(project)
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "run the deploy checklist before shipping"})
    out = run_rose("hook", "claude", "UserPromptSubmit", cwd=project, input=payload)
    assert out.returncode == 0
    answer = json.loads(out.stdout)
    notice, context = answer["systemMessage"], answer["hookSpecificOutput"]["additionalContext"]
    assert "deploy checklist" in context.lower() and "Deploy checklist" in notice   # the lessons are served
    for text in (notice, context):
        assert not _controls(text), _controls(text)
    index_md = (project / ".rose" / "index.md").read_text(encoding="utf-8")
    assert len([line for line in index_md.splitlines() if line.startswith("n_a")]) == len(titles)
    assert not _controls(index_md), _controls(index_md)


@pytest.mark.parametrize("attack", ["\x1b]0;pwned\x07", "\x9b2J", "safe\rEVIL"])
def test_an_error_naming_a_hostile_word_is_shown_as_escapes_too(project: Path, attack: str) -> None:
    run_rose("init", cwd=project)
    done = _run(["show", f"n_zz{attack}"], project)
    assert done.returncode != 0
    assert not _controls(done.stderr.decode()) and not _controls(done.stdout.decode())


def test_a_hook_failure_naming_a_hostile_word_says_so_visibly(monkeypatch: pytest.MonkeyPatch, project: Path) -> None:
    import io

    from rose.hooks import entry

    def failing(event: object) -> dict:
        raise RuntimeError("cannot read .rose/nodes/\x1b]0;pwned\x07.md\r")

    monkeypatch.setattr(entry, "dispatch", failing)
    payload = json.dumps({"session_id": "s1", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
                          "prompt": "hello"}).encode()
    out = io.StringIO()
    entry.run(["claude", "UserPromptSubmit"], io.BytesIO(payload), out, cwd=project)
    notice = json.loads(out.getvalue())["systemMessage"]
    assert "failed: RuntimeError: cannot read .rose/nodes/\\u001b]0;pwned\\u0007.md\\u000d" in notice
    assert not _controls(notice)


def test_what_a_terminal_prints_of_a_program_output_keeps_its_words_only() -> None:
    from rose.terminal import printed

    sequences = {k: v for k, v in ATTACKS.items() if k.split("-")[0] in ("osc", "csi", "sgr", "dcs", "c1")}
    for kind, attack in sequences.items():
        left = printed(f"before {attack} after")
        assert not [c for c in left if c == "\x1b" or "\x80" <= c <= "\x9f"], kind
        assert left.startswith("before ") and left.endswith(" after"), kind
    assert printed(ATTACKS["osc-hyperlink"]) == "docs" and printed(ATTACKS["sgr-conceal"]) == "hidden"
    assert printed("\x1b]0;never ended\nnext line") == "\nnext line"   # a control string ends with its line here
    assert printed("plain text, tabs\tand\nlines") == "plain text, tabs\tand\nlines"
