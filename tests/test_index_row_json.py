"""The nodes row's JSON columns (claims, patches, manifest) are written by one shared encoder instead of
json.dumps(..., ensure_ascii=False) building one a call, and patches is "[]" without encoding when no claim has
rescued: the same text as json.dumps writes, for claims with and without rescues, non-ASCII and odd text, trials."""
from __future__ import annotations

import json

from rose.model import Claim, ClaimKind, Trial
from rose.store import index as index_module
from rose.store import usage
from tests.support.gen_store import make_nodes

COLUMNS = index_module._NODE_COLUMNS


def _reference(node) -> dict[str, str]:
    dropped = node.dropped
    claims = json.dumps([[k, c.claim] for k, c in zip(usage.claim_keys(node), dropped)], ensure_ascii=False) \
        if dropped else "[]"
    patches = json.dumps([c.claim for c in dropped if c.rescues > 0], ensure_ascii=False) if dropped else "[]"
    if not dropped and not node.trials:
        manifest = json.dumps({"dropped": [], "trials": []}, ensure_ascii=False)
    else:
        manifest = json.dumps({
            "dropped": [[k, {n: v for n, v in c.to_dict().items() if n not in usage.CLAIM_COUNTERS}]
                        for k, c in zip(usage.claim_keys(node), dropped)],
            "trials": [[k, {n: v for n, v in t.to_dict().items() if n not in usage.TRIAL_COUNTERS}]
                       for k, t in zip(usage.trial_keys(node), node.trials)]}, ensure_ascii=False)
    return {"claims": claims, "patches": patches, "manifest": manifest}


def test_the_json_columns_are_what_json_dumps_writes() -> None:
    nodes = make_nodes(60)
    odd = ["café ✓ naïve", 'quote " and \\ backslash', "tab\tnew\nline", "\u2028 sep", "emoji 🚀", ""]
    for i, node in enumerate(nodes[:30]):
        if i % 3 == 0:
            node.dropped = [Claim(text, ClaimKind.FACT, holder="n_000001", rescues=(j + i) % 2, attempts=j)
                            for j, text in enumerate(odd[: 1 + i % len(odd)])]
        if i % 4 == 0:
            node.trials = [Trial(episode=f"e_{i}", attached=[odd[i % len(odd)]], claims=["a"], queue=[["b"]])]
    seen = {"rescuing": 0, "none rescuing": 0, "trials only": 0}
    for node in nodes:
        row, _cold = index_module._node_row(node, f"nodes/{node.family}/{node.id}.md", None)
        got = {name: row[COLUMNS.index(name)] for name in ("claims", "patches", "manifest")}
        assert got == _reference(node), node.id
        if node.dropped:
            seen["rescuing" if any(c.rescues for c in node.dropped) else "none rescuing"] += 1
        elif node.trials:
            seen["trials only"] += 1
    assert all(seen.values()), seen
