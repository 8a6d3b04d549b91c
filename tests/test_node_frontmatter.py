"""A node's frontmatter on disk is pinned byte for byte: the keys, their order and their form, both as `rose show`
renders a whole node and as the store writes a lesson's file (its meaning). The fixtures under
tests/fixtures/nodes/ were written by the code before Node's fields were grouped by concern, so existing stores
read and write exactly as they did."""
from __future__ import annotations

from pathlib import Path

import pytest

from rose.model import (TEXT, Claim, ClaimKind, Codec, MemoryType, Node, Origin, Outcome, Scope, Stats, Status, Trial,
                        Usage, key)
from rose.store import Layers
from rose.store import usage
from rose.store.frontmatter import parse_node, render_node
from rose.typedrecord import field

FIXTURES = Path(__file__).parent / "fixtures" / "nodes"


def full_node() -> Node:
    """Every field set away from its default, with unknown keys that must stay, in their place, after the rest."""
    return Node(
        id="n_full01", family="deploy", title="Migrate before deploy", body="Run the migration first.\n\nThen ship.",
        gist="migrate, then ship", level=2, status=Status.DISPUTED, origin=Origin.COMPRESSION,
        conflict="Is the migration step still needed?", disputes=["n_other1"], derived_from=["n_low001", "n_low002"],
        parents=["n_top001"], covers_tasks=["e_task01", "e_task02"],
        dropped=[Claim("use --fake-initial", ClaimKind.PARAMETER, holder="n_low001", rescues=2, attempts=3),
                 Claim("staging first", ClaimKind.STEP)],
        preserve=["keep the flag"],
        stats=Stats(attempts=5, successes=3, failures=1, expansions=2, rescues=1, last_used="2026-11-02T09:00:00Z"),
        memory_type=MemoryType.ORIENTATION, scope=Scope.GLOBAL, importance=0.75, confidence=0.65,
        tags=["django", "deploy"], evidence=["session://s1/message/3", "session://s2/message/9"],
        quotes={"session://s1/message/3": "always migrate first"}, outcome=Outcome.VERIFIED,
        created="2026-10-01T08:00:00Z", use_count=7, unreconciled=True,
        spans=["Run the migration first."], heldout_passed=3, heldout_total=4,
        trials=[Trial(episode="e_task03", strategy="delta-jump", kind="node", attached=["n_low002"],
                      claims=["staging first"], queue=[["n_low001", "use --fake-initial"]], tries=2, idle=1,
                      opened="2026-11-01T10:00:00Z")],
        gaps=["e_gap001"], last_attempt="2026-11-01T11:00:00Z", last_attempt_successes=2, rejections=1,
        related=["n_near01"], learned_importance=0.4,
        extra={"scope_reason": "the user said so", "duplicate_hits": 2, "promoted_from": "proj"},
    )


def minimal_node() -> Node:
    """Only the required fields: every optional key is left out of the file, every default one written."""
    return Node(id="n_min001", family="general", title="t", body="b", created="2026-10-01T08:00:00Z")


CASES = [("full", full_node), ("minimal", minimal_node)]


@pytest.mark.parametrize(("name", "make"), CASES)
def test_a_whole_node_renders_as_it_always_has(name: str, make) -> None:
    expected = (FIXTURES / f"{name}.md").read_bytes().decode("utf-8")
    node = make()
    assert render_node(node) == expected
    back = parse_node(expected)
    assert back == node
    assert render_node(back) == expected


@pytest.mark.parametrize(("name", "make"), CASES)
def test_a_lessons_file_holds_its_meaning_as_it_always_has(name: str, make) -> None:
    expected = (FIXTURES / f"{name}.meaning.md").read_bytes().decode("utf-8")
    node = make()
    assert render_node(node, usage.meaning(node)) == expected
    back = parse_node(expected)
    assert render_node(back, usage.meaning(back)) == expected


@pytest.mark.parametrize(("name", "make"), CASES)
def test_the_store_writes_the_same_bytes(layers: Layers, name: str, make) -> None:
    store = layers.project
    node = make()
    store.save(node)
    assert store.node_path(node).read_bytes() == (FIXTURES / f"{name}.meaning.md").read_bytes()
    assert store.get(node.id) == node   # the usage comes back from the log, the meaning from the file


def test_a_hand_edited_file_reads_and_renders_as_it_always_has() -> None:
    """Keys out of order, an unknown key among them, scalars where lists belong, a YAML date, short forms."""
    given = (FIXTURES / "hand-edited.in.md").read_bytes().decode("utf-8")
    node = parse_node(given)
    assert render_node(node) == (FIXTURES / "hand-edited.md").read_bytes().decode("utf-8")
    assert render_node(node, usage.meaning(node)) == (FIXTURES / "hand-edited.meaning.md").read_bytes().decode("utf-8")


# -- a new field is one edit, in its concern ---------------------------------------------------------------------
class WiderUsage(Usage):
    """A concern that gained two fields: nothing else is edited for them to be written, read and redacted."""

    shares: int = field(default=0, metadata=key(Codec(lambda v: v, lambda raw: int(raw or 0)), when=bool))
    remark: str = field(default="", metadata=key(TEXT))


class WiderNode(Node, WiderUsage):
    pass


def test_a_field_added_to_one_concern_round_trips_with_no_other_edit() -> None:
    node = WiderNode(id="n_wide01", family="general", title="t", body="b", created="2026-10-01T08:00:00Z",
                     shares=3, remark="worth sharing", extra={"kept": "as is"})
    data = node.to_dict()
    # written after every key a file holds today (old files keep their order), before the unknown ones
    assert list(data)[-3:] == ["shares", "remark", "kept"]
    assert list(data)[:-3] == list(minimal_node().to_dict())
    back = WiderNode.from_dict(data, node.body)
    assert back == node and back.extra == {"kept": "as is"}
    assert WiderNode.from_dict(minimal_node().to_dict(), "b").shares == 0   # absent: the default
    assert "shares" not in WiderNode(id="n_wide02", family="g", title="t", body="b").to_dict()   # `when`: if set


def test_a_text_field_is_redacted_because_its_codec_says_it_carries_words() -> None:
    from rose.store.store import redact_node

    secret = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 5
    node = WiderNode(id="n_wide03", family="general", title="t", body="b", remark=f"the key is {secret}",
                     evidence=[f"token {secret}"], derived_from=["n_low001"])
    redact_node(node)
    assert secret not in node.remark and secret not in node.evidence[0]
    assert node.id == "n_wide03" and node.derived_from == ["n_low001"]   # ids are not text


def test_redaction_can_be_asked_of_some_keys_only() -> None:
    node = full_node()
    node.redact_text(str.upper, where=lambda k: k in ("gist", "body", "heldout", "dropped"))
    assert (node.gist, node.body) == ("MIGRATE, THEN SHIP", "RUN THE MIGRATION FIRST.\n\nTHEN SHIP.")
    assert node.dropped[0].claim == "USE --FAKE-INITIAL" and node.dropped[0].holder == "n_low001"
    assert node.title == "Migrate before deploy" and node.preserve == ["keep the flag"]
