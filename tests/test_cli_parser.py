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


def _argparse_reading(argv: list[str]) -> dict | None:
    try:
        return vars(build_parser(argv[0]).parse_args(argv))
    except SystemExit:
        return None


def test_a_command_line_of_switches_alone_reads_as_argparse_reads_it(capsys: pytest.CaptureFixture[str]) -> None:
    # every subcommand, bare and with each subset of its switches (store_true options, each spelling), read
    # without argparse: what argparse makes of it, or None, where argparse then reads it itself
    import itertools

    from rose.cli import _switches_only

    fast_read: set[str] = set()
    for name, _help, sub in docs._subcommands(build_parser()):
        switches = [s for a in sub._actions if type(a).__name__ == "_StoreTrueAction" for s in a.option_strings]
        assert "--json" in switches or name == "hook"
        for k in range(min(len(switches), 3) + 1):
            for chosen in itertools.combinations(switches, k):
                argv = [name, *chosen]
                fast = _switches_only(argv)
                if fast is None:
                    continue
                fast_read.add(name)
                assert vars(fast) == _argparse_reading(argv), argv
    capsys.readouterr()
    assert {"status", "list", "tree", "doctor", "conflicts", "credit", "evolution", "init", "learn"} <= fast_read


def test_anything_but_switches_goes_to_argparse() -> None:
    from rose.cli import _switches_only, parse

    for argv in (["list", "python"], ["list", "--js"], ["list", "--json=1"], ["list", "--scope", "project"],
                 ["tree", "--family", "x"], ["show", "n_x"], ["used"], ["search", "q"], ["list", "-h"],
                 ["events", "--limit", "3"], ["status", "--cwd", "/tmp"], ["no-such-command"], ["hook"],
                 ["list", "--"], ["evolution", "list"]):
        assert _switches_only(argv) is None, argv
    parser, args = parse(["list", "--all", "--json"])
    assert parser is None and (args.all, args.json, args.filter, args.cold) == (True, True, None, False)
    parser, args = parse(["list", "python"])
    assert parser is not None and args.filter == "python"


def test_the_plain_commands_read_without_argparse_import_none_of_it() -> None:
    import subprocess
    import sys

    code = ("import sys; from rose.cli import parse\n"
            "for argv in (['status'], ['list', '--all'], ['tree'], ['doctor'], ['conflicts', '--json']):\n"
            "    parser, args = parse(argv)\n"
            "    assert parser is None and args.command == argv[0], argv\n"
            "print(sorted(m for m in ('argparse', 'gettext', 'shutil') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
