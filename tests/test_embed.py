"""rose.embed, directly: the chunking of long lessons, the vector blobs, embedding a store's lessons and ranking them
(the dense half of recall), with a small embedder made here whose vectors are known."""
from __future__ import annotations

import math

from rose.config import EmbedProvider, EmbedSettings
from rose.embed import CHUNK_TOKENS, CHUNKED, MAX_CHUNKS, Chunked, chunk_texts, embed_rows, from_blob, make_embedder, to_blob
from rose.embed.dense import rank_in_process
from rose.model import Node
from rose.store import Layers
from rose.tokens import estimate

WORDS = ("database", "port", "cache", "deploy", "retry", "lockfile")


class WordCounts:
    """One dimension per word of WORDS: a text's vector counts them, normalised (cosine = dot product)."""
    name = "word-counts"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        out = []
        for text in texts:
            low = text.lower()
            vec = [float(low.count(w)) for w in WORDS]
            norm = math.sqrt(sum(x * x for x in vec)) or 1.0
            out.append([x / norm for x in vec])
        return out


def test_a_short_lesson_is_one_text_and_a_long_one_is_cut_into_headed_chunks() -> None:
    assert chunk_texts("Title", ["a"], "gist", "short body") == ["Title\na\ngist\nshort body"]
    body = "\n\n".join(f"Paragraph {i}: " + "the deploy waits for the database port to open. " * 12
                       for i in range(40))
    chunks = chunk_texts("Deploys", ["ops"], "", body)
    assert 1 < len(chunks) <= MAX_CHUNKS
    assert all(c.startswith("Deploys\nops\n") for c in chunks)          # each chunk is headed by title and tags
    assert all(estimate(c) <= CHUNK_TOKENS + estimate("Deploys\nops\n") + 8 for c in chunks)


def test_vectors_round_trip_through_their_blob() -> None:
    vec = [0.25, -1.5, 3.0]
    assert list(from_blob(to_blob(vec))) == vec


def test_no_provider_means_no_embedder() -> None:
    assert make_embedder(EmbedSettings(provider=EmbedProvider.NONE)) is None


def test_a_chunking_embedder_returns_each_documents_chunks_side_by_side() -> None:
    base = WordCounts()
    chunked = Chunked(base)
    assert chunked.name == "word-counts" + CHUNKED    # its own space: vectors made without chunks never mix in
    long_body = "\n\n".join("the cache holds. " * 40 for _ in range(8))
    [short_vec, long_vec] = embed_rows(chunked, [("n_a00001", "Port", "db", "", "database port"),
                                                 ("n_b00001", "Cache", "ops", "", long_body)])
    assert len(short_vec) == len(WORDS)
    assert len(long_vec) % len(WORDS) == 0 and len(long_vec) > len(WORDS)   # one vector per chunk, concatenated


def test_a_stores_lessons_are_embedded_once_and_ranked_by_cosine(layers: Layers) -> None:
    store = layers.project
    store.save_many([Node(id="n_db0001", family="db", title="Database port", body="The database port is 5433."),
                     Node(id="n_ca0001", family="ops", title="Cache", body="Clear the cache after a lockfile change."),
                     Node(id="n_de0001", family="ops", title="Deploy", body="Retry a deploy once.")])
    embedder = WordCounts()
    assert store.embed_missing(embedder) == 3
    assert store.embed_missing(embedder) == 0                   # nothing new: nothing embedded again
    ranks = rank_in_process([store.index_db_path], embedder, "which port does the database use", 2)
    [(first, cos), (second, _)] = ranks[str(store.index_db_path)]
    assert first == "n_db0001" and cos > 0.9 and second != "n_db0001"
