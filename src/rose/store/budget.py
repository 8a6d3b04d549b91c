"""Whether recall serves the stores whole: one gate, read by the prompt path and by the learner's payback rules.

When every servable lesson fits `recall.max_pack_tokens` (and the global ones `recall.global_max_tokens`), recall
serves them all unfiltered and no selector runs (rose.recall.pipeline); past it a selector chooses. Work whose only
return is a better choice (a merge parent, which the apex walk reads as one line for two lessons; a selection rule)
pays for itself only in the second case, so the learner asks this same question before spending on it.
"""
from __future__ import annotations

from rose.typedrecord import Record


TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.config import RecallSettings
    from rose.store import Store

ITEM_OVERHEAD_TOKENS = 30   # a lesson's tag line, title attribute and closing tag in the pack, beyond its body
PACK_OVERHEAD_TOKENS = 80   # the block's tags, preamble and search hint


class Whole(Record, frozen=True):
    """What serving every servable lesson of the stores would cost."""

    count: int
    tokens: int            # the whole block: bodies, per-lesson overhead and the block's own
    global_tokens: int     # the global store's share, against its sub-cap

    def fits(self, rs: RecallSettings) -> bool:
        return self.tokens <= rs.max_pack_tokens and self.global_tokens <= rs.global_max_tokens


def whole(stores: list[Store]) -> Whole:
    count = tokens = global_tokens = 0
    for store in stores:
        c, t = store.index.servable_totals()
        count, tokens = count + c, tokens + t
        if store.scope.value == "global":
            global_tokens += t + c * ITEM_OVERHEAD_TOKENS
    return Whole(count, tokens + count * ITEM_OVERHEAD_TOKENS + PACK_OVERHEAD_TOKENS, global_tokens)
