"""Every string of a parsed JSON value made valid Unicode. JSON may escape a lone surrogate (`"\\ud800"`): valid JSON,
invalid text, which fails the first write to disk or to SQLite (a lesson minted from it, an event, an episode). It
becomes U+FFFD (a broken character costs that character, never the record); a surrogate pair is joined. Used where
rose parses JSON it did not write: a hook's payload (rose.hooks.adapters) and a transcript's lines
(rose.transcripts.reading). And `load_json`, the one way rose parses JSON. It imports nothing of rose, nor typing."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:   # the hook path imports this module: no typing at run time
    from typing import Any


def repaired(value: Any) -> Any:
    """`value` (dicts, lists, strings, numbers) with every string, keys too, valid Unicode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {repaired(k): repaired(v) for k, v in value.items()}
    if isinstance(value, list):
        return [repaired(v) for v in value]
    return value


def may_hold_a_surrogate(json_text: str) -> bool:
    """Whether a JSON text can decode to a surrogate at all: only through a `\\uD800`-`\\uDFFF` escape (a raw one
    cannot pass a UTF-8 decode). A cheap test that spares most lines the walk."""
    return "\\ud" in json_text or "\\uD" in json_text


def load_json(text: str | bytes) -> Any:
    """`json.loads`, with a nesting too deep to parse (`[[[[...` a hundred thousand deep raises RecursionError) made
    the ValueError any other malformed JSON is: every caller that skips malformed JSON skips that too. The one way
    rose parses JSON."""
    import json

    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply to parse") from None
