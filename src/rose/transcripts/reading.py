"""Reading a JSONL transcript line by line with bounded memory, and building the message list.

Memory stays bounded by caps: a line longer than `max_line_bytes` is skipped without being held whole (it is read
and dropped in chunks), and every message's text is clipped to `max_chars` (head and tail kept, a marker in
between) as soon as it is built; the user's own words get a larger cap (`USER_MAX_CHARS` each, `USER_TOTAL_CHARS`
for all of them together), since quotes are checked on them. What is kept is O(messages x max_chars +
USER_TOTAL_CHARS), never O(file size).

Files are opened only when they are regular files, without a blocking open (`open_transcript`).
"""
from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from rose.text import load_json
from rose.terminal import printed
from rose.text import may_hold_a_surrogate, repaired
from rose.transcripts.errors import TranscriptError, TranscriptNotAFile, TranscriptNotFound, TranscriptUnreadable
from rose.transcripts.model import USER_WORDS, Conversation, Kind, Message, ToolOutcome

MAX_CHARS = 20_000                # per message: a judge never needs more, and 20k x messages bounds memory
USER_MAX_CHARS = 200_000          # per prompt the user typed (or pasted into): quotes are checked on this text
USER_TOTAL_CHARS = 4_000_000      # all prompts of one read together; past it they are clipped like the rest
MAX_LINE_BYTES = 32 * 1024 * 1024  # a longer line (a giant inline image) is skipped, not parsed
MAX_SKIP_REASONS = 20             # kept for diagnostics; the count goes on regardless
_SNIFF_BYTES = 8192               # NUL bytes here mean a binary file, not JSONL
_DRAIN_CHUNK = 1024 * 1024


def clip(text: str, max_chars: int = MAX_CHARS) -> tuple[str, bool]:
    """text cut to about max_chars: two thirds from the head, one third from the tail, a marker between.

    Errors are usually at the end of an output and the request at its start, so both ends are worth keeping."""
    if len(text) <= max_chars:
        return text, False
    cut = len(text) - max_chars
    marker = f"\n[... {cut} chars cut ...]\n"
    head = max(0, (max_chars * 2) // 3)
    tail = max(0, max_chars - head)
    return text[:head] + marker + (text[-tail:] if tail else ""), True


def open_transcript(path: Path) -> BinaryIO:
    """The file opened for binary reading, or a typed error saying why it cannot be.

    Only a regular file is opened, and never with a blocking open: the path is stat'ed first (a FIFO, socket,
    device or directory is refused with TranscriptNotAFile), opened with O_NONBLOCK (so a FIFO swapped in after
    the stat cannot hang the open), and the descriptor is fstat'ed again before a byte is read."""
    path = Path(path)
    try:
        _require_regular(path, os.stat(path).st_mode)
        fd = _sys_open(path, _OPEN_FLAGS)
    except TranscriptError:
        raise
    except (FileNotFoundError, NotADirectoryError):
        raise TranscriptNotFound(path) from None
    except IsADirectoryError:
        raise TranscriptNotAFile(path, "directory") from None
    except PermissionError:
        raise TranscriptUnreadable(path, "permission denied") from None
    except OSError as e:
        raise TranscriptUnreadable(path, f"cannot open: {e.strerror or e}") from None
    try:
        _require_regular(path, os.fstat(fd).st_mode)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    try:
        head = f.read(_SNIFF_BYTES)
        f.seek(0)
    except OSError as e:
        f.close()
        raise TranscriptUnreadable(path, f"cannot read: {e.strerror or e}") from None
    if b"\x00" in head:
        f.close()
        raise TranscriptUnreadable(path, "a binary file, not a JSONL transcript")
    return f


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_BINARY", 0))
_sys_open = os.open   # one name for tests to replace (running as root ignores chmod 0)


def _require_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        what = "directory"
    elif stat.S_ISFIFO(mode):
        what = "FIFO (named pipe)"
    elif stat.S_ISSOCK(mode):
        what = "socket"
    elif stat.S_ISCHR(mode):
        what = "character device"
    elif stat.S_ISBLK(mode):
        what = "block device"
    else:
        what = "special file"
    raise TranscriptNotAFile(path, what)


def decode_record(raw: bytes, line_no: int, conv: Conversation) -> dict[str, Any] | None:
    """The JSON object on one line (raw, as read, with its newline when it has one), or None: a blank line, or a
    bad one, which is skipped and counted on conv (a last line without its newline is a line being written)."""
    ends_line = raw.endswith(b"\n")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        skip_line(conv, line_no, "not UTF-8")
        return None
    if line_no == 1:
        text = text.lstrip("\ufeff")   # a byte-order mark some editors add
    if not text.strip():
        return None
    try:
        obj = load_json(text)
    except (ValueError, RecursionError):
        if not ends_line:
            conv.partial_last_line = True
            skip_line(conv, line_no, "cut off (the file ends mid-line)")
        else:
            skip_line(conv, line_no, "not JSON")
        return None
    if not isinstance(obj, dict):
        skip_line(conv, line_no, "not a JSON object")
        return None
    return repaired(obj) if may_hold_a_surrogate(text) else obj   # a lone "\ud800" would fail the lesson's write


def iter_records(path: Path, conv: Conversation,
                 max_line_bytes: int = MAX_LINE_BYTES) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """(line number, object) for each JSON object line of the file, in order. Bad lines are skipped and counted
    on conv.

    Raises TranscriptUnreadable when the file has lines but not one of them is a JSON object."""
    good = 0
    with open_transcript(path) as f:
        line_no = 0
        while True:
            try:
                raw = f.readline(max_line_bytes + 1)
            except OSError as e:
                raise TranscriptUnreadable(path, f"read failed at line {line_no + 1}: {e.strerror or e}") from None
            if not raw:
                break
            line_no += 1
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                _drain_line(f)
                skip_line(conv, line_no, f"longer than {max_line_bytes} bytes")
                continue
            obj = decode_record(raw, line_no, conv)
            if obj is not None:
                good += 1
                yield line_no, obj
    if good == 0 and conv.skipped > (1 if conv.partial_last_line else 0):
        raise TranscriptUnreadable(path, "no JSON object lines: not a Claude Code or Codex transcript")


def _drain_line(f: Any) -> None:
    while True:
        chunk = f.readline(_DRAIN_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return


def skip_line(conv: Conversation, line_no: int, reason: str) -> None:
    conv.skipped += 1
    if len(conv.skip_reasons) < MAX_SKIP_REASONS:
        conv.skip_reasons.append(f"line {line_no}: {reason}")


def feed_all(records: Iterator[tuple[int, dict[str, Any]]], feed: Callable[[dict[str, Any]], None],
             conv: Conversation) -> None:
    """Feed each record to a reader; a record of an unexpected shape is skipped and counted, never a crash."""
    for line_no, record in records:
        try:
            feed(record)
        except (AttributeError, TypeError, ValueError, KeyError, IndexError) as e:
            skip_line(conv, line_no, f"unexpected shape ({type(e).__name__}: {e})")


class Builder:
    """Appends messages to a conversation with stable indices and clipped text.

    The user's own words (typed prompts and commands) get a far larger cap than everything else, because quotes
    are checked on them: each is kept up to `user_max_chars`, while the prompts of one read together stay within
    `user_total_chars`; past that they are clipped to `max_chars` like any other message (and a quote check falls
    back to re-reading the file, see queries.quote_in_user_turns)."""

    def __init__(self, conv: Conversation, max_chars: int = MAX_CHARS, user_max_chars: int | None = None,
                 user_total_chars: int | None = None):
        self.conv = conv
        self.max_chars = max_chars
        self.user_max_chars = max(max_chars, USER_MAX_CHARS if user_max_chars is None else user_max_chars)
        self.user_left = USER_TOTAL_CHARS if user_total_chars is None else user_total_chars

    @property
    def last(self) -> Message | None:
        return self.conv.messages[-1] if self.conv.messages else None

    def cap(self, kind: Kind) -> int:
        if kind in USER_WORDS:
            return max(self.max_chars, min(self.user_max_chars, self.user_left))
        return self.max_chars

    def add(self, kind: Kind, text: str, *, timestamp: str | None = None, tool_name: str | None = None,
            call_id: str | None = None, outcome: ToolOutcome | None = None, exit_code: int | None = None,
            response_id: str | None = None) -> Message:
        text = repaired(text)   # a surrogate a nested JSON text (a tool's arguments, its output) decoded to
        if kind is Kind.TOOL_RESULT:   # a program's output as its terminal showed it: colours and titles consumed
            text = printed(text)
        clipped, truncated = clip(text, self.cap(kind))
        if kind in USER_WORDS:
            self.user_left -= len(clipped)
        msg = Message(n=len(self.conv.messages), kind=kind, text=clipped, timestamp=timestamp,
                      tool_name=tool_name, call_id=call_id, outcome=outcome, exit_code=exit_code,
                      response_id=response_id, truncated=truncated)
        self.conv.messages.append(msg)
        return msg

    def append_text(self, msg: Message, text: str, sep: str = "\n\n") -> None:
        """More text for an existing message (another block of the same response), clipped again."""
        text = repaired(text)
        if msg.kind is Kind.TOOL_RESULT:
            text = printed(text)
        joined = f"{msg.text}{sep}{text}" if msg.text else text
        msg.text, truncated = clip(joined, self.max_chars)
        msg.truncated = msg.truncated or truncated


def as_text(value: Any) -> str:
    """A field that should be text, whatever shape it arrived in (str, list of blocks, number, None)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (as_text(v) for v in value) if t)
    if isinstance(value, dict):
        kind = value.get("type")
        if kind in ("image", "input_image", "document", "input_file") or "source" in value:
            return f"[{kind or 'attachment'}]"   # never the base64 payload
        for key in ("text", "content", "output"):
            if key in value:
                return as_text(value[key])
        return compact_json(value)
    return str(value)


def compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)
