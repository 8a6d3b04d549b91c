"""One shared word is no dense agreement in a prompt that strays outside the store's vocabulary: when a prompt holds a
word no lesson holds (number-like tokens aside) and has three or more words beside one to judge it by, a lexical hit
that is not evidence on its own may be served on the dense model's say only if it holds two of the prompt's words.
Its cosine beside one shared word is mostly that word's own, so the agreement would count one signal twice. A prompt
whose words the store all knows, or a short one, keeps the agreement as before."""
from __future__ import annotations

from rose.recall import candidates as cand
from rose.store import Layers
from tests.support.noted_store import fill
from rose.store.index import LexicalHit, PromptEvidence, agreement_rests

LESSONS = [
    ("n_cookie01", "SameSite cookies for the session",
     "Set SameSite=Lax on the session cookies so the redirect back from the payment provider keeps the login.",
     ["cookies"]),
    ("n_retry001", "Retry budget of the importer",
     "The importer retries a failed fetch three times with backoff, then parks the row for the morning.", ["retry"]),
]




def _hit(layers: Layers, prompt: str, node_id: str) -> LexicalHit:
    return {h.id: h for h in layers.project.index.search_evidence(prompt)}[node_id]


def _agreed(layers: Layers, hit: LexicalHit) -> bool:
    row = layers.project.index.rows_by_id([hit.id])[hit.id]
    c = cand.Candidate(hit.id, layers.project, row, lexical_rank=1, bm25=hit.score, admitted=hit.admitted,
                       corroborable=hit.corroborable, dense_rank=1, dense_cos=0.31)
    return cand.lexical_evidence(c)


def test_the_rule_is_a_function_of_the_counts() -> None:
    strays = PromptEvidence(selective=3, present=1, anchored=True, elsewhere=False, strays=True)
    at_home = PromptEvidence(selective=3, present=1, anchored=True, elsewhere=False)
    assert not agreement_rests(LexicalHit("a", 1.0, words=1), strays)
    assert agreement_rests(LexicalHit("a", 1.0, words=2), strays)
    assert agreement_rests(LexicalHit("a", 1.0, words=1), at_home)


def test_one_shared_word_beside_words_the_store_never_saw_gets_no_agreement(layers: Layers) -> None:
    fill(layers, LESSONS)
    hit = _hit(layers, "how long should I bake cookies made with rye flour?", "n_cookie01")
    assert hit.words == 1 and not hit.admitted and not hit.corroborable
    assert not _agreed(layers, hit)


def test_two_shared_words_keep_the_agreement(layers: Layers) -> None:
    fill(layers, LESSONS)
    # "vanish" and "bank" are new to the store, but the hit holds "session" and "cookies"
    hit = _hit(layers, "the session cookies vanish after the bank page sends us back", "n_cookie01")
    assert hit.words >= 2 and hit.corroborable
    assert _agreed(layers, hit)


def test_a_prompt_the_store_knows_or_a_short_one_keeps_it(layers: Layers) -> None:
    fill(layers, LESSONS)
    # every word is known to the store (a number-like token aside): nothing strays
    hit = _hit(layers, "the cookies in the service configuration note 4711", "n_cookie01")
    assert hit.corroborable
    # too few words beside the new one to say the prompt is about something else
    hit = _hit(layers, "cookies in zorblat", "n_cookie01")
    assert hit.words == 1 and hit.corroborable
    assert _agreed(layers, hit)
