"""A test embedder whose every vector is known: four dimensions, one per word, counted and normalised."""
from __future__ import annotations


class FourWords:
    name = "four-words"
    words = ("alpha", "beta", "gamma", "delta")

    def embed(self, texts):
        out = []
        for text in texts:
            vec = [float(text.lower().count(w)) + 0.01 * i for i, w in enumerate(self.words)]
            norm = sum(x * x for x in vec) ** 0.5
            out.append([x / norm for x in vec])
        return out
