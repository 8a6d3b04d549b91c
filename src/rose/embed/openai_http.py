"""Bring your own embeddings: any OpenAI-compatible `/v1/embeddings` endpoint (Ollama, vLLM, llama.cpp, OpenAI)."""
from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Sequence

from rose.text import load_json

TIMEOUT_S = 10.0


class OpenAIEmbedder:
    def __init__(self, base_url: str, model: str, api_key_env: str):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.name = f"openai:{model}@{self.base_url}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from rose.embed import EmbedUnavailable

        headers = {"Content-Type": "application/json"}
        from rose import environment

        key = environment.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = json.dumps({"model": self.model, "input": list(texts)}).encode()
        request = urllib.request.Request(f"{self.base_url}/embeddings", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:  # noqa: S310 - configured URL
                data = load_json(response.read())
            rows = sorted(data["data"], key=lambda r: r.get("index", 0))
            vectors = [[float(x) for x in r["embedding"]] for r in rows]
        except (urllib.error.URLError, OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbedUnavailable(f"embeddings endpoint {self.base_url}: {exc}") from None
        if len(vectors) != len(texts):
            raise EmbedUnavailable(f"embeddings endpoint returned {len(vectors)} vectors for {len(texts)} texts")
        out = []
        for v in vectors:
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v])
        return out
