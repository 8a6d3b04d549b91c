"""Make a store with N realistic lessons (deterministic by seed), for tests and benchmarks."""
from __future__ import annotations

import random
from pathlib import Path

from rose.model import Claim, ClaimKind, Node, Scope
from rose.store import Store

TOPICS = {
    "retry": ["backoff", "jitter", "idempotent", "timeout", "circuit breaker", "429", "503"],
    "testing": ["pytest", "fixture", "integration", "flaky", "snapshot", "mock", "coverage"],
    "deploy": ["argo", "rollout", "helm", "canary", "kubectl", "dedupe key", "image tag"],
    "database": ["postgres", "migration", "index", "vacuum", "connection pool", "port 5433", "deadlock"],
    "cache": ["ttl", "redis", "eviction", "stampede", "invalidation", "feature flags"],
    "git": ["rebase", "signed commits", "hooks", "lfs", "bisect", "worktree"],
    "python": ["uv", "venv", "typing", "asyncio", "packaging", "ruff"],
    "frontend": ["vite", "react", "hydration", "css modules", "bundle size", "storybook"],
}
VERBS = ["Always", "Never", "Prefer to", "Remember to", "Avoid trying to", "Check before you"]
ACTIONS = ["pin the version of", "restart", "inspect the logs of", "read the docs for", "set a timeout on",
           "clear the cache of", "run the smoke test for", "ask the user before changing"]


def make_nodes(n: int, seed: int = 7) -> list[Node]:
    rng = random.Random(seed)
    families = list(TOPICS)
    nodes = []
    for i in range(n):
        fam = families[i % len(families)]
        a, b = rng.sample(TOPICS[fam], 2)
        verb, action = rng.choice(VERBS), rng.choice(ACTIONS)
        body = (f"{verb} {action} {a} when working on {b}.\n\n"
                f"Context: in lesson {i} the agent forgot that {a} interacts with {b}; the fix was to "
                f"{action} {a} first. Details: value={rng.randint(1, 9999)}, see docs/{fam}/{i}.md.")
        node = Node(id=f"n_{i:06x}", family=fam, title=f"{verb} {action} {a} ({i})", body=body,
                    gist=f"{verb} {action} {a} around {b}.", tags=[fam, a.split()[0]],
                    level=rng.choice([0, 0, 0, 1, 2]), importance=round(rng.uniform(0.3, 0.95), 2),
                    scope=Scope.PROJECT)
        if node.level:
            node.dropped = [Claim(f"{a} detail #{i}", ClaimKind.PARAMETER, holder=f"n_{max(i - 1, 0):06x}")]
        nodes.append(node)
    return nodes


def populate(root: Path, n: int, seed: int = 7) -> Store:
    store = Store.create(root, Scope.PROJECT)
    batch = make_nodes(n, seed)
    for start in range(0, len(batch), 500):
        store.save_many(batch[start:start + 500])
    return store
