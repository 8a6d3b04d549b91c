"""Drive a real agent CLI's interactive TUI inside tmux, to see what a user of it sees.

    with Tui("codex", [codex_bin(), ...], env, cwd) as t:
        t.wait_for("OpenAI Codex (v")
        t.type("hello")
        screen = t.wait_for("MODEL-ANSWER")

One detached tmux session on a private socket per Tui (never anybody else's server); every distinct screen is kept
in `frames`. Waits are on screen content, bounded only to catch a hang. The tmux binary is installed by
scripts/test-setup.sh; without it a test using this fails, saying so (the suite never skips).
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

HANG_S = 90.0


class Tui:
    def __init__(self, name: str, argv: list, env: dict, cwd: Path, width: int = 200, height: int = 50) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed (scripts/test-setup.sh installs it): the TUI tests need it",
                        pytrace=False)
        self.socket = f"rose-e2e-{os.getpid()}-{name}"
        self.frames: list[str] = []
        env_args = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
        cmd = f"cd {shlex.quote(str(cwd))} && exec env -i {env_args} {' '.join(shlex.quote(str(a)) for a in argv)}"
        self._tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), cmd)
        self._tmux("set-option", "-t", "t", "remain-on-exit", "on", check=False)

    def __enter__(self) -> Tui:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=check, capture_output=True, text=True,
                              timeout=30)

    def screen(self) -> str:
        # Claude pads its "⎿ " gutter with a no-break space (U+00A0): compare with plain spaces.
        text = self._tmux("capture-pane", "-p", "-t", "t", "-S", "-1000", check=False).stdout.replace("\u00a0", " ")
        if not self.frames or self.frames[-1] != text:
            self.frames.append(text)
        return text

    def wait_for(self, *needles: str, timeout: float = HANG_S) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if all(n in text for n in needles):
                return text
            if time.monotonic() > deadline:
                pytest.fail(f"{needles!r} not on screen after {timeout}s; screen:\n{text}", pytrace=False)
            time.sleep(0.1)

    def seen(self, needle: str) -> bool:
        return any(needle in frame for frame in self.frames)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "t", "-l", text)
        time.sleep(0.4)  # a separate Enter, so neither TUI takes it as part of a paste
        self._tmux("send-keys", "-t", "t", "Enter")

    def close(self) -> None:
        pid = self._tmux("display-message", "-p", "-t", "t", "#{pane_pid}", check=False).stdout.strip()
        path = self._tmux("display-message", "-p", "#{socket_path}", check=False).stdout.strip()
        self._tmux("kill-server", check=False)
        if path.startswith("/") and path.endswith(self.socket):
            Path(path).unlink(missing_ok=True)  # tmux 3.3a leaves the socket file behind after kill-server
        if pid.isdigit():
            try:
                os.killpg(int(pid), 9)
            except (ProcessLookupError, PermissionError):
                pass


def tui_env(env: dict) -> dict:
    env = dict(env, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    return env
