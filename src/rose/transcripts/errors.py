"""Errors of reading a transcript; both are RoseErrors, with a message fit to show as is.

    RoseError
    └── TranscriptError            a transcript that cannot be read
        ├── TranscriptNotFound     no file at the path
        └── TranscriptUnreadable   a directory, no permission, binary, or not a Claude/Codex JSONL transcript
"""
from __future__ import annotations

from pathlib import Path

from rose.errors import RoseError


class TranscriptError(RoseError):
    def __init__(self, path: Path, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class TranscriptNotFound(TranscriptError):
    def __init__(self, path: Path):
        super().__init__(path, "no such transcript file")


class TranscriptUnreadable(TranscriptError):
    pass
