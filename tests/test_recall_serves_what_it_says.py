"""Recall serves what it says: the fits-the-budget gate counts the global sub-cap, what is left out is chosen by
importance and relevance and counted on the notice; orientation arrives as working assumptions to verify; a long
experience that does not fit whole arrives as a card with its path; the same text taught twice is stored once,
found in code with no model; a minted lesson keeps the user's quote with its message handle."""
from __future__ import annotations

from rose.config import Settings
from rose.learn.consolidate import Action
from rose.learn.teach import teach
from rose.model import MemoryType, Node, Scope
from rose.recall import recall
from rose.store import Layers
from tests.conftest import run_rose


def _settings() -> Settings:
    s = Settings()
    s.embed.provider = s.embed.provider.NONE
    s.recall.selector = s.recall.selector.HYBRID
    return s


def _global(layers: Layers, i: int, importance: float, words: int = 60) -> Node:
    store = layers.writable(Scope.GLOBAL)
    node = Node(id=f"n_glob{i:04d}", family="habits", title=f"Habit {i} for deploys", scope=Scope.GLOBAL,
                body=f"Habit {i}: before any deploy, check the deploy dashboard. " + "detail " * words,
                importance=importance)
    store.save(node)
    return node


def test_global_lessons_past_their_sub_cap_are_chosen_by_importance_and_counted(layers: Layers) -> None:
    layers.project.save(Node(id="n_proj0001", family="local", title="Local deploy rule",
                             body="Deploys of this repository go through make ship."))
    low = [_global(layers, i, 0.3) for i in range(4)]
    high = _global(layers, 9, 0.95)
    s = _settings()
    s.recall.global_max_tokens = 200   # room for about one global lesson; the whole store fits the pack budget
    result = recall(layers, "how do we deploy?", session_id="g", settings=s)
    assert result.trace["gate"].startswith("store outgrows")          # the sub-cap makes it a choice
    served = [i.id for i in result.injected]
    assert "n_proj0001" in served and high.id in served
    assert sum(1 for n in low if n.id in served) == 0
    assert "left out (over the budget)" in result.notice and result.trace["left_out"] >= 1


def test_orientation_is_a_working_assumption_and_a_long_experience_a_card(layers: Layers) -> None:
    layers.project.save(Node(id="n_orient01", family="arch", title="Queue layout", memory_type=MemoryType.ORIENTATION,
                             body="Jobs go through the redis queue named work."))
    long_body = "## Objective\nShip the migration.\n" + "\n".join(f"Step {i}: run stage {i} and check it." for i in
                                                                 range(400))
    layers.project.save(Node(id="n_exper001", family="arch", title="Migration experience",
                             memory_type=MemoryType.EXPERIENCE, body=long_body))
    s = _settings()
    s.recall.max_pack_tokens = 1200
    result = recall(layers, "migration queue work stage", session_id="o", settings=s)
    block = result.block
    assert 'type="orientation"' in block and "Working assumption (verify before relying on it)" in block
    assert 'type="experience"' in block and 'card="true"' in block and "n_exper001.md" in block
    assert "Step 399" not in block and "Step 1:" in block


def test_the_same_text_taught_twice_is_stored_once_without_a_model(layers: Layers) -> None:
    first = teach(layers, "Use   the staging DB for migrations.", settings=_settings(), judge=None)
    again = teach(layers, "use the staging db for migrations.", settings=_settings(), judge=None)
    assert first.action is Action.UNRECONCILED and again.action is Action.DUPLICATE
    assert again.matched == first.node.id and len(list(layers.project.nodes_dir.rglob("*.md"))) == 1


def test_a_minted_lesson_keeps_the_users_quote_and_shows_it(layers: Layers) -> None:
    from rose.learn.consolidate import NewLesson, consolidate

    result = consolidate(layers, NewLesson(body="Run the linter before committing.", title="Lint first",
                                           evidence=["session://s1/message/3"],
                                           quote="always run the linter before you commit"), None, _settings())
    node = layers.project.get(result.node.id)
    assert node.quotes == {"session://s1/message/3": "always run the linter before you commit"}
    shown = run_rose("show", node.id, cwd=layers.cwd).stdout
    assert "always run the linter before you commit" in shown and "session://s1/message/3" in shown
