"""Dense embeddings for recall: an offline static model by default, an OpenAI-compatible endpoint by choice.

Embedders are heavy to load (numpy, a tokenizer, 16 MB of weights), so nothing here is imported on the per-prompt
hook path: the hook asks the warm helper (rose.embed.daemon) and falls back to lexical search when it is absent.
Vectors are L2-normalised float32, stored in the index as bytes, so a dot product is a cosine.

A long lesson is not one vector: averaged over many sections, the one fact a prompt needs is diluted by the rest.
It is cut at paragraph and line boundaries into chunks of at most CHUNK_TOKENS, each carrying the lesson's title
and tags, and its vectors are stored one after another in the lesson's row; the lesson's cosine is its best
chunk's (rose.embed.dense). A lesson that fits one chunk keeps exactly the one vector it always had.
"""
from __future__ import annotations

import array
from collections.abc import Sequence

from rose.config import EmbedProvider, EmbedSettings
from rose.errors import EmbedUnavailable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_EMBED_CHARS = 2000  # a one-chunk lesson's text (title, tags, gist, body), as it always was
CHUNK_TOKENS = 128      # a long lesson is embedded as chunks of at most this many tokens (title and tags on each)
MAX_CHUNKS = 48         # ... and at most this many of them: a 6,000-token lesson; past that, its head
CHUNKED = "+c128"       # the suffix of a chunking embedder's space: vectors made without chunks never mix in


# numpy's BLAS (OpenBLAS) keeps a thread per core spinning after each product, waiting for the next: a query that
# comes a moment after the last one costs ~60 ms of CPU that way (10 spaced 10,000 x 256 products: 0.59 s of CPU
# with the default, 0.012 s with one thread). rose's products are one query against a store's vectors, about a
# millisecond on one thread, so one thread it is, unless the user has chosen otherwise.
BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def load_numpy() -> Any:
    """numpy, its BLAS on one thread (BLAS_THREADS): every module of rose's that uses numpy imports it here."""
    import os

    for name, value in BLAS_THREADS.items():
        os.environ.setdefault(name, value)   # read once, when numpy loads its BLAS
    import numpy

    return numpy


if TYPE_CHECKING:  # a Protocol only the type checker reads: the prompt hook loads this module without typing
    from typing import Protocol

    class Embedder(Protocol):
        name: str  # identifies the vector space: vectors of different names are never compared

        def embed(self, texts: Sequence[str]) -> list[list[float]]: ...




def make_embedder(settings: EmbedSettings) -> Embedder | None:
    """The configured embedder, or None for lexical-only. `auto` quietly means none when no model is installed."""
    if settings.provider is EmbedProvider.NONE:
        return None
    if settings.provider is EmbedProvider.OPENAI:
        from rose.embed.openai_http import OpenAIEmbedder

        return Chunked(OpenAIEmbedder(settings.base_url, settings.model, settings.api_key_env))
    from rose.embed.static import available, shared

    if not available():
        if settings.provider is EmbedProvider.WORDLLAMA:
            raise EmbedUnavailable("embed.provider is wordllama but the wordllama package is not installed")
        return None
    return Chunked(shared())


class Chunked:
    """An embedder whose documents are embedded chunk by chunk (queries stay one vector)."""

    def __init__(self, base: Embedder):
        self.base = base
        self.name = base.name + CHUNKED

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.base.embed(texts)

    def embed_documents(self, docs: Sequence[tuple[str, Sequence[str], str, str]]) -> list[list[float]]:
        """(title, tags, gist, body) each -> its chunks' vectors, concatenated (one vector when it fits a chunk)."""
        pieces = [chunk_texts(*d) for d in docs]
        flat = self.base.embed([t for p in pieces for t in p])
        out, at = [], 0
        for p in pieces:
            out.append([x for vec in flat[at:at + len(p)] for x in vec])
            at += len(p)
        return out


def embed_rows(embedder: Embedder, rows: Sequence[tuple[str, str, str, str, str]]) -> list[list[float]]:
    """Vectors for index rows (id, title, tags, gist, body): chunked when the embedder chunks."""
    docs = [(t, tags.split(), g, b) for _i, t, tags, g, b in rows]
    if hasattr(embedder, "embed_documents"):
        return embedder.embed_documents(docs)
    return embedder.embed([node_text(*d) for d in docs])


def chunk_texts(title: str, tags: Sequence[str], gist: str, body: str) -> list[str]:
    """The texts a lesson is embedded as: itself when it fits CHUNK_TOKENS, else chunks cut at paragraph, line,
    sentence and finally word boundaries, each headed by the title and tags (the gist rides with the first)."""
    from rose.tokens import estimate

    whole = node_text(title, tags, gist, body)
    if estimate(f"{title}\n{' '.join(tags)}\n{gist}\n{body}") <= CHUNK_TOKENS:
        return [whole]
    head = f"{title}\n{' '.join(tags)}\n"
    room = max(32, CHUNK_TOKENS - estimate(head))
    parts = _pieces(f"{gist}\n\n{body}" if gist else body, room)
    chunks: list[str] = []
    current = ""
    for piece in parts:
        joined = f"{current}\n{piece}" if current else piece
        if current and estimate(joined) > room:
            chunks.append(head + current)
            current = piece
        else:
            current = joined
        if len(chunks) >= MAX_CHUNKS:
            break
    if current and len(chunks) < MAX_CHUNKS:
        chunks.append(head + current)
    return chunks


def _pieces(text: str, room: int) -> list[str]:
    """Paragraphs, split further (lines, sentences, words) until each fits `room` tokens."""
    import re

    from rose.tokens import estimate

    out: list[str] = []
    for para in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not para:
            continue
        if estimate(para) <= room:
            out.append(para)
            continue
        for line in (x.strip() for x in para.splitlines()):
            if not line:
                continue
            if estimate(line) <= room:
                out.append(line)
                continue
            for sentence in re.split(r"(?<=[.!?;:])\s+", line):
                if estimate(sentence) <= room:
                    out.append(sentence)
                    continue
                words, cur = sentence.split(), ""
                for w in words:
                    nxt = f"{cur} {w}" if cur else w
                    if cur and estimate(nxt) > room:
                        out.append(cur)
                        cur = w[: room * 4]
                    else:
                        cur = nxt[: room * 4]
                if cur:
                    out.append(cur)
    return out


def node_text(title: str, tags: Sequence[str], gist: str, body: str) -> str:
    return f"{title}\n{' '.join(tags)}\n{gist}\n{body}"[:MAX_EMBED_CHARS]


def to_blob(vector: Sequence[float]) -> bytes:
    return array.array("f", vector).tobytes()


def from_blob(blob: bytes) -> array.array:
    vec = array.array("f")
    vec.frombytes(blob)
    return vec


def embedder_name(settings: EmbedSettings) -> str | None:
    """The vector space the configured embedder writes, known without loading the model (None: lexical only)."""
    if settings.provider is EmbedProvider.NONE:
        return None
    if settings.provider is EmbedProvider.OPENAI:
        from rose.embed.openai_http import OpenAIEmbedder

        return OpenAIEmbedder(settings.base_url, settings.model, settings.api_key_env).name + CHUNKED
    from rose.embed.static import StaticEmbedder, available

    return StaticEmbedder.name + CHUNKED if available() else None


def catch_up(stores, settings: EmbedSettings) -> tuple[str, list[tuple[int, int]]] | None:
    """Embed whatever lacks a vector in every store; (model name, [(embedded now, vectors in total)] per store),
    or None when no embedding model is configured or installed (recall is then lexical only). The model is loaded
    only when something is actually missing."""
    name = embedder_name(settings)
    if name is None:
        if settings.provider is EmbedProvider.WORDLLAMA:
            raise EmbedUnavailable("embed.provider is wordllama but the wordllama package is not installed")
        return None
    embedder = None
    counts = []
    for store in stores:
        done = 0
        if store.index.missing_embeddings(name, limit=1):
            embedder = embedder or make_embedder(settings)
            done = store.embed_missing(embedder)
        counts.append((done, store.index.embedded_count(name)))
    return name, counts
