"""Teaching by hand: `rose add` runs the same reconciliation as learned lessons, and says what it did."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rose.learn.consolidate import NewLesson, Result, consolidate
from rose.model import Origin, Scope
from rose.store import Layers

if TYPE_CHECKING:
    from rose.config import Settings
    from rose.judge import Judge


def teach(layers: Layers, text: str, *, title: str = "", family: str = "", tags: list[str] | None = None,
          scope: Scope | None = None, settings: Settings | None = None, judge: Judge | None = None) -> Result:
    from rose.config import Settings as Defaults
    from rose.errors import RoseError

    text = text.strip("\n")
    if not text.strip():
        raise RoseError("a lesson needs some text")
    settings = settings or Defaults()
    new = NewLesson(body=text, title=title, family=family, tags=[t.strip() for t in (tags or []) if t.strip()],
                    origin=Origin.MANUAL, from_user=True, scope=scope)
    result = consolidate(layers, new, judge, settings)
    from rose.learn.learner import _embed_new

    _embed_new(layers, settings)
    return result
