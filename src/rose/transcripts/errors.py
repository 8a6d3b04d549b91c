"""Errors of reading a transcript; all are RoseErrors, with a message fit to show as is.

    RoseError
    └── TranscriptError            a transcript that cannot be read
        ├── TranscriptNotFound     no file at the path
        └── TranscriptUnreadable   no permission, binary, or not a Claude/Codex JSONL transcript
            └── TranscriptNotAFile a directory, FIFO, socket or device: refused before any blocking open
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


class TranscriptNotAFile(TranscriptUnreadable):
    """The path names something other than a regular file (reading a FIFO or a device could block forever)."""

    def __init__(self, path: Path, what: str):
        super().__init__(path, f"is a {what}, not a transcript file")
        self.what = what
