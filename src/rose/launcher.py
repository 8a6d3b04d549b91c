"""The `rose` console command. It only routes: `rose hook ...` (run by agents on every prompt) goes straight to the
hook entry without importing the CLI, argparse or pathlib; everything else goes to rose.cli."""
import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        from rose.hooks.entry import main as hook_main

        return hook_main(sys.argv[2:])
    from rose.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
