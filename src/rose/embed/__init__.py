"""Dense embeddings for recall: an offline static model by default, an OpenAI-compatible endpoint by choice.

Embedders are heavy to load (numpy, a tokenizer, 16 MB of weights), so nothing here is imported on the per-prompt
hook path: the hook asks the warm helper (rose.embed.daemon) and falls back to lexical search when it is absent.
Vectors are L2-normalised float32, stored in the index as bytes, so a dot product is a cosine.
"""
from __future__ import annotations

import array
from collections.abc import Sequence
from typing import Protocol

from rose.config import EmbedProvider, EmbedSettings

MAX_EMBED_CHARS = 2000  # title, tags, gist and the head of the body: enough to place a lesson, bounded cost


class Embedder(Protocol):
    name: str  # identifies the vector space: vectors of different names are never compared

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbedUnavailable(Exception):
    """The configured embedder cannot run here (not installed, endpoint down); callers go lexical-only."""


def make_embedder(settings: EmbedSettings) -> Embedder | None:
    """The configured embedder, or None for lexical-only. `auto` quietly means none when no model is installed."""
    if settings.provider is EmbedProvider.NONE:
        return None
    if settings.provider is EmbedProvider.OPENAI:
        from rose.embed.openai_http import OpenAIEmbedder

        return OpenAIEmbedder(settings.base_url, settings.model, settings.api_key_env)
    from rose.embed.static import StaticEmbedder, available

    if not available():
        if settings.provider is EmbedProvider.WORDLLAMA:
            raise EmbedUnavailable("embed.provider is wordllama but the wordllama package is not installed")
        return None
    return StaticEmbedder()


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

        return OpenAIEmbedder(settings.base_url, settings.model, settings.api_key_env).name
    from rose.embed.static import StaticEmbedder, available

    return StaticEmbedder.name if available() else None


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
