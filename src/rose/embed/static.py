"""The offline default: WordLlama's 256-d static token embeddings, shipped inside its wheel (no download, ever).

WordLlama's own loader tries the network for its tokenizer and configures root logging at import, so we read its
two files directly: mean of the token vectors, L2-normalised (identical to `WordLlama.embed(norm=True)`).
"""
from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


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


class StaticEmbedder:
    name = "wordllama-l2_supercat-256"

    def __init__(self) -> None:
        from rose.embed import load_numpy

        np = load_numpy()
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        pkg = _package_dir()
        if pkg is None:
            raise RuntimeError("wordllama is not installed")
        self._np = np
        self._matrix = next(iter(load_file(str(pkg / WEIGHTS)).values())).astype(np.float32)
        self._tokenizer = Tokenizer.from_file(str(pkg / TOKENIZER))
        self._tokenizer.no_truncation()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        np = self._np
        out = []
        for enc in self._tokenizer.encode_batch(list(texts), add_special_tokens=False):
            ids = [i for i in enc.ids if i < len(self._matrix)] or [0]
            vec = self._matrix[ids].mean(axis=0)
            norm = float(np.linalg.norm(vec)) or 1.0
            out.append((vec / norm).tolist())
        return out
