"""The docs, built by one command: `python -m rose.docs` (or `python3 dev.py docs`).

    docs/cli.md      generated from the argparse parser (rose.cli.build_parser), so it can never drift from the code
    docs/config.md   generated from rose.config (as `python -m rose.config` does)
    links            every relative link in README.md and docs/*.md must name a file that exists and, when it names
                     a heading (#anchor) in a markdown file, a heading that exists there (GitHub's anchor rules)

`--check` writes nothing and fails when a generated page is stale or a link is broken; tests/test_docs.py runs the
same checks, so CI does.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GENERATED = ("cli.md", "config.md")


# -- the CLI reference -------------------------------------------------------------------------------------------
def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # noqa: SLF001
            for name, sub in action.choices.items():
                out.append((name, helps.get(name, ""), sub))
    return out


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest}`" + (" ..." if action.nargs in ("+", "*") else "")
    metavar = ""
    if action.nargs != 0:
        metavar = " " + (action.metavar or (
            "{" + ",".join(map(str, action.choices)) + "}" if action.choices else action.dest.upper()))
    return ", ".join(f"`{flag}{metavar}`" for flag in action.option_strings)


def _cell(text: str) -> str:
    """Text for a markdown table cell: one line, its pipes and angle brackets escaped."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _about(action: argparse.Action) -> str:
    text = _cell(action.help or "")
    extras = []
    if action.required and action.option_strings:
        extras.append("required")
    if action.nargs in ("+",):
        extras.append("one or more")
    elif action.nargs in ("*", "?") and not action.option_strings:
        extras.append("optional")
    if action.choices and action.option_strings:
        extras.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.default not in (None, False, argparse.SUPPRESS, [], "") and action.nargs != 0:
        extras.append(f"default `{action.default}`")
    if getattr(action, "append", False) or isinstance(action, argparse._AppendAction):  # noqa: SLF001
        extras.append("may repeat")
    return "; ".join(p for p in (text, ", ".join(extras)) if p)


def _synopsis(name: str, sub: argparse.ArgumentParser) -> str:
    parts = [f"rose {name}"]
    for action in sub._actions:  # noqa: SLF001
        if isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        if not action.option_strings:
            token = (action.metavar or action.dest).upper() if action.metavar is None else action.metavar
            token = {"+": f"{token}...", "*": f"[{token}...]", "?": f"[{token}]"}.get(str(action.nargs), token)
            parts.append(token)
        elif action.required:
            parts.append(_flags(action).split(", ")[-1].strip("`"))
    return " ".join(parts)


def cli_reference(parser: argparse.ArgumentParser | None = None) -> str:
    if parser is None:
        from rose.cli import build_parser

        parser = build_parser()
    lines = ["# Command-line reference", "",
             "Generated from the parser in `src/rose/cli.py` by `python -m rose.docs`; do not edit by hand.", "",
             "Every command takes `--json` (machine-readable output) and `--cwd DIR` (act as if run from DIR), "
             "and exits non-zero with a one-line `rose: ...` message on an error it expected.", "",
             "| command | what it does |", "|---|---|"]
    commands = _subcommands(parser)
    for name, help_text, _sub in commands:
        lines.append(f"| [`rose {name}`](#rose-{name}) | {_cell(help_text)} |")
    for name, help_text, sub in commands:
        lines += ["", f"## rose {name}", "", _cell(sub.description or help_text) + ".", "",
                  "```", _synopsis(name, sub), "```"]
        rows = [a for a in sub._actions if not isinstance(a, argparse._HelpAction)  # noqa: SLF001
                and a.dest not in ("json", "cwd")]
        if rows:
            lines += ["", "| argument | meaning |", "|---|---|"]
            lines += [f"| {_flags(a)} | {_about(a)} |" for a in rows]
    return "\n".join(lines) + "\n"


# -- links ---------------------------------------------------------------------------------------------------------
_LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True)
class BrokenLink:
    file: str
    line: int
    target: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.target}: {self.why}"


def _prose_lines(text: str, code_spans: bool = False) -> Iterable[tuple[int, str]]:
    """The lines outside code fences, with inline code spans blanked out (kept with ``code_spans``)."""
    fence = ""
    for n, line in enumerate(text.splitlines(), 1):
        found = _FENCE.match(line)
        if fence:
            if found and found.group(1) == fence:
                fence = ""
            continue
        if found:
            fence = found.group(1)
            continue
        yield n, line if code_spans else re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text, flags=re.UNICODE)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    out: set[str] = set()
    counts: dict[str, int] = {}
    for _n, line in _prose_lines(text, code_spans=True):
        found = _HEADING.match(line)
        if not found:
            continue
        base = slug(found.group(1))
        k = counts.get(base, 0)
        out.add(base if k == 0 else f"{base}-{k}")
        counts[base] = k + 1
    for explicit in re.findall(r'<a\s+(?:name|id)="([^"]+)"', text):
        out.add(explicit)
    return out


def check_links(root: Path = REPO, files: Iterable[Path] | None = None) -> list[BrokenLink]:
    files = list(files) if files is not None else [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    cache: dict[Path, set[str]] = {}
    broken = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
        for n, line in _prose_lines(text):
            for found in list(_LINK.finditer(line)) + list(_IMAGE.finditer(line)):
                target = found.group(1).strip("<>")
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                    continue  # http:, https:, mailto: ... are not internal
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path.resolve()
                if not dest.exists():
                    broken.append(BrokenLink(shown, n, target, "no such file"))
                    continue
                if anchor and dest.suffix == ".md" and dest.is_file():
                    if dest not in cache:
                        cache[dest] = anchors(dest.read_text(encoding="utf-8"))
                    if anchor not in cache[dest]:
                        broken.append(BrokenLink(shown, n, target, f"no heading #{anchor} in {dest.name}"))
    return broken


# -- the command ---------------------------------------------------------------------------------------------------
def generated(root: Path = REPO) -> dict[Path, str]:
    from rose import config

    return {root / "docs" / "cli.md": cli_reference(), root / "docs" / "config.md": config.reference_markdown()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rose.docs", description="Build the docs: generate the CLI and "
                                     "config references, check every internal link.")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale or a link "
                        "is broken (what CI runs)")
    parser.add_argument("--root", default=str(REPO), help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    problems = 0
    for path, text in generated(root).items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            print(f"up to date: {path.relative_to(root)}")
        elif args.check:
            print(f"STALE: {path.relative_to(root)} (run `python -m rose.docs`)")
            problems += 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(root)}")
    broken = check_links(root)
    for link in broken:
        print(f"BROKEN LINK {link}")
    problems += len(broken)
    files = 1 + len(list((root / "docs").glob("*.md")))
    print(f"checked the links of {files} pages: {len(broken)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
