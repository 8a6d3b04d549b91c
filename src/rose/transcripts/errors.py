"""The transcript errors, defined in rose.errors (the one error tree) and re-exported here where they are raised."""
from __future__ import annotations

from rose.errors import TranscriptError, TranscriptNotAFile, TranscriptNotFound, TranscriptUnreadable

__all__ = ["TranscriptError", "TranscriptNotAFile", "TranscriptNotFound", "TranscriptUnreadable"]
