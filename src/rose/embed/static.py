"""The offline default: WordLlama's 256-d static token embeddings, shipped inside its wheel (no download, ever).

WordLlama's own loader tries the network for its tokenizer and configures root logging at import, so we read its
two files directly: mean of the token vectors, L2-normalised (identical to `WordLlama.embed(norm=True)`).

The weight matrix (32,000 x 256 float16, 16 MB) is memory-mapped, not read: a query needs the rows of a handful of
tokens, and loading and converting the whole matrix was most of a `rose search` run in its own process (~90 ms).
Each gathered row is converted to float32 exactly as the whole matrix was, so every vector is the same, bit for
bit (tests/test_embed_static.py holds it against the whole-matrix embedder). A large batch (an index rebuild)
converts the whole matrix once instead, which is cheaper than converting many gathered rows.
"""
from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
WHOLE_MATRIX_AT = 64   # texts in one call from which converting the whole matrix beats converting gathered rows
PYTHON_TEXTS = 4         # at most this many texts in a call are tokenized in Python (a query, a probe) ...
PYTHON_CHARS = 16_000    # ... and this many characters in all (a long prompt twice): past that the library (long-lived processes)


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("wordllama")  # does not import the package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


_AVAILABLE: bool | None = None


def available() -> bool:
    """Are wordllama's files installed? Asked on every prompt: a True is remembered for the process (the warm
    helper), a False is looked up again (the user may install it meanwhile)."""
    global _AVAILABLE
    if not _AVAILABLE:
        pkg = _package_dir()
        _AVAILABLE = bool(pkg and (pkg / WEIGHTS).exists() and (pkg / TOKENIZER).exists())
    return _AVAILABLE


_SHARED: StaticEmbedder | None = None


def shared() -> StaticEmbedder:
    """One embedder for the process: it holds nothing that changes (the mapped weights, the tokenizer), and loading
    the tokenizer is most of its cost, which `rose recall`'s second pass paid again."""
    global _SHARED
    if _SHARED is None:
        _SHARED = StaticEmbedder()
    return _SHARED


class StaticEmbedder:
    name = "wordllama-l2_supercat-256"

    def __init__(self) -> None:
        from rose.embed import load_numpy
        from rose.embed.safetensors_map import map_single_tensor

        np = load_numpy()
        pkg = _package_dir()
        if pkg is None:
            raise RuntimeError("wordllama is not installed")
        self._np = np
        self._pkg = pkg
        self._weights = map_single_tensor(pkg / WEIGHTS)   # read-only, paged in as rows are gathered
        self._whole: Any = None                           # the float32 matrix, made by the first large batch
        self._library: Any = None                         # the tokenizers library's tokenizer, once loaded
        self._rules: Any = None                           # rose.embed.bpe's rules, while they serve
        self._python_chars = 0                            # characters tokenized by them so far

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's token ids. A few short texts (a query) are tokenized in Python (rose.embed.bpe), which loads
        in half the time the library does; anything larger, and everything once the Python rules have tokenized
        PYTHON_CHARS in all (a long-lived process: the warm helper), by the library, which is faster per text.
        Both give the same ids (tested)."""
        if self._library is None and len(texts) <= PYTHON_TEXTS \
                and self._python_chars + sum(map(len, texts)) <= PYTHON_CHARS:
            if self._rules is None:
                from rose.embed import bpe_table

                self._rules = bpe_table.load(self._pkg / TOKENIZER) or False   # False: the config needs the library
            if self._rules:
                self._python_chars += sum(map(len, texts))
                return [self._rules.encode(t) for t in texts]
        if self._library is None:
            from tokenizers import Tokenizer

            self._library = Tokenizer.from_file(str(self._pkg / TOKENIZER))
            self._library.no_truncation()
            self._rules = False   # the library serves from now on: the Python tables can go
        return [enc.ids for enc in self._library.encode_batch(texts, add_special_tokens=False)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        texts = list(texts)
        if self._whole is None and len(texts) >= WHOLE_MATRIX_AT:
            self._whole = self._weights.astype(np.float32)
        rows = len(self._weights)
        out = []
        for token_ids in self.token_ids(texts):
            ids = [i for i in token_ids if i < rows] or [0]
            if self._whole is not None:
                picked = self._whole[ids]
            else:
                picked = self._weights[ids].astype(np.float32)   # the same values the whole matrix holds
            vec = picked.mean(axis=0)
            norm = float(np.linalg.norm(vec)) or 1.0
            out.append((vec / norm).tolist())
        return out
