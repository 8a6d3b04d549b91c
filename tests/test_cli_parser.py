"""`rose COMMAND` builds only that subcommand's parser (rose.cli.build_parser(only)): each one parses and helps
exactly as the whole parser's does, and a name that is no subcommand gets the whole parser's error."""
from __future__ import annotations

import pytest

from rose import docs
from rose.cli import build_parser


def test_each_subcommand_built_alone_is_the_same_parser_as_in_the_whole() -> None:
    whole = {name: sub for name, _help, sub in docs._subcommands(build_parser())}
    assert len(whole) > 30
    for name, sub in whole.items():
        alone = {n: s for n, _h, s in docs._subcommands(build_parser(name))}
        assert list(alone) == [name]
        assert alone[name].format_help() == sub.format_help()


def test_a_name_that_is_no_subcommand_gets_the_whole_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser("no-such-command").parse_args(["no-such-command"])
    err = capsys.readouterr().err
    assert "invalid choice" in err and "'status'" in err and "'tree'" in err
    assert len(list(docs._subcommands(build_parser("no-such-command")))) > 30
