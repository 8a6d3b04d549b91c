"""A store term in its everyday sense is no evidence on its own: when every term a prompt shares with the store is an
everyday word (a term only because it is some lesson's tag: "test", "package", "queue") and no two of them are held
by one lesson, and the prompt has three or more words beside one term to say what it is about, a lexical hit needs
two terms, an exact phrase or three selective words, and a dense agreement does not stand in for missing evidence.
A short prompt keeps the store's sense. A technical word beside the term, two terms a lesson holds together, or a lesson's
whole title still admit."""
from __future__ import annotations

from rose.recall import candidates as cand
from rose.store import Layers
from tests.support.noted_store import fill
from rose.store import index as index_mod
from rose.store.index import (LexicalHit, PromptEvidence, admits, corroborable, everyday_sense, term_pairs_query)
from rose.words import everyday

LESSONS = [
    ("n_flaky001", "Quarantine a flaky test",
     "A flaky test in the auth suite goes to quarantine over the weekend; the nightly run retries it.", ["test"]),
    ("n_pkg00001", "Mark the library typed",
     "Ship a py.typed marker inside the package so the checkers downstream read our annotations.", ["package"]),
    ("n_queue001", "Security review of the queue worker",
     "The queue worker runs with its own security context; a new consumer needs the review first.", ["queue"]),
    ("n_sec00001", "Rotate the signing key",
     "Security keys rotate every ninety days; the old one stays valid for a day.", ["security"]),
]




def _hits(layers: Layers, prompt: str) -> dict[str, LexicalHit]:
    return {h.id: h for h in layers.project.index.search_evidence(prompt)}


def test_the_words_of_these_lessons_are_what_the_rule_assumes() -> None:
    common = everyday()
    assert {"test", "package", "queue", "security", "weekend", "ship", "worker", "drive", "car"} <= common
    assert not {"flaky", "auth", "suite", "py"} & common


def test_a_lone_term_in_its_everyday_sense_admits_nothing(layers: Layers) -> None:
    fill(layers, LESSONS)
    hit = _hits(layers, "what should I look at when I test drive a car this weekend?")["n_flaky001"]
    # "test" (a tag) and "weekend" are two selective words of the lesson: enough before, not in this sense
    assert hit.selective == 2 and hit.terms == 1 and not hit.phrase
    assert not hit.admitted and not hit.corroborable
    hit = _hits(layers, "how long does a package take to ship to another country?")["n_pkg00001"]
    assert hit.selective == 2 and not hit.admitted and not hit.corroborable


def test_a_dense_agreement_does_not_stand_in_for_it(layers: Layers) -> None:
    fill(layers, LESSONS)
    hit = _hits(layers, "what should I look at when I test drive a car this weekend?")["n_flaky001"]
    row = layers.project.index.rows_by_id([hit.id])[hit.id]
    c = cand.Candidate(hit.id, layers.project, row, lexical_rank=1, bm25=hit.score, admitted=hit.admitted,
                       corroborable=hit.corroborable, dense_rank=1, dense_cos=0.33)
    assert not cand.lexical_evidence(c)


def test_the_same_term_beside_a_technical_word_admits(layers: Layers) -> None:
    fill(layers, LESSONS)
    # "flaky", "auth" and "suite" are no everyday English: the prompt is in the store's sense of "test"
    hit = _hits(layers, "fix the flaky test in the auth suite")["n_flaky001"]
    assert hit.admitted and hit.corroborable
    assert _hits(layers, "the package needs a py.typed marker")["n_pkg00001"].admitted


def test_two_terms_one_lesson_holds_together_admit(layers: Layers) -> None:
    fill(layers, LESSONS)
    # "queue" and "security" are both everyday words, both tags, and one lesson holds both: at home together
    hits = _hits(layers, "is the queue worker covered by the security review?")
    assert hits["n_queue001"].admitted and hits["n_queue001"].terms >= 2
    assert hits["n_queue001"].corroborable


def test_two_terms_no_lesson_holds_together_are_in_their_everyday_sense(layers: Layers) -> None:
    fill(layers, LESSONS)
    # "package" and "test" are never in one lesson: a parcel and an exam, as far as this store can tell
    hits = _hits(layers, "will the package arrive before the test on the weekend?")
    assert not any(h.admitted or h.corroborable for h in hits.values())


def test_a_title_match_admits(layers: Layers) -> None:
    fill(layers, LESSONS)
    # every content word of the title, in a prompt otherwise in the everyday sense
    hit = _hits(layers, "should we quarantine a flaky test over the weekend?")["n_flaky001"]
    assert hit.named and hit.admitted
    hit = _hits(layers, "security review of the queue worker, before the holiday?")["n_queue001"]
    assert hit.named and hit.admitted


def test_the_rule_as_pure_functions() -> None:
    plain = PromptEvidence(selective=3, present=3, anchored=True, elsewhere=False, everyday_sense=True)
    usual = PromptEvidence(selective=3, present=3, anchored=True, elsewhere=False)
    lone = LexicalHit("n_x", 5.0, words=2, selective=2, terms=1)
    assert admits(lone, usual) and not admits(lone, plain)
    assert admits(LexicalHit("n_x", 5.0, words=2, selective=2, terms=1, phrase=True), plain)
    assert admits(LexicalHit("n_x", 5.0, words=2, selective=2, terms=2), plain)
    assert admits(LexicalHit("n_x", 5.0, words=3, selective=index_mod.EVERYDAY_SENSE_SELECTIVE, terms=1), plain)
    assert admits(LexicalHit("n_x", 1.0, named=True), plain)
    assert corroborable(usual) and not corroborable(plain)


def test_which_prompts_are_in_their_everyday_sense() -> None:
    common = frozenset({"test", "package", "queue", "security"})

    def never(_terms: list[str]) -> bool:
        raise AssertionError("asked only when every term is everyday")

    assert not everyday_sense([], 4, common, never)                               # no term: the anchor rule decides
    assert not everyday_sense(["test", "pytest"], 4, common, never)               # a technical term
    assert everyday_sense(["test"], 4, common, lambda _t: False)                  # one everyday term, alone
    assert everyday_sense(["queue", "security"], 4, common, lambda _t: False)     # two no lesson holds together
    assert not everyday_sense(["queue", "security"], 4, common, lambda _t: True)  # two a lesson holds together
    # fewer than SENSE_CONTEXT_MIN words beside the terms: no context to judge a sense by, the store's is taken
    assert index_mod.SENSE_CONTEXT_MIN == 3
    assert not everyday_sense(["test"], 2, common, never)
    assert everyday_sense(["test"], 3, common, lambda _t: False)


def test_a_short_prompt_keeps_the_store_sense_of_its_term(layers: Layers) -> None:
    fill(layers, LESSONS)
    # "test" and "weekend" again, but nothing else beside them: a coding session's "test", as before the rule
    hit = _hits(layers, "test over the weekend")["n_flaky001"]
    assert hit.selective == 2 and hit.terms == 1 and not hit.phrase
    assert hit.admitted and hit.corroborable
    # a ticket number is no context either
    assert _hits(layers, "test over the weekend #4521 v2")["n_flaky001"].admitted


def test_the_pairs_asked_in_one_lookup() -> None:
    assert term_pairs_query(["test"]) is None
    assert term_pairs_query(["test", "tests"]) is None                          # stem-mates: one word to the index
    assert term_pairs_query(["queue", "security", "pool"]) == \
        '("queue" AND ("security" OR "pool")) OR ("security" AND ("pool"))'
    many = [f"w{i}" for i in range(20)]
    assert term_pairs_query(many).count("AND") == index_mod.SENSE_TERMS_CHECKED - 1   # bounded, whatever the prompt



def test_the_index_lookup_behind_the_ranked_hits(layers: Layers) -> None:
    fill(layers, LESSONS)
    index = layers.project.index
    assert index._share_a_lesson(["queue", "security"])          # n_queue001 holds both
    assert not index._share_a_lesson(["package", "test"])         # no lesson does
    assert not index._share_a_lesson(["test"])                    # nothing to pair: no lookup at all
