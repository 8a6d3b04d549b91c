"""Recurrence promotion (rule 6): a user-quoted rule restated near-verbatim in three projects is only nominated; a
model review must confirm it governs how the user works everywhere, asked again only on new evidence. On
confirmation the highest-importance trustworthy instance moves to the global store unchanged; the others are
listed in its `related` and archived in their projects, never deleted. Repository-derived records never move."""
from __future__ import annotations

from pathlib import Path

from rose.judge import Judge, Scripted
from rose.model import MemoryType, Origin, Scope, Status
from rose.retention import maintain as m
from rose.retention import recurrence
from rose.store import Layers, Store, archive, global_root

from .helpers import lesson

RULE = "Always open a single pull request per change, never a stack of them."
QUOTE = "always open a single pull request per change"


def _projects(tmp_path: Path, names=("api", "web", "cli"), **kw) -> list[Layers]:
    out = []
    for i, name in enumerate(names):
        folder = tmp_path / name
        folder.mkdir(parents=True)
        layers = Layers.discover(folder)
        layers.init_project()
        body = RULE if i == 0 else RULE.replace("never", "and never")   # near-verbatim, not identical
        node = lesson(f"n_rule{i:02d}", body, title="Single PR", origin=kw.get("origin", Origin.EXTRACTION),
                      quotes={f"session://{name}/message/1": QUOTE} if kw.get("quoted", True) else {},
                      evidence=[f"session://{name}/message/1"], importance=0.6 + 0.1 * i,
                      memory_type=kw.get("memory_type", MemoryType.LESSON))
        layers.project.save(node)
        recurrence.register(layers.project)
        out.append(layers)
    return out


def _judge(everywhere: bool) -> tuple[Judge, Scripted]:
    backend = Scripted(handler=lambda call, request: {"everywhere": everywhere, "reason": "a personal rule"})
    return Judge(backend), backend


def test_a_confirmed_rule_moves_global_unchanged_and_the_others_are_archived(tmp_path: Path) -> None:
    api, web, cli = _projects(tmp_path)
    judge, backend = _judge(True)
    report = m.maintain(cli, judge, touched=["n_rule02"])
    assert report.promoted == ["n_rule02"]                 # the highest importance (and this job's own rule)
    g = Store(global_root(), Scope.GLOBAL)
    moved = g.get("n_rule02")
    assert moved.scope is Scope.GLOBAL and moved.body == RULE.replace("never", "and never")
    assert sorted(moved.related) == ["n_rule00", "n_rule01"]
    assert sorted(moved.evidence) == sorted(f"session://{n}/message/1" for n in ("api", "web", "cli"))
    assert not cli.project.has("n_rule02")                 # moved out of the project, into the global store
    for layers, node_id in ((api, "n_rule00"), (web, "n_rule01")):
        layers.project.sync()
        assert layers.project.get(node_id).status is Status.ARCHIVED
        assert "promoted to the global store" in archive.read(layers.project.catalog_path)[node_id].because
    assert [r.call for r in backend.history] == ["recurrence"]
    g.close()


def test_a_declined_rule_stays_and_is_not_asked_again_until_the_evidence_changes(tmp_path: Path) -> None:
    _api, _web, cli = _projects(tmp_path)
    judge, backend = _judge(False)
    assert m.maintain(cli, judge, touched=["n_rule02"]).promoted == []
    assert m.maintain(cli, judge, touched=["n_rule02"]).promoted == []
    assert len(backend.history) == 1                        # the same evidence: not asked again
    cli.project.update("n_rule02", lambda n: n.evidence.append("session://cli2/message/3"))
    m.maintain(cli, judge, touched=["n_rule02"])
    assert len(backend.history) == 2                        # new evidence: asked again
    assert cli.project.get("n_rule02").status is Status.ACTIVE
    assert not (global_root() / "nodes").is_dir() or not Store(global_root(), Scope.GLOBAL).has("n_rule02")


def test_a_rule_in_two_projects_or_not_touched_is_not_reviewed(tmp_path: Path) -> None:
    _api, web = _projects(tmp_path, names=("api", "web"))
    judge, backend = _judge(True)
    m.maintain(web, judge, touched=["n_rule01"])
    _api3, _web3, cli3 = _projects(tmp_path / "more")
    m.maintain(cli3, judge, touched=[])
    assert backend.history == []


def test_repository_derived_records_never_move_global(tmp_path: Path) -> None:
    judge, backend = _judge(True)
    for kind, kw in (("orientation", {"memory_type": MemoryType.ORIENTATION, "origin": Origin.REFLECTION}),
                     ("unquoted extraction", {"quoted": False})):
        layers = _projects(tmp_path / kind.replace(" ", "-"), **kw)
        assert m.maintain(layers[2], judge, touched=["n_rule02"]).promoted == []
    assert backend.history == []


def test_a_repository_store_can_nominate_but_never_supply_the_rule_that_moves(tmp_path: Path) -> None:
    """A committed store in another repository is untrusted: even with a higher importance, its forged instance is
    not the one written to the global store; this job's own (quote-checked) rule is."""
    api, web, _cli = _projects(tmp_path)
    api.project.update("n_rule00", lambda n: setattr(n, "importance", 1.0))
    judge, _backend = _judge(True)
    report = m.maintain(web, judge, touched=["n_rule01"])
    assert report.promoted == ["n_rule01"]
