"""Write the corpus: sessions of both agents, every CLI version, sizes from a few KB to several MB.

    python bench/transcript_corpus/generate.py --out /tmp/corpus [--seed 7] [--sessions 120]

Writes one directory per session (its transcript, and a Claude session's sub-agent files) and `manifest.json`:
[{name, agent, version, size_class, path, files, bytes, facts}], facts as scenario.Script.facts.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from claude import VERSIONS as CLAUDE_VERSIONS  # noqa: E402
from claude import ClaudeRenderer  # noqa: E402
from codex import VERSIONS as CODEX_VERSIONS  # noqa: E402
from codex import CodexRenderer  # noqa: E402
from scenario import Author  # noqa: E402

SIZE_MIX = (("tiny", 0.18), ("small", 0.30), ("medium", 0.27), ("large", 0.15), ("huge", 0.10))


def size_classes(n: int) -> list[str]:
    out: list[str] = []
    for name, share in SIZE_MIX:
        out += [name] * round(n * share)
    while len(out) < n:
        out.append("medium")
    return out[:n]


def build_corpus(out: Path, seed: int = 7, sessions: int = 120) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    per_agent = max(1, sessions // 2)
    for agent, versions in (("claude", CLAUDE_VERSIONS), ("codex", CODEX_VERSIONS)):
        classes = size_classes(per_agent)
        for i, size in enumerate(classes):
            rng = random.Random(f"{seed}-{agent}-{i}")
            version = versions[i % len(versions)]
            name = f"{agent}-{i:03d}-{size}-{version}"
            script = Author(rng, agent, version, size, name).build()
            where = out / name
            where.mkdir(exist_ok=True)
            renderer = (ClaudeRenderer if agent == "claude" else CodexRenderer)(script, rng, where)
            files = renderer.render()
            manifest.append({"name": name, "agent": agent, "version": version, "size_class": size,
                             "path": str(files[0]), "files": [str(f) for f in files],
                             "bytes": files[0].stat().st_size, "facts": script.facts})
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sessions", type=int, default=120)
    args = ap.parse_args()
    started = time.monotonic()
    manifest = build_corpus(args.out, args.seed, args.sessions)
    total = sum(m["bytes"] for m in manifest)
    print(f"{len(manifest)} sessions, {total / 1e6:.1f} MB, in {time.monotonic() - started:.1f}s -> {args.out}")
    for cls, _ in SIZE_MIX:
        sizes = [m["bytes"] for m in manifest if m["size_class"] == cls]
        if sizes:
            print(f"  {cls:7s} {len(sizes):3d} sessions, {min(sizes) / 1e3:8.0f} KB to {max(sizes) / 1e3:8.0f} KB")


if __name__ == "__main__":
    main()
