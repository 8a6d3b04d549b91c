"""The docs build (`python -m rose.docs`, `python3 dev.py docs`): generated pages are current, every internal link
resolves. CI runs this, so a stale reference or a broken link fails the build."""
from __future__ import annotations

from pathlib import Path

from rose import docs

REPO = Path(__file__).resolve().parent.parent


def test_the_cli_reference_is_generated_from_the_parser_and_current() -> None:
    checked_in = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert checked_in == docs.cli_reference(), "regenerate: python -m rose.docs (or python3 dev.py docs)"
    from rose.cli import build_parser

    for name, _help, _sub in docs._subcommands(build_parser()):
        assert f"\n## rose {name}\n" in checked_in


def test_every_internal_link_in_the_readme_and_docs_resolves() -> None:
    broken = docs.check_links(REPO)
    assert broken == [], "\n".join(map(str, broken))


def test_the_link_check_catches_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Set up `rose` (twice)\n\n## Set up `rose` (twice)\n")
    (tmp_path / "README.md").write_text(
        "# Readme\n\nSee [a](docs/a.md), [setup](docs/a.md#set-up-rose-twice), [again](docs/a.md#set-up-rose-twice-1),"
        " [web](https://example.com/x.md) and [top](#readme).\n\n[gone](docs/gone.md) [bad](docs/a.md#nothing)\n"
        "```\n[in a fence](docs/nowhere.md)\n```\nand `[in code](docs/nowhere.md)`\n")
    broken = docs.check_links(tmp_path)
    assert [(b.file, b.line, b.target) for b in broken] == [("README.md", 5, "docs/gone.md"),
                                                            ("README.md", 5, "docs/a.md#nothing")]
    assert docs.main(["--check", "--root", str(tmp_path)]) == 1


def test_check_mode_passes_on_this_repository_and_writes_nothing() -> None:
    before = {p: p.read_bytes() for p in (REPO / "docs").glob("*.md")}
    assert docs.main(["--check"]) == 0
    assert {p: p.read_bytes() for p in (REPO / "docs").glob("*.md")} == before
