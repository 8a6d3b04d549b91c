"""Teaching by hand: `rose add` runs the same reconciliation as learned lessons, and says what it did."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.learn.consolidate import Action, NewLesson, Result, consolidate
from rose.model import Origin, Scope
from rose.store import Layers

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge


def teach(layers: Layers, text: str, *, title: str = "", family: str = "", tags: list[str] | None = None,
          scope: Scope | None = None, settings: Settings | None = None, judge: Judge | None = None) -> Result:
    from rose.config import Settings as Defaults
    from rose.errors import RoseError

    for value, what in ((text, "the lesson text"), (title, "the title"), (family, "the family"),
                        *((t, "a tag") for t in tags or [])):
        _require_text(value, what)
    text = text.strip("\n")
    if not text.strip():
        raise RoseError("a lesson needs some text")
    settings = settings or Defaults()
    new = NewLesson(body=text, title=title, family=family, tags=[t.strip() for t in (tags or []) if t.strip()],
                    origin=Origin.MANUAL, from_user=True, scope=scope)
    result = consolidate(layers, new, judge, settings)
    _embed_later(layers, settings, result)
    return result


def _require_text(value: str, what: str) -> None:
    """Text given to rose (the CLI's arguments or stdin, an MCP client's JSON) that cannot be written as UTF-8 (a
    byte the locale could not decode, kept as a surrogate; a lone surrogate escape in JSON) is refused with a
    clear error, before anything is written."""
    from rose.errors import NotText

    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NotText(what, value, exc.start) from None


# what wrote only the new lesson's text: its vector is the one to make (a refinement rewrites its ancestors too)
_ONLY_THE_NEW_ONE = (Action.STORED, Action.UNRECONCILED)


def _embed_later(layers: Layers, settings: Settings, result: Result) -> None:
    """The new lesson's vector is made by the warm helper, which has the model loaded, not by loading the model
    here for one lesson. With no helper it is made by the next ranking that loads one (a helper's periodic
    catch-up, `rose index`, or any command that ranks in-process): vectors are derived, lexical search has the
    lesson at once. A lesson stored alone is named to the helper, which then embeds it without scanning every
    row of the index for what else lacks a vector (its periodic catch-up does that)."""
    from rose.config import EmbedProvider
    from rose.warm import client

    es = settings.embed
    if es.provider is EmbedProvider.NONE:
        return
    embed = client.embed_spec(es)
    dbs = [str(s.index_db_path) for s in layers.stores()]
    ids: dict[str, list[str]] | None = None
    if result.action in _ONLY_THE_NEW_ONE and result.node is not None and result.store is not None:
        ids = {db: [] for db in dbs}
        ids[str(result.store.index_db_path)] = [result.node.id]
    client.catch_up(embed, dbs, ids=ids)
