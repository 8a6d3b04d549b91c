"""Every environment variable rose reads is declared once, in rose.envvars, and listed in docs/config.md."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from rose import envvars
from rose.config import reference_markdown

SRC = Path(__file__).resolve().parent.parent / "src" / "rose"
NAME = re.compile(r"^ROSE_[A-Z0-9_]+$")


def test_no_module_spells_a_variable_of_its_own() -> None:
    declared = {name for name, *_rest in envvars.VARIABLES}
    spelled = {}
    for path in SRC.rglob("*.py"):
        if path.name == "envvars.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.match(node.value):
                spelled.setdefault(node.value, []).append(str(path.relative_to(SRC)))
    assert spelled == {}, f"declare these in rose/envvars.py and use the constant: {spelled}"
    assert len(declared) == len(envvars.VARIABLES) >= 9


def test_each_variable_is_documented_with_its_default() -> None:
    page = reference_markdown()
    for name, default, what, _internal in envvars.VARIABLES:
        row = next(line for line in page.splitlines() if line.startswith(f"| `{name}` |"))
        assert what in row and (f"`{default}`" in row if default else "unset" in row)
    assert "| `ROSE_LEARNER_DEADLINE_S` | `900` |" in page


def test_a_number_that_is_not_one_falls_back_to_the_default() -> None:
    assert envvars.number("12.5", 3) == 12.5
    assert envvars.number("", 3) == 3 and envvars.number(None, 3) == 3 and envvars.number("soon", 3) == 3
