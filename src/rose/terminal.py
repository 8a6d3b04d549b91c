"""What rose prints for a person carries no instruction to their terminal.

A lesson's words can come from anyone: a repository's committed store, a transcript, a model's answer. Printed as
they are, an escape sequence in a title would set the terminal's title or clipboard, clear the screen, or move the
cursor over what was printed; a bidirectional override would show words in another order. So every command that
prints for a person writes through `Shown` (rose.cli.main's stdout and stderr, and the warm helper's capture of a
served command, rose.warm.commands, so both print the same bytes), and index.md's lines and a hook's answer go
through `visible`: each such character is written as its JSON escape, `\\u001b`. A person sees it; in a JSON
document it is the escape json.loads reads back as the same character, so `--json` stays valid and loses nothing.
Tab and newline are text; a carriage return is kept before a newline (CRLF ends a line) and shown anywhere else,
where it would return the cursor to print over the line. The other way round, `printed` is what a terminal shows of
a program's output (its escape sequences consumed): a transcript's tool output is read so (rose.transcripts.reading),
and a check's coloured summary line reads as its user saw it. It imports nothing of rose (rose.inert's control class is this
one), and only re, so every command can afford it.
"""
from __future__ import annotations

import io
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"   # C0 but tab, newline and return; DEL; C1 (0x9b is a whole CSI)
REORDERING = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"   # the bidirectional marks, embeddings and isolates
_SHOWN = f"[{CONTROLS}{REORDERING}\r]"   # one class: the regex engine scans for it fast (a return: see _shown)


# A whole escape sequence as ECMA-48 defines one, as a terminal consumes it without printing: a control string (OSC,
# DCS, SOS, PM, APC) up to its terminator (BEL or ST; read here as ending with its line at the latest); a CSI (ESC [
# or 0x9b) with its parameters, intermediates and final byte; any other ESC with its intermediates and final byte.
# Every branch starts with its introducer, so the engine scans for those alone (plain text costs a fast scan).
_C1_INTRODUCERS = "\x90\x98\x9b\x9d\x9e\x9f"   # DCS, SOS, CSI, OSC, PM, APC
_BODY = "[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\\\|\x9c)?"
_CSI = "[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
_SEQUENCE = "|".join([f"\x1b(?:[\\]PX^_]{_BODY}|\\[{_CSI}|[\x20-\x2f]*[\x30-\x7e]?)", f"\x9b{_CSI}",
                      *(f"{c}{_BODY}" for c in _C1_INTRODUCERS if c != "\x9b")])


def printed(text: str) -> str:
    """What a terminal prints of `text`'s escape sequences: nothing. A program's output read for its words (a test
    run's summary line) reads as its user saw it, whatever colours the program chose."""
    if "\x1b" not in text and (text.isascii() or not any(c in text for c in _C1_INTRODUCERS)):
        return text   # no sequence can start: a string search is far cheaper than the regex's scan
    return re.sub(_SEQUENCE, "", text)   # compiled on first use, then re's own cache


def visible(text: str) -> str:
    """`text` with every character that controls a terminal or reorders text written as its `\\uXXXX` escape."""
    if text.replace("\n", "").replace("\t", "").isprintable():   # no Cc or Cf character: nothing to show (most text)
        return text
    return re.sub(_SHOWN, _shown, text)


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r" and match.string.startswith("\n", match.end()):
        return char   # CRLF: a line's end
    return f"\\u{ord(char):04x}"


def visible_strings(value: Any) -> Any:
    """Every string in a JSON-shaped value (dicts, lists, strings) made visible: a hook's answer, whose notice the
    agent shows its user as it is."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {k: visible_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [visible_strings(v) for v in value]
    return value


class Shown(io.TextIOBase):
    """A text stream that writes what it is given through `visible`. A carriage return at the end of one write
    waits for the next, which says whether it ends a line (print writes its text and its newline apart)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self._return = False

    def write(self, text: str) -> int:
        size = len(text)
        if self._return:
            text, self._return = "\r" + text, False
        if text.endswith("\r"):
            text, self._return = text[:-1], True
        if text:
            self.inner.write(visible(text))
        return size

    def flush(self) -> None:
        if self._return:   # nothing followed it: a return on its own
            self._return = False
            self.inner.write(visible("\r"))
        self.inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return bool(self.inner.isatty())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(self.inner.encoding)

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.inner.errors
