"""WordLlama's tokenizer for a few short texts, in Python: a command in its own process embeds one query.

Importing the `tokenizers` library and building its tokenizer from the 1.8 MB config costs ~100 ms of CPU, about a
quarter of a `rose search` in its own process; reading the config with the json module and tokenizing a query here
costs about half that. The rules are the ones the config declares, and only those: `Rules.of` returns None for a
config using anything else (another normalizer, a pre-tokenizer, dropout, word prefixes or suffixes, added tokens
that are not plain special tokens, a vocabulary without all 256 byte tokens), and the library is used.

The rules, as the config declares them:
1. the text is split at each special token's exact occurrence (leftmost, longest first); a special token is its id;
2. each other non-empty piece gets "▁" prepended and every space replaced by "▁";
3. the piece is one word (no pre-tokenizer): one symbol per character, a character the vocabulary lacks becomes its
   UTF-8 bytes' tokens (`<0xE2>`...);
4. byte-pair merges: repeatedly the adjacent pair with the lowest merge rank (leftmost among equals) is merged,
   a queued pair that no longer stands as it was queued is dropped;
5. the symbols' ids, in order.
tests/test_embed_cold.py holds the ids equal to the library's on many texts.
"""
from __future__ import annotations

import heapq
import re
from pathlib import Path

from rose.text import load_json

SPACE = "\u2581"
NORMALIZER = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SPACE},
                                                    {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}
PLAIN_ADDED = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}


class Rules:
    """A BPE vocabulary and its merge ranks, as the config declares them."""

    def __init__(self, vocab: dict[str, int], ranks: dict[str, int], special: dict[str, int]):
        self.vocab = vocab
        self.ranks = ranks            # "left right" -> rank (lower merges first)
        self.special = special        # a special token's text -> its id
        # leftmost, then longest: at each position the alternatives are tried longest first
        self._specials = re.compile("|".join(re.escape(t) for t in sorted(special, key=len, reverse=True))) \
            if special else None

    @classmethod
    def load(cls, path: Path) -> Rules | None:
        with open(path, "rb") as f:
            return cls.of(load_json(f.read()))

    @classmethod
    def of(cls, config: object) -> Rules | None:
        """The rules of a tokenizer config, or None when it uses anything these rules do not follow."""
        if not isinstance(config, dict) or config.get("normalizer") != NORMALIZER \
                or config.get("pre_tokenizer") is not None:
            return None
        model = config.get("model")
        if not isinstance(model, dict) or model.get("type") != "BPE" or model.get("dropout") is not None \
                or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix") \
                or model.get("byte_fallback") is not True or model.get("ignore_merges", False) is not False:
            return None
        vocab, merges, added = model.get("vocab"), model.get("merges"), config.get("added_tokens")
        if not (isinstance(vocab, dict) and isinstance(merges, list) and isinstance(added, list)):
            return None
        try:   # every merge is "left right" with one space, and no token holds a space: the key is unambiguous
            if " " in "".join(vocab) or (merges and " ".join(merges).count(" ") != 2 * len(merges) - 1):
                return None
        except TypeError:
            return None   # a merge written as a pair, or not text
        if any(f"<0x{b:02X}>" not in vocab for b in range(256)):
            return None   # every character then has tokens: no unknown-token rule is ever needed
        special = {}
        for token in added:
            if not isinstance(token, dict) or any(token.get(k) != v for k, v in PLAIN_ADDED.items()) \
                    or not isinstance(token.get("content"), str) or not token["content"] \
                    or type(token.get("id")) is not int:
                return None
            special[token["content"]] = token["id"]
        return cls(vocab, dict(zip(merges, range(len(merges)))), special)

    def encode(self, text: str) -> list[int]:
        """The ids of `text`, special tokens added by the config left out (as `add_special_tokens=False`)."""
        out: list[int] = []
        for piece, special_id in self._split(text):
            if special_id is not None:
                out.append(special_id)
            elif piece:
                out.extend(self._word((SPACE + piece).replace(" ", SPACE)))
        return out

    def _split(self, text: str) -> list[tuple[str, int | None]]:
        if self._specials is None:
            return [(text, None)]
        pieces: list[tuple[str, int | None]] = []
        at = 0
        for m in self._specials.finditer(text):
            pieces += [(text[at:m.start()], None), (m.group(), self.special[m.group()])]
            at = m.end()
        pieces.append((text[at:], None))
        return pieces

    def _word(self, word: str) -> list[int]:
        vocab, ranks = self.vocab, self.ranks
        syms: list[str] = []
        for ch in word:
            if ch in vocab:
                syms.append(ch)
            else:
                syms.extend(f"<0x{b:02X}>" for b in ch.encode("utf-8"))   # a lone surrogate raises, as the library
        n = len(syms)
        nxt = list(range(1, n + 1))
        prev = list(range(-1, n - 1))
        alive = [True] * n
        queue = []
        for i in range(n - 1):
            rank = ranks.get(f"{syms[i]} {syms[i + 1]}")
            if rank is not None:
                queue.append((rank, i, syms[i] + syms[i + 1]))
        heapq.heapify(queue)
        while queue:
            _rank, i, merged = heapq.heappop(queue)
            j = nxt[i]
            if not alive[i] or j >= n or syms[i] + syms[j] != merged:
                continue   # merged away, or the pair is no longer the one queued
            syms[i] = merged
            alive[j] = False
            nxt[i] = nxt[j]
            if nxt[i] < n:
                prev[nxt[i]] = i
            if prev[i] >= 0:
                k = prev[i]
                rank = ranks.get(f"{syms[k]} {syms[i]}")
                if rank is not None:
                    heapq.heappush(queue, (rank, k, syms[k] + syms[i]))
            if nxt[i] < n:
                k = nxt[i]
                rank = ranks.get(f"{syms[i]} {syms[k]}")
                if rank is not None:
                    heapq.heappush(queue, (rank, i, syms[i] + syms[k]))
        return [vocab[s] for s, live in zip(syms, alive) if live]

