"""A prompt that shares no term with the store (every word it has in common with the lessons is everyday English and
no lesson's tag) gets no dense agreement: its lexical hit, never admitted on its own, is not served on the dense
model's say either. A prompt with one term keeps the agreement. (Issue 13's rule pre-registered before held-out
round 5; these prompts are written for the test, not taken from the bench.)"""
from __future__ import annotations

from rose.model import Node
from rose.recall import candidates as cand
from rose.store import Layers
from rose.store.index import LexicalHit, PromptEvidence, corroborable
from rose.words import everyday

LESSONS = [
    ("n_garden01", "Water the shared garden at dawn",
     "The garden behind the office is watered at dawn by the irrigation job; summer needs two runs.", ["irrigation"]),
    ("n_room0001", "Book the big meeting room a week ahead",
     "The big room is booked a week ahead in the team's shared planner; a family day needs two rooms.", ["room"]),
]


def _fill(layers: Layers, filler: int = 40) -> None:
    nodes = [Node(id=i, family="notes", title=t, body=b, gist=b[:60], tags=tags) for i, t, b, tags in LESSONS]
    nodes += [Node(id=f"n_fill{i:04d}", family="notes", title=f"Note {i} on the service",
                   body=f"Routine note {i} about the service configuration.", gist="routine note", tags=["notes"])
              for i in range(filler)]
    layers.project.save_many(nodes)


def _hit(layers: Layers, prompt: str, node_id: str) -> LexicalHit:
    return {h.id: h for h in layers.project.index.search_evidence(prompt)}[node_id]


def _agreed(layers: Layers, hit: LexicalHit) -> bool:
    """Whether the hit counts as lexical evidence once the dense model ranks it first at a middling cosine."""
    row = layers.project.index.rows_by_id([hit.id])[hit.id]
    c = cand.Candidate(hit.id, layers.project, row, lexical_rank=1, bm25=hit.score, admitted=hit.admitted,
                       corroborable=hit.corroborable, dense_rank=1, dense_cos=0.33)
    return cand.lexical_evidence(c)


def test_the_words_of_these_prompts_are_what_the_rule_assumes() -> None:
    common = everyday()
    assert {"water", "garden", "summer", "hot", "book", "meeting", "room", "week", "family", "home"} <= common
    assert "irrigation" not in common


def test_a_prompt_with_no_term_gets_no_dense_agreement(layers: Layers) -> None:
    _fill(layers)
    hit = _hit(layers, "how often should I water the garden in a hot summer?", "n_garden01")
    assert hit.words >= 2 and not hit.admitted and not hit.named     # everyday words only: no lexical evidence
    assert not hit.corroborable and not _agreed(layers, hit)
    hit = _hit(layers, "a good book to read at home on a hot summer week", "n_room0001")
    assert not hit.admitted and not hit.corroborable and not _agreed(layers, hit)


def test_one_term_keeps_the_agreement(layers: Layers) -> None:
    _fill(layers)
    # "irrigation" is a word of the store and no everyday English: the prompt is anchored
    hit = _hit(layers, "does the irrigation job water it twice in summer?", "n_garden01")
    assert hit.corroborable and _agreed(layers, hit)
    # an everyday word that is some lesson's tag ("room") is a term too (in a prompt too short for its sense to be
    # judged everyday: tests/test_retrieval_sense.py)
    hit = _hit(layers, "book the meeting room", "n_room0001")
    assert hit.corroborable and _agreed(layers, hit)


def test_the_agreement_rule_as_a_pure_function() -> None:
    assert corroborable(PromptEvidence(selective=2, present=2, anchored=True, elsewhere=False))
    assert not corroborable(PromptEvidence(selective=2, present=2, anchored=False, elsewhere=False))
    assert not corroborable(PromptEvidence(selective=2, present=2, anchored=True, elsewhere=True))
    assert not corroborable(PromptEvidence(selective=2, present=2, anchored=True, elsewhere=False,
                                           everyday_sense=True))
