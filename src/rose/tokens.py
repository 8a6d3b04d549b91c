"""Token estimates for budgets. A budget needs a stable, cheap count, not a tokenizer: ~4 characters a token."""
from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate(text: str) -> int:
    if not text:
        return 0
    return max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)
