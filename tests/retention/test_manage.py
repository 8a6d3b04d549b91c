"""The management commands (rule 7) and `rose status` (rule 8), through the CLI: every command has --json, ids are
stable, `delete` and `clear` say what they will do and ask, and only they remove files."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rose.cli import main
from rose.model import Origin, Status
from rose.store import Layers

from .helpers import lesson, lineage, orientation


def rose(layers: Layers, capsys, *args: str) -> tuple[int, str]:
    code = main([*args, "--cwd", str(layers.cwd)])
    return code, capsys.readouterr().out


def j(layers: Layers, capsys, *args: str):
    code, out = rose(layers, capsys, *args, "--json")
    assert code == 0, out
    return json.loads(out)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def filled(layers: Layers) -> Layers:
    store = layers.project
    store.save_many([lesson("n_auth001", title="Auth tokens", tags=["auth"], importance=0.9),
                     lesson("n_auth002", title="Auth headers", tags=["auth"], importance=0.5),
                     lesson("n_db00001", title="Database port"),
                     orientation("n_or00001", "The API is served by gunicorn.")])
    lineage(store, "n_top001", "n_low001")
    store.archive(["n_db00001"], "budget")
    return layers


def test_list_has_a_header_of_hot_and_cold_counts_and_stable_ids(filled: Layers, capsys) -> None:
    data = j(filled, capsys, "list")
    assert data["totals"]["hot"] == 5 and data["totals"]["cold"] == 1 and data["totals"]["hot_tokens"] > 0
    assert data["scopes"] == {"project": {"hot": 5, "cold": 1}}
    types = {(b["memory_type"]): (b["hot"], b["cold"]) for b in data["buckets"]}
    assert types["lesson"] == (4, 1) and types["orientation"] == (1, 0)
    ids = [r["id"] for r in data["rows"]]
    assert ids[0] == "n_auth001" and "n_db00001" not in ids        # by importance; cold not in the hot list
    assert [r["id"] for r in j(filled, capsys, "list", "--cold")["rows"]] == ["n_db00001"]
    assert [r["id"] for r in j(filled, capsys, "list", "*auth*")["rows"]] == ["n_auth001", "n_auth002"]
    assert [r["id"] for r in j(filled, capsys, "list", "--type", "orientation")["rows"]] == ["n_or00001"]
    assert j(filled, capsys, "list", "--scope", "global")["rows"] == []
    code, text = rose(filled, capsys, "list")
    assert code == 0 and text.startswith("hot 5 (") and "cold 1" in text and "n_auth001" in text


def test_show_gives_provenance_and_retention_data_for_hot_and_cold(filled: Layers, capsys) -> None:
    hot = j(filled, capsys, "show", "n_auth001")
    r = hot["retention"]
    assert hot["cold"] is False and r["importance"] == 0.9 and r["uses"] == 0 and r["utility"] > 0
    assert r["bucket"]["hard"] > r["bucket"]["soft"] > 0
    cold = j(filled, capsys, "show", "n_db00001")
    assert cold["cold"] and cold["path"].endswith("archive/lesson/n_db00001.md") and cold["returns_to"] == "active"
    assert cold["retention"]["archived"]["because"] == "budget"
    _code, text = rose(filled, capsys, "show", "n_db00001")
    assert "in the cold archive" in text and "archived" in text and "utility" in text


def test_archive_and_restore_move_a_lineage_together(filled: Layers, capsys) -> None:
    moved = j(filled, capsys, "archive", "n_top001")
    assert moved["moved"] == ["n_top001", "n_low001"] and moved["to"] == "archive"
    assert filled.project.get("n_low001").status is Status.ARCHIVED
    back = j(filled, capsys, "restore", "n_top001")
    assert back["moved"] == ["n_top001", "n_low001"]
    assert filled.project.get("n_low001").status is Status.SUPERSEDED
    assert main(["restore", "n_top001", "--cwd", str(filled.cwd)]) == 1       # not in the archive: one-line error


def test_delete_says_what_happens_to_the_dag_and_asks(filled: Layers, capsys, monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", _Tty("n\n"))
    code, text = rose(filled, capsys, "delete", "n_top001")
    assert code == 1 and "nothing deleted" in text
    assert "n_low001" in text and "served again" in text
    assert filled.project.has("n_top001")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))                         # no terminal and no --yes: refuses
    assert main(["delete", "n_top001", "--cwd", str(filled.cwd)]) == 1
    assert filled.project.has("n_top001")
    monkeypatch.setattr("sys.stdin", _Tty("y\n"))
    code, text = rose(filled, capsys, "delete", "n_top001")
    assert code == 0 and "deleted n_top001" in text
    assert not filled.project.has("n_top001")
    low = filled.project.get("n_low001")
    assert low.status is Status.ACTIVE and low.parents == []                  # its detail is served again


def test_delete_and_clear_with_json_ask_on_stderr_and_keep_stdout_one_json_document(filled: Layers, capsys,
                                                                                    monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", _Tty("n\n"))
    assert main(["delete", "n_top001", "--json", "--cwd", str(filled.cwd)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["deleted"] is False and "n_low001" in err and "[y/N]" in err
    assert filled.project.has("n_top001")
    monkeypatch.setattr("sys.stdin", _Tty("y\n"))
    assert main(["clear", "--json", "--cwd", str(filled.cwd)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["removed"] == 6 and "6 " in err and "[y/N]" in err
    assert filled.project.rows() == []


def test_delete_with_yes_and_json_removes_a_cold_record(filled: Layers, capsys) -> None:
    data = j(filled, capsys, "delete", "n_db00001", "--yes")
    assert data["deleted"] and data["cold"] and data["effects"]
    assert not Path(data["path"]).exists() and not filled.project.has("n_db00001")
    assert j(filled, capsys, "list", "--cold")["rows"] == []


def test_delete_of_a_merge_child_names_the_holders_of_its_claims(layers: Layers, capsys) -> None:
    from rose.model import Claim

    store = layers.project
    store.save_many([lesson("n_kid001", parents=["n_par001"]),
                     lesson("n_par001", level=1, origin=Origin.MERGE, derived_from=["n_kid001"],
                            dropped=[Claim("a detail", holder="n_kid001")])])
    plan = j(layers, capsys, "delete", "n_kid001", "--yes")
    assert plan["holders"] == ["n_par001"] and plan["parents"] == ["n_par001"]
    assert store.get("n_par001").derived_from == [] and store.get("n_par001").dropped[0].claim == "a detail"


def test_clear_removes_every_hot_and_cold_record_of_one_scope_after_asking(filled: Layers, capsys,
                                                                            monkeypatch) -> None:
    monkeypatch.setattr("sys.stdin", _Tty("no\n"))
    assert rose(filled, capsys, "clear")[0] == 1 and len(filled.project.rows()) == 6
    data = j(filled, capsys, "clear", "--yes")
    assert data["removed"] == 6 and data["hot"] == 5 and data["cold"] == 1
    assert filled.project.rows() == [] and not filled.project.catalog_path.exists()
    assert filled.project.config_path.exists()


def test_status_shows_hot_and_cold_per_scope_and_type_with_the_watermarks(filled: Layers, capsys) -> None:
    data = j(filled, capsys, "status")
    lesson_bucket = next(b for b in data["retention"] if b["memory_type"] == "lesson")
    assert lesson_bucket["hot"] == 4 and lesson_bucket["cold"] == 1 and lesson_bucket["soft"] == \
        int(lesson_bucket["hard"] * 0.8)
    _code, text = rose(filled, capsys, "status")
    assert "retention" in text and "hard 20000, soft 16000" in text


def test_retention_never_deletes_only_delete_and_clear_do(filled: Layers) -> None:
    """Every path that removes a record file is one of the two commands (or a cross-store move): grep the code."""
    import rose

    src = Path(rose.__file__).parent
    unlinks = [p.relative_to(src).as_posix() for p in src.rglob("*.py")
               if ".delete(" in p.read_text() and p.parts[-2] in ("retention", "learn", "compress")]
    assert sorted(unlinks) == ["retention/manage.py", "retention/recurrence.py"]
