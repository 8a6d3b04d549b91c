"""The `rose` console command. It only routes: `rose hook ...` (run by agents on every prompt) goes straight to the
hook entry without importing the CLI, argparse or pathlib; an inspection command goes to the warm helper when one
of this user's is up (rose.warm.client.run_command); everything else, and those when no helper serves them, goes to
rose.cli."""
import os
import sys


def _cache_bytecode() -> None:
    """With PYTHONDONTWRITEBYTECODE=1 an install without compiled files (an editable one) compiled some 40 modules
    again on every hook. Bytecode then goes to a `pycache` folder in rose's private runtime folder instead (the
    mechanism of PYTHONPYCACHEPREFIX): nothing is written beside a source file, as the variable asks, and nothing
    is compiled twice. The folder is the warm helper's, checked for owner and mode; bytecode is code, so it is
    used only there."""
    if not sys.dont_write_bytecode or sys.pycache_prefix is not None:
        return
    from rose.warm.client import runtime_dir, sound_folder

    folder, _why = runtime_dir()
    if folder is None:
        return
    prefix = os.path.join(folder, "pycache")
    try:
        os.mkdir(prefix, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return
    if sound_folder(prefix) is None:
        sys.pycache_prefix = prefix
        sys.dont_write_bytecode = False


# The commands that only read (and catch the index up): short processes whose memory is the rows they print. In a
# process of their own they run without the cyclic collector, whose passes over the objects the imports and the sync
# create were about 10 ms of such a command at 50,000 lessons, and end as a hook does (_end), without the
# interpreter's teardown of their ~130 modules (another ~10 ms). Their writes (the index's commit, index.md, events)
# are finished and closed before they return; commands that change lessons, ask or serve end as usual.
READ_ONLY = frozenset({"status", "list", "tree", "conflicts", "show", "credit", "doctor", "events", "search",
                       "recall", "trace"})


def main() -> int:
    _cache_bytecode()
    if sys.argv[1:2] == ["hook"]:
        from rose.hooks.entry import main as hook_main

        _end(hook_main(sys.argv[2:]))
    from rose.warm.client import SERVED_COMMANDS

    if sys.argv[1:2] and sys.argv[1] in SERVED_COMMANDS:   # an inspection command: the warm helper's, when one is up
        from rose.warm.client import run_command

        served = run_command(sys.argv[1:])
        if served is not None:
            _end(served)
    short = sys.argv[1:2] and sys.argv[1] in READ_ONLY
    if short:
        import gc

        gc.disable()
    from rose.cli import main as cli_main

    code = cli_main()
    if short:
        _end(code)
    return code


def _end(code: int) -> None:
    """A hook's answer is written and flushed: the process ends here, without the interpreter's teardown of every
    module a hook that worked in-process imported (about a tenth of such a hook's CPU). Nothing is left to run: the
    hook closes its stores, and work that outlives it is a detached process of its own."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe: the agent is gone, nothing more can reach it
            pass
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
