"""What the inspection commands compute (rose.report, rose.doctor) and how they print it (rose.render), called
directly: the numbers are checked against a store built here, not only through the CLI's output."""
from __future__ import annotations

from rose import doctor, render, report
from rose.model import Episode, EpisodeOutcome, Node, Status
from rose.store import Layers


def _lessons(layers: Layers) -> dict[str, Node]:
    store = layers.project
    nodes = {
        "low": Node(id="n_low001", family="db", title="Test database port", body="The test database listens on 5433.",
                    status=Status.SUPERSEDED, parents=["n_top001"]),
        "top": Node(id="n_top001", family="db", title="Test database", body="Use the local test database.", level=1,
                    derived_from=["n_low001"]),
        "ci": Node(id="n_ci0001", family="ci", title="CI cache", body="Clear the CI cache after a lockfile change."),
    }
    store.save_many(list(nodes.values()))
    return nodes


def test_status_counts_levels_statuses_and_precision_by_family(layers: Layers) -> None:
    _lessons(layers)
    store = layers.project
    store.save_episode(Episode(id=store.new_episode_id(), session="s1", prompt="p", outcome=EpisodeOutcome.SUCCESS,
                               served=["n_top001", "n_ci0001"], used=["n_top001"]))
    store.save_episode(Episode(id=store.new_episode_id(), session="s2", prompt="p", outcome=EpisodeOutcome.FAILURE,
                               served=["n_ci0001", "n_gone01"], used=["n_ci0001"]))
    r = report.status(layers)
    assert r.families == {"ci": 1, "db": 2}
    assert r.levels == {0: 2, 1: 1}
    assert r.statuses == {"active": 2, "superseded": 1}
    assert r.episodes == 2
    assert (r.precision.served, r.precision.used) == (4, 2) and r.precision.value == 0.5
    by = {fam: (p.served, p.used) for fam, p in r.precision_by_family.items()}
    assert by == {"(deleted)": (1, 0), "ci": (2, 1), "db": (1, 1)}
    assert r.to_dict()["levels"] == {"0": 2, "1": 1}     # JSON keys are strings
    text = render.status(r)
    assert "lessons  3 in 2 families" in text and "precision 50% (2 used / 4 served)" in text
    assert "ci                   50% (1/2)" in text


def test_status_with_no_episodes_says_so_rather_than_zero(layers: Layers) -> None:
    _lessons(layers)
    r = report.status(layers)
    assert r.precision.value is None
    assert "precision n/a (no episodes yet)" in render.status(r)


def test_the_tree_draws_each_lesson_under_its_parent(layers: Layers) -> None:
    _lessons(layers)
    lines = report.tree(layers)
    assert [(line.depth, line.id) for line in lines] == [(0, "n_ci0001"), (0, "n_top001"), (1, "n_low001")]
    text = render.tree(lines)
    assert text.splitlines() == ["L0 n_ci0001 ci/CI cache", "L1 n_top001 db/Test database",
                                 "  └─ L0 n_low001 db/Test database port [superseded]"]
    assert [line.id for line in report.tree(layers, family="ci")] == ["n_ci0001"]
    assert render.tree([]) == "(no lessons)"


def test_doctor_names_a_corrupt_lesson_and_a_setting_it_did_not_apply(layers: Layers) -> None:
    _lessons(layers)
    store = layers.project
    (store.root / "nodes" / "db" / "n_bad001.md").write_text("---\nid: [\n---\nbroken\n", encoding="utf-8")
    store.config_path.write_text("recall:\n  max_pack_tokens: lots\n", encoding="utf-8")
    checks = doctor.run(layers)
    by_name = {c.name: c for c in checks}
    assert by_name["python"].level is doctor.Level.OK
    corrupt = [c for c in checks if c.name == "corrupt file"]
    assert len(corrupt) == 1 and "n_bad001.md" in corrupt[0].detail and corrupt[0].level is doctor.Level.WARN
    assert by_name["config"].level is doctor.Level.WARN and "1 setting(s) not applied" in by_name["config"].detail
    assert any("max_pack_tokens" in c.detail for c in checks if c.name.startswith("config "))
    printed = render.checks(checks)
    assert "[WARN] corrupt file:" in printed and "[ok  ] python:" in printed


def test_a_large_tree_or_list_is_bounded_for_a_human_and_whole_with_all() -> None:
    from rose.report import TreeLine
    from rose.retention.manage import Listing, Row

    lines = []
    for family in ("ci", "db"):
        for i in range(150):
            lines.append(TreeLine(0, f"n_{family}{i:04d}", 1, "active", f"{family} rule {i}", family, "project",
                                  False, []))
            lines.append(TreeLine(1, f"n_{family}l{i:03d}", 0, "active", f"{family} detail {i}", family, "project",
                                  False, []))
    text = render.tree_view(report.bound(lines, render.TREE_SHOWN, render.TREE_PER_FAMILY))
    assert text.splitlines()[0] == "ci: 300 lessons"
    assert "  L1 n_ci0000 ci/ci rule 0" in text and "    └─ L0 n_cil000 ci/ci detail 0" in text
    assert "n_ci0003" not in text and "  … and 147 more trees: `rose tree --family ci --all`" in text
    assert "db: 300 lessons" in text and text.endswith("(600 nodes in all: `rose tree --all` draws every one, "
                                                       "`--json` lists them)")
    assert render.tree(lines).splitlines() == render.tree(lines[:render.TREE_SHOWN]).splitlines() + \
        render.tree(lines[render.TREE_SHOWN:]).splitlines()
    assert len(render.tree(lines).splitlines()) == 600
    rows = [Row(f"n_{i:06d}", "project", "lesson", "active", f"rule {i}", 0.5, 0.5, 0, 10, "", False, f"/p/{i}.md")
            for i in range(250)]
    listed = Listing([], rows, "", False)
    shown = render.listing(listed).splitlines()
    assert shown[-1].startswith("… and 150 more, by falling importance: `rose list --all`")
    assert any(line.startswith("n_000099 ") for line in shown) and not any("n_000100" in line for line in shown)
    assert sum(line.startswith("n_") for line in render.listing(listed, full=True).splitlines()) == 250
