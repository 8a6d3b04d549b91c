"""`rose eval-recall`: the store's own episodes replayed through every selector arm, on a scripted backend."""
from __future__ import annotations

import json

from rose.config import EmbedProvider, Settings
from rose.evalrecall import evaluate, render
from rose.judge import Judge, Scripted
from rose.model import Episode, EpisodeOutcome, Node
from rose.store import Layers

LESSONS = [
    ("n_retry001", "retry", "Retrying flaky services", "Retry idempotent remote calls with exponential backoff."),
    ("n_cache001", "cache", "Cache TTLs", "User profiles are cached five minutes, feature flags thirty seconds."),
    ("n_tests001", "testing", "Integration tests need Postgres", "Run pytest -m integration with Postgres on 5433."),
    ("n_uvenv001", "python", "Use uv for environments", "Create environments with uv venv, never plain pip."),
    ("n_docs0001", "docs", "Docs are built with mkdocs", "Preview the docs with mkdocs serve before a PR."),
]
EPISODES = [("e_one", "retry the flaky uploads with backoff", ["n_retry001"]),
            ("e_two", "the integration tests cannot reach postgres", ["n_tests001"]),
            ("e_three", "nothing used here", [])]


def _settings() -> Settings:
    s = Settings()
    s.embed.provider = EmbedProvider.NONE
    s.recall.max_pack_tokens = 100
    return s


def _fill(layers: Layers) -> None:
    for node_id, family, title, body in LESSONS:
        layers.project.save(Node(id=node_id, family=family, title=title, body=body, gist=body, tags=[family]))
    for ep_id, prompt, used in EPISODES:
        layers.project.save_episode(Episode(id=ep_id, session=f"s-{ep_id}", prompt=prompt, used=used, served=used,
                                            outcome=EpisodeOutcome.SUCCESS))


def _judge(fork: bool = True) -> tuple[Judge, Scripted]:
    """A judge that is right about relevance and a fork that also names one wrong lesson."""
    truth = {ep[1]: set(ep[2]) for ep in EPISODES}

    def handle(call, request):
        if call == "relevance":
            want = truth.get(request.prompt, set())
            return {"judgements": [{"id": c.id, "verdict": "relevant" if c.id in want else "unrelated",
                                    "reason": "r"} for c in request.candidates]}
        if call == "select":
            return {"nodes": [{"id": i, "reason": "r"} for i in sorted(truth.get(request.task, set()))]
                    + [{"id": "n_docs0001", "reason": "maybe"}]}
        raise AssertionError(call)

    backend = Scripted(handler=handle)
    backend.can_fork = fork
    return Judge(backend), backend


def test_every_arm_is_scored_against_what_the_episodes_used(layers: Layers) -> None:
    _fill(layers)
    judge, _backend = _judge()
    report = evaluate(layers, judge, _settings())
    arms = {a.arm: a for a in report.arms}
    assert report.episodes == 2 and report.skipped_episodes == 1      # an episode that used nothing is no label
    assert list(arms) == ["apex", "hybrid", "judge", "fork"]
    apex, hybrid, walk, fork = arms["apex"], arms["hybrid"], arms["judge"], arms["fork"]
    assert (apex.precision, apex.recall, apex.mean(apex.calls)) == (1.0, 1.0, 1.0)   # one question over 5 apexes
    assert (walk.precision, walk.recall) == (1.0, 1.0) and walk.mean(walk.calls) >= 1
    assert (fork.recall, fork.precision, fork.mean(fork.calls)) == (1.0, 0.5, 1.0)    # one wrong lesson each time
    assert hybrid.calls == 0 and hybrid.episodes == 2 and 0 < hybrid.recall <= 1
    assert fork.tokens > walk.tokens                                                  # it served more
    text = render(report)
    assert "(baseline)" in text and "fork" in text and "precision -0.50, recall +0.00" in text
    data = report.to_dict()
    assert data["baseline"] == "apex" and {a["arm"] for a in data["arms"]} == set(arms)
    # nothing was written: no session record, no new episode
    assert not any(layers.project.sessions_dir.glob("*.json")) and len(layers.project.episodes()[0]) == 3


def test_without_a_model_only_search_runs_and_a_backend_that_cannot_fork_skips_the_fork(layers: Layers) -> None:
    _fill(layers)
    report = evaluate(layers, None, _settings())
    assert {a.arm: a.skipped for a in report.arms} == {"apex": "no model backend", "hybrid": "",
                                                       "judge": "no model backend", "fork": "no model backend"}
    judge, _ = _judge(fork=False)
    report = evaluate(layers, judge, _settings(), arms=("judge", "fork"))
    assert [a.skipped for a in report.arms] == ["", "backend scripted cannot fork a session"]


def test_the_command_prints_and_speaks_json(layers: Layers, rose_cli) -> None:
    _fill(layers)
    layers.project.config_path.write_text("embed: {provider: none}\nrecall: {max_pack_tokens: 100}\n",
                                          encoding="utf-8")
    out = rose_cli("eval-recall", "--arms", "hybrid", "--json", cwd=layers.cwd)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["episodes"] == 2 and [a["arm"] for a in data["arms"]] == ["hybrid"]
    assert set(data["arms"][0]) >= {"precision", "recall", "tokens_per_episode", "model_calls_per_episode"}
    text = rose_cli("eval-recall", "--arms", "hybrid", cwd=layers.cwd)
    assert "replayed 2 episode(s)" in text.stdout
    assert rose_cli("eval-recall", "--arms", "nope", cwd=layers.cwd).returncode == 1
