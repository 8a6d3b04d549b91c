"""Everyday words are no evidence on their own: a prompt that shares only everyday English words with a store admits
nothing lexically; a technical term (a word outside the general-English table), an everyday word that is some
lesson's tag, or a lesson's whole title still admit; and in a large store a prompt mostly made of words the store has
never seen needs two terms per hit, with no dense agreement standing in for them."""
from __future__ import annotations

from rose.config import EmbedProvider, Selector, Settings
from rose.model import Node
from rose.recall import candidates as cand
from rose.recall import recall
from rose.store import Layers
from rose.store import index as index_mod
from rose.store.index import LexicalHit, PromptEvidence, admits, unknown_share
from rose.words import everyday

LESSONS = [
    ("n_role0001", "Role changes take up to five minutes",
     "Roles live in the access token, which lasts five minutes; revoke the sessions to apply a change now.", ["rbac"]),
    ("n_test0001", "Slow test suite",
     "The pytest suite takes five minutes because the fixtures rebuild the database for every test.", ["testing"]),
    ("n_tz000001", "Store timestamps with their time zone",
     "Columns are timestamp with time zone; a naive datetime was read in the server zone and shifted reports.",
     ["postgres"]),
    ("n_cach0001", "Warm before traffic",
     "Fill the price store before traffic moves over, so the first requests are not slow.", ["prices"]),
    ("n_rel00001", "Release day",
     "Nothing merges after noon on the day of a release; the train leaves at three.", ["process"]),
]


def _fill(layers: Layers, filler: int = 0) -> None:
    store = layers.project
    nodes = [Node(id=i, family="notes", title=t, body=b, gist=b[:60], tags=tags) for i, t, b, tags in LESSONS]
    nodes += [Node(id=f"n_fill{i:04d}", family="notes", title=f"Note {i} on the service",
                   body=f"Routine note {i} about the service configuration.", gist="routine note", tags=["notes"])
              for i in range(filler)]
    store.save_many(nodes)


def _admitted(layers: Layers, prompt: str) -> set[str]:
    return {h.id for h in layers.project.index.search_evidence(prompt) if h.admitted}


def test_the_table_holds_everyday_words_and_not_technical_terms() -> None:
    common = everyday()
    assert 2000 < len(common) < 6000                                   # small: a few thousand words
    assert {"time", "take", "takes", "five", "minutes", "healthy", "rule", "explain"} <= common
    assert not {"pytest", "migrations", "idempotent", "rebase", "kubectl", "breakfast"} & common
    assert everyday() is common                                        # read once, then kept


def test_an_everyday_only_phrase_admits_nothing(layers: Layers) -> None:
    _fill(layers, filler=40)   # a store large enough that recall does not serve it whole
    # "five minutes" is an exact phrase of two lessons, and "takes" a third shared word: all everyday English
    assert _admitted(layers, "what's a healthy breakfast that takes five minutes?") == set()
    # ... and with no dense model the prompt gets nothing at all
    s = Settings()
    s.embed.provider = EmbedProvider.NONE
    s.recall.selector = Selector.HYBRID
    assert recall(layers, "what's a healthy breakfast that takes five minutes?", settings=s,
                  record_session=False).injected == []


def test_a_technical_term_still_admits(layers: Layers) -> None:
    _fill(layers)
    hits = {h.id: h for h in layers.project.index.search_evidence("the pytest run takes five minutes")}
    assert hits["n_test0001"].admitted and hits["n_test0001"].terms == 1 and hits["n_test0001"].phrase
    # the rule is the prompt's: once it names a term of the store, its everyday phrases count again (judging each
    # hit alone cost 7 points of recall without a dense model, bench_retrieval.py --sweep)
    assert hits["n_role0001"].admitted and hits["n_role0001"].terms == 0


def test_an_everyday_word_that_is_a_lessons_tag_is_a_term(layers: Layers) -> None:
    _fill(layers)
    # "prices" is an everyday word, and the tag of a lesson: a term of this store. "traffic" is the second word.
    assert {"prices", "traffic", "first"} <= everyday()
    assert _admitted(layers, "prices are wrong for the first minute after traffic moves") == {"n_cach0001"}
    # without the tag word the same prompt shares only everyday words with the store
    assert _admitted(layers, "the list is wrong for the first minute after traffic moves") == set()


def test_a_title_match_still_admits(layers: Layers) -> None:
    _fill(layers)
    # every word everyday, none a tag: only the lesson's whole title, named by the prompt, admits it
    assert _admitted(layers, "what happens on release day?") == {"n_rel00001"}
    assert _admitted(layers, "what happens on the day of the party?") == set()


def test_a_prompt_mostly_unknown_to_a_large_store_needs_two_terms_and_no_agreement(layers: Layers) -> None:
    _fill(layers, filler=120)
    prompt = "what time zone is Buenos Aires in? just wondering, no work today"
    hits = {h.id: h for h in layers.project.index.search_evidence(prompt)}
    tz = hits["n_tz000001"]
    assert tz.phrase and not tz.admitted and not tz.corroborable       # "time zone" alone, among unknown words
    # the dense model agreeing does not stand in for it
    c = cand.Candidate(tz.id, layers.project, layers.project.index.rows_by_id([tz.id])[tz.id], lexical_rank=1,
                       bm25=tz.score, admitted=tz.admitted, corroborable=tz.corroborable, dense_rank=1, dense_cos=0.37)
    assert not cand.lexical_evidence(c)
    # a prompt in the store's own words, with the same phrase, is admitted
    assert "n_tz000001" in _admitted(layers, "which time zone does the server read a naive datetime in?")


def test_the_unknown_share_gate_waits_for_a_store_large_enough_to_judge(layers: Layers) -> None:
    _fill(layers, filler=10)
    assert layers.project.index.conn.execute("SELECT count(*) FROM nodes").fetchone()[0] \
        < index_mod.ELSEWHERE_MIN_LESSONS
    hits = {h.id: h for h in layers.project.index.search_evidence("what time zone is Buenos Aires in? no work today")}
    assert hits["n_tz000001"].corroborable                              # a small store cannot tell


def test_the_rule_as_a_pure_function() -> None:
    hit = LexicalHit("n_x", 5.0, words=2, selective=2, terms=1)
    assert admits(hit, PromptEvidence(selective=2, present=2, anchored=True, elsewhere=False))
    assert not admits(hit, PromptEvidence(selective=2, present=2, anchored=False, elsewhere=False))
    assert not admits(hit, PromptEvidence(selective=2, present=2, anchored=True, elsewhere=True))
    assert admits(LexicalHit("n_x", 5.0, words=2, selective=2, terms=2),
                  PromptEvidence(selective=2, present=2, anchored=True, elsewhere=True))
    assert admits(LexicalHit("n_x", 1.0, named=True), PromptEvidence(0, 0, anchored=False, elsewhere=True))
    # number-like tokens are new in every prompt: they are left out of the unknown share
    assert unknown_share({"pgbouncer": 1, "48213": 0, "opera": 0}) == 0.5
    assert unknown_share({"4f2a9c": 0}) == 0.0
