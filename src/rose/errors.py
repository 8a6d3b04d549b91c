"""The error tree. Every error a user can cause is one of these, and the CLI prints it as one line.

    RoseError                      anything rose raises on purpose
    ├── StoreNotFound              no .rose/ above the working directory (and no global store asked for)
    ├── NodeNotFound               an id that no store holds
    ├── CorruptFile                a node/episode file that cannot be parsed (path + reason; never rewritten)
    ├── ConfigError                an unknown key or a value of the wrong type (names the key and the type)
    ├── LockTimeout                another process held the store lock for too long
    └── JudgeFailure               a model call that did not yield a valid answer (fail closed; see rose.judge)
"""
from __future__ import annotations

from pathlib import Path


class RoseError(Exception):
    """Base of every error rose raises deliberately; its message is fit to show a user as is."""


class StoreNotFound(RoseError):
    def __init__(self, start: Path):
        super().__init__(
            f"no rose store for {start} yet: rose starts one by itself when its hooks run here (`rose install "
            "--scope user`), or `rose init` makes a committable .rose/ now"
        )
        self.start = start


class NodeNotFound(RoseError):
    def __init__(self, node_id: str):
        super().__init__(f"no lesson with id {node_id!r} (try `rose search` or `rose status`)")
        self.node_id = node_id


class CorruptFile(RoseError):
    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class ConfigError(RoseError):
    pass


class LockTimeout(RoseError):
    def __init__(self, path: Path, seconds: float):
        super().__init__(f"could not take the store lock {path} within {seconds:.0f}s; is another rose stuck?")
        self.path = path
