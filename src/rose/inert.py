"""Text made inert before a model or a terminal sees it: Unicode look-alikes folded, invisible and control
characters dropped, markup escaped. One definition, used by the injected block (rose.recall.pack), the MCP tools,
generated skills and the notice line; it imports nothing of rose but rose.terminal (a leaf too), so any part may use
it. What a command prints instead keeps every character and shows the controls (rose.terminal.visible), whose
classes are defined there."""
from __future__ import annotations

import re
import unicodedata

from rose.terminal import CONTROLS

# Characters a model may read as markup although they are not `<` or `>`: NFKC folds the fullwidth and small forms;
# these angle-bracket look-alikes it leaves alone, so they are escaped like the real ones.
_LESS_LIKE = "\u2039\u2329\u27e8\u3008\u276e\u02c2\u1438\u27ea"
_MORE_LIKE = "\u203a\u232a\u27e9\u3009\u276f\u02c3\u1433\u27eb"
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
            **{c: "&lt;" for c in _LESS_LIKE}, **{c: "&gt;" for c in _MORE_LIKE}}
_ESCAPE_RE = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")
# Invisible characters that can split a tag so it survives a naive check (zero-width, bidi controls, tag chars)
_INVISIBLE_RE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                           "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]")
_CONTROL_RE = re.compile(f"[{CONTROLS}]")


def normalise(text: str) -> str:
    """Fold Unicode look-alikes (NFKC) and drop invisible and control characters (newlines and tabs stay)."""
    text = unicodedata.normalize("NFKC", text)
    return _CONTROL_RE.sub("", _INVISIBLE_RE.sub("", text))


def escape(text: str) -> str:
    """Lesson text made inert inside the block: only the block's own markup holds a raw `<` or `>`."""
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], normalise(text))


def plain(text: str, limit: int = 80) -> str:
    """Text for the user's notice line: one line, no control or invisible characters, capped."""
    flat = " ".join(normalise(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

