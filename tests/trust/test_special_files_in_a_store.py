"""Whatever git (or a hostile checkout script, or a shared folder) can leave in a committed .rose/ where rose expects
a file, every reader refuses it before any blocking read, skips it (a problem entry, a corrupt file, a logged skip)
and serves the rest: a FIFO, a link to /dev/zero, a link to a file outside the store, a directory, a huge file.

The stores' readers all go through rose.store.reader (O_NOFOLLOW|O_NONBLOCK, fstat, a size cap), so none of this
can block by construction. The planted files are still read in a child process, with a generous timeout, only as
a guard: without the reader a FIFO would hang the test run itself instead of failing it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rose.errors import UnsafeFile
from rose.store import reader

REPO = Path(__file__).resolve().parents[2]
KINDS = ("fifo", "dev_zero", "outside_link", "directory", "huge")
GUARD_S = 120   # a guard against a hang, not a measure: each child finishes in about a second

RULE = "id: r_0ff51d\nwhen: when deploying the service\nthen: look in nodes/outside/\n"
EVENT = '{"ts": "2026-01-01T00:00:00Z", "kind": "skip", "what": "from outside"}\n'


def plant(path: Path, kind: str, limit: int, outside_text: str = "", outside: Path | None = None) -> Path | None:
    """Put `kind` at `path`; returns the file outside the store a link points at (`outside`), if any."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and not path.is_symlink():
        path.unlink()   # what rose wrote there when it made the store (config.yaml, .gitattributes)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "outside_link":
        assert outside is not None
        outside.mkdir(parents=True, exist_ok=True)
        outside = outside / path.name
        outside.write_text(outside_text, encoding="utf-8")
        path.symlink_to(outside)
        return outside
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(limit + 1)   # sparse: the size is there, the disk blocks are not
    return None


def _readers(kind: str, base: Path) -> dict[str, object]:
    """Each store reader run on a file of `kind` planted where it reads (in this process: the child's)."""
    from rose import config, routing, trust
    from rose.judge.cache import JudgeCache
    from rose.learn import jobs
    from rose.model import Scope
    from rose.records import Episode, Node
    from rose.store import archive, events, sessions
    from rose.store.store import Store

    out: dict[str, object] = {}
    away = base / "outside"   # where a link out of the store points

    def fresh(name: str) -> Store:
        return Store.create(base / name / ".rose", Scope.PROJECT)

    def put(path: Path, limit: int, text: str) -> Path | None:
        return plant(path, kind, limit, text, away / path.parent.parent.name / path.parent.name)

    store = fresh("routing")
    good = routing.save_rule(store.routing_dir, "when deploying the service", "look in nodes/deploy/")
    put(store.routing_dir / "r_aaaaaa.yaml", reader.SMALL, RULE)
    rules, problems = routing.load_rules([store.routing_dir])
    out["routing"] = {"ids": sorted(r.id for r in rules), "good": good.id,
                      "problems": [(p.name, why) for p, why in problems],
                      "updated": routing.update_rule(store.routing_dir, "r_aaaaaa", lambda rule: None) is None}

    store = fresh("episodes")
    store.save_episode(Episode(id="e_good01", session="s", prompt="p"))
    put(store.episodes_dir / "e_aaaaaa.json", reader.RECORD,
          json.dumps({"id": "e_0ut51d", "session": "s", "prompt": "outside"}))
    found, bad = store.episodes()
    out["episodes"] = {"ids": [e.id for e in found], "bad": [str(b) for b in bad]}

    store = fresh("config")
    put(store.config_path, reader.SMALL, "recall:\n  max_pack_tokens: 7\n")
    settings = config.load([config.Source(store.config_path, own=lambda: False)])
    out["config"] = {"max_pack_tokens": settings.recall.max_pack_tokens,
                     "problems": [(p.kind.value, p.detail) for p in settings.problems],
                     "digest": trust.digest(store.config_path)}

    store = fresh("sessions")
    put(sessions.session_path(store, "s1"), reader.RECORD, json.dumps({"served": {"n_0ut51d": 1}}))
    state = sessions.read_session(store, "s1")
    out["sessions"] = {"state": state.to_dict(), "logged": [e.get("what") for e in events.read(store.events_path)]}

    store = fresh("queue")
    put(store.queue_dir / "j_aaaaaa.json", reader.RECORD, json.dumps({"session": "s", "root": "/x"}))
    out["queue"] = len(jobs.queued(store))

    store = fresh("judge")
    cache_path = store.judge_cache_path
    put(cache_path, reader.LOG, json.dumps({"format": 1, "seq": 1, "entries": {"k": {"answer": 1}}}))
    out["judge_cache"] = JudgeCache(cache_path).get("k")

    store = fresh("events")
    put(store.events_path, reader.LOG, EVENT)
    read = list(events.read(store.events_path))
    events.append(store.events_path, events.EventKind.SKIP, structural=True, what="after")   # never blocks
    out["events"] = {"read": read, "appended": True}

    store = fresh("catalog")
    put(store.catalog_path, reader.LOG, json.dumps({"op": "archive", "id": "n_0ut51d"}) + "\n")
    out["catalog"] = list(archive.read(store.catalog_path))

    store = fresh("usage")
    lesson = store.root / "nodes" / "deploy" / "n_good01.md"
    lesson.parent.mkdir(parents=True, exist_ok=True)
    lesson.write_text("---\nid: n_good01\nfamily: deploy\ntitle: good\n---\nDeploy with the script.\n", "utf-8")
    put(store.usage_path, reader.LOG, '{"id":"n_good01","rid":"r1","sum":{"attempts":5}}\n')
    store.sync()
    store.index.catch_up_usage(store.usage_path)
    out["usage"] = {"indexed": store.has("n_good01"), "attempts": store.get("n_good01").stats.attempts}

    store = fresh("lessons")
    for name in ("n_good01", "n_aaaaaa"):
        if name == "n_aaaaaa":
            put(store.root / "nodes" / "deploy" / f"{name}.md", reader.RECORD,
                  "---\nid: n_aaaaaa\nfamily: deploy\ntitle: outside\n---\nfrom outside\n")
            continue
        path = store.root / "nodes" / "deploy" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nid: {name}\nfamily: deploy\ntitle: good\n---\nDeploy with the script.\n", "utf-8")
    report = store.sync()
    out["lessons"] = {"good": store.has("n_good01"), "planted": store.has("n_aaaaaa"),
                      "problems": [why for _rel, why in report.problems]}

    store = fresh("gitattributes")
    outside = put(store.gitattributes_path, reader.SMALL, "* text=auto\n")
    store._ensure_gitattributes()
    out["gitattributes"] = outside.read_text("utf-8") if outside else None

    store = fresh("index_md")
    outside = put(store.index_md_path, reader.LOG, "# not rose's\n")
    store.save(Node(id="n_good01", family="deploy", title="good", body="Deploy with the script."))
    regular = store.index_md_path.is_file() and not store.index_md_path.is_symlink()
    out["index_md"] = {"outside": outside.read_text("utf-8") if outside else None, "saved": store.has("n_good01"),
                       "listed": regular and "n_good01" in store.index_md_path.read_text("utf-8")}
    return out


def child(kind: str, base: str) -> None:
    """The child process's work: the readers' outcomes on stdout as JSON."""
    print(json.dumps(_readers(kind, Path(base)), default=str))


def run_child(kind: str, base: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}{os.pathsep}{REPO}"}
    done = subprocess.run([sys.executable, "-c", f"from {__name__} import child; child({kind!r}, {str(base)!r})"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=GUARD_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("kind", KINDS)
def test_every_store_reader_skips_a_special_file_and_serves_the_rest(kind: str, tmp_path: Path) -> None:
    out = run_child(kind, tmp_path)
    because = {"fifo": "FIFO", "dev_zero": "symbolic link", "outside_link": "outside",
               "directory": "directory", "huge": "more than"}[kind]

    routing = out["routing"]
    assert routing["ids"] == [routing["good"]]                  # the good rule served, the outside one never read
    assert routing["problems"] and routing["problems"][0][0] == "r_aaaaaa.yaml"
    assert because in routing["problems"][0][1]
    assert routing["updated"]                                   # nothing updated in place through it

    assert out["episodes"]["ids"] == ["e_good01"]
    assert len(out["episodes"]["bad"]) == 1 and because in out["episodes"]["bad"][0]

    cfg = out["config"]
    assert cfg["max_pack_tokens"] != 7                          # the default, not the outside file's value
    assert [k for k, _ in cfg["problems"]] == ["unreadable"] and because in cfg["problems"][0][1]
    assert cfg["digest"] is None                                # `rose trust` pins nothing it would not read

    assert out["sessions"]["state"] == {} or "n_0ut51d" not in json.dumps(out["sessions"]["state"])
    if kind != "huge":
        assert any("sessions/s1.json" in str(w) for w in out["sessions"]["logged"])   # a logged skip
    assert out["queue"] == 0
    assert out["judge_cache"] is None
    assert out["events"]["read"] == [] and out["events"]["appended"]
    assert out["catalog"] == []
    assert out["usage"]["indexed"] and out["usage"]["attempts"] == 0
    assert out["lessons"]["good"] and not out["lessons"]["planted"]
    if kind == "huge":
        assert any("more than" in why for why in out["lessons"]["problems"])
    assert out["index_md"]["saved"]                             # the lesson is saved whatever is at index.md
    assert out["index_md"]["listed"] == (kind != "directory")   # and index.md written again as a file, but over a
    if kind == "outside_link":                                  # folder (derived: left stale, the debt owed)
        assert out["gitattributes"] == "* text=auto\n"          # the outside file neither read into nor written
        assert out["index_md"]["outside"] == "# not rose's\n"


@pytest.mark.parametrize("kind", KINDS)
def test_the_reader_refuses_before_reading(kind: str, tmp_path: Path) -> None:
    """The one reader, alone: every kind refused with a one-line reason, a FIFO's open never waiting (O_NONBLOCK:
    if it did, this test would hang instead of failing, which is why the store readers run in a child above)."""
    store = tmp_path / "store"
    store.mkdir()
    path = store / "file"
    plant(path, kind, 100, "outside text\n", tmp_path / "outside")
    with pytest.raises(UnsafeFile) as refused:
        reader.read_bytes(path, limit=100, within=store)
    assert isinstance(refused.value, OSError) and "\n" not in str(refused.value)


def test_a_link_inside_the_store_is_followed_and_one_leaving_it_is_not(tmp_path: Path) -> None:
    store = tmp_path / "store"
    (store / "routing").mkdir(parents=True)
    (store / "routing" / "real.yaml").write_text("a: 1\n", encoding="utf-8")
    (store / "routing" / "alias.yaml").symlink_to("real.yaml")
    assert reader.read_text(store / "routing" / "alias.yaml", within=store) == "a: 1\n"
    with pytest.raises(UnsafeFile, match="symbolic link"):
        reader.read_text(store / "routing" / "alias.yaml")     # no `within`: no link at all
    (tmp_path / "secret").write_text("mine\n", encoding="utf-8")
    (store / "routing" / "out.yaml").symlink_to(tmp_path / "secret")
    with pytest.raises(UnsafeFile, match="outside"):
        reader.read_text(store / "routing" / "out.yaml", within=store)


def test_a_file_growing_past_its_limit_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"x" * 50)
    fd, st = reader.open_regular(path)
    try:
        with open(path, "ab") as more:
            more.write(b"y" * 100)   # after the fstat: the size it said was under the limit
        with pytest.raises(UnsafeFile, match="more than"):
            reader.read_fd(path, fd, st, 100)
    finally:
        os.close(fd)


def _rose(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([sys.executable, "-m", "rose", *args], cwd=cwd, env=env, input=stdin, text=True,
                          capture_output=True, timeout=GUARD_S)


def test_a_store_full_of_fifos_never_hangs_status_doctor_or_the_prompt_hook(tmp_path: Path) -> None:
    """The probe's repository: FIFOs where the routing rules, episodes, queue, session scratch and judge cache
    live, a /dev/zero link among the rules, a small budget (so selection rules are read on the prompt): the
    commands and the hook finish, the bad files are named, the project's lesson is served."""
    repo = tmp_path / "repo"
    repo.mkdir()
    assert _rose(["init"], repo).returncode == 0
    assert _rose(["add", "Deploy the service with the blue-green script, never by hand", "--family", "deploy"],
                 repo).returncode == 0
    rose = repo / ".rose"
    (rose / "routing").mkdir(exist_ok=True)
    os.mkfifo(rose / "routing" / "r_aaaaaa.yaml")
    (rose / "routing" / "r_bbbbbb.yaml").symlink_to("/dev/zero")
    for where in ("episodes/e_aaaaaa.json", "queue/j_aaaaaa.json", "sessions/s1.json", "judge-cache.json"):
        (rose / where).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(rose / where)
    (rose / "config.yaml").write_text("recall:\n  max_pack_tokens: 20\n", encoding="utf-8")

    status = _rose(["status"], repo)
    assert status.returncode == 0, status.stderr
    doctor = _rose(["doctor"], repo)
    assert "e_aaaaaa.json: is a FIFO" in doctor.stdout and "r_aaaaaa.yaml: is a FIFO" in doctor.stdout
    assert "r_bbbbbb.yaml: is a symbolic link" in doctor.stdout
    route = _rose(["route"], repo)
    assert route.returncode == 0 and "r_aaaaaa.yaml" in route.stdout + route.stderr
    payload = json.dumps({"session_id": "s1", "cwd": str(repo), "hook_event_name": "UserPromptSubmit",
                          "prompt": "how do we deploy the service"})
    hook = _rose(["hook", "claude", "UserPromptSubmit"], repo, payload)
    assert hook.returncode == 0 and "failed" not in hook.stdout, hook.stdout
