"""The `rose` command: parse arguments, call one function, print its result. No logic lives here."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rose import envvars
from rose.errors import RoseError

TYPE_CHECKING = False
if TYPE_CHECKING:   # typing is not imported to run (a few ms of every command)
    import argparse
    from typing import Any

Handler = Callable[["argparse.Namespace"], int]


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _layers(args: argparse.Namespace):
    from rose.store import Layers

    layers = Layers.discover(Path(args.cwd) if getattr(args, "cwd", None) else None)
    if layers.refused is not None:   # the user's own store another user could have written: said, never used
        print(f"rose: {layers.refused}", file=sys.stderr)
    return layers


def _switched_off(args: argparse.Namespace) -> str | None:
    """Why rose is off in the repository the command looks at (`rose off`, a .rose-off file), or None: a command that
    shows what the hooks would do says so first, since the hooks then do nothing."""
    from rose import environment
    from rose.store.layers import repository_root, switched_off

    folder = args.cwd if getattr(args, "cwd", None) else environment.cwd()   # served: the caller's folder
    why = switched_off(repository_root(Path(folder)))
    return None if why is None else (f"rose is off in this repository ({why}): its hooks inject nothing and learn "
                                     "nothing; `rose on` switches it back")


# -- commands -------------------------------------------------------------------------------------------------
def cmd_init(args: argparse.Namespace) -> int:
    from rose.learn.jobs import moved_store

    layers = _layers(args)
    personal = layers.project.root if layers.personal and layers.project is not None else None
    store, moved = layers.init_project()
    if personal is not None:
        moved_store(personal, store)
    if args.json:
        _print_json({"root": str(store.root), "moved": moved})
    else:
        print(f"rose store ready at {store.root}")
        if moved:
            print(f"  moved in {moved} file(s) rose had learned for this repository in your own store")
        print("  next: commit .rose/ (its .gitignore keeps machine-local files out); `rose install --scope user` "
              "wires the hooks if you have not yet; `rose doctor` checks everything")
    return 0


def _judge(layers, settings):
    from rose.judge import Judge

    return Judge.for_store(layers.stores()[0], settings) if layers.stores() else None


def cmd_add(args: argparse.Namespace) -> int:
    from rose.learn.teach import teach
    from rose.model import Scope

    if args.text == "-":   # bytes, as they are (not the locale's reading): teach refuses what is not UTF-8
        raw = getattr(sys.stdin, "buffer", None)
        text = raw.read().decode("utf-8", "surrogateescape") if raw is not None else sys.stdin.read()
    else:
        text = args.text
    tags = [t for chunk in (args.tags or []) for t in chunk.split(",")]
    layers = _layers(args)
    layers.writable(Scope.GLOBAL if args.scope == "global" else Scope.PROJECT)  # created on first use
    settings = layers.settings()
    result = teach(layers, text, title=args.title or "", family=args.family or "", tags=tags,
                   scope=Scope(args.scope) if args.scope else None, settings=settings,
                   judge=_judge(layers, settings))
    node = result.node
    path = str(result.store.node_path(node)) if node is not None and result.store is not None else ""
    if args.json:
        _print_json({"action": result.action.value, "id": node.id if node else None,
                     "family": node.family if node else None, "title": node.title if node else None,
                     "scope": node.scope.value if node else None, "matched": result.matched or None, "path": path,
                     "detail": result.describe()})
    else:
        print(result.describe())
        if path:
            print(f"  {path}")
    return 0


def cmd_used(args: argparse.Namespace) -> int:
    from rose.learn.attribute import report_use, use_report_problems

    layers = _layers(args)
    owner = layers.require_any()[0]
    split = lambda values: [i for chunk in (values or []) for i in chunk.replace(",", " ").split() if i]  # noqa: E731
    report = report_use(layers, owner, args.session, split(args.used) + list(args.refs or []), split(args.unused))
    if args.json:
        _print_json({"session": report.session, "used": report.used, "unused": report.unused,
                     "unknown": report.unknown, "session_seen": report.session_seen})
    else:
        print(f"recorded for session {report.session}: {len(report.used)} used, {len(report.unused)} unused")
    for line in use_report_problems(report):
        print(f"rose: {line}", file=sys.stderr)
    return 1 if report.unknown else 0


def cmd_conflicts(args: argparse.Namespace) -> int:
    from rose.learn.conflicts import open_conflicts

    items = open_conflicts(_layers(args))
    if args.json:
        _print_json([{"id": c.node.id, "title": c.node.title, "question": c.question, "against": c.against,
                      "scope": c.store.scope.value} for c in items])
    elif not items:
        print("no open contradictions")
    else:
        for c in items:
            print(f"{c.node.id}  {c.node.title}\n    against {', '.join(c.against) or '?'}\n    ? {c.question}")
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    from rose.learn.conflicts import resolve

    changed = resolve(_layers(args), args.id, drop=args.drop)
    if args.json:
        _print_json({"id": args.id, "dropped": args.drop, "changed": changed})
    else:
        print(f"{'dropped' if args.drop else 'kept'} {args.id}; settled: {', '.join(changed)}")
    return 0


def cmd_learn(args: argparse.Namespace) -> int:
    from rose.learn.learner import run_queue

    results = [(store, r) for store in _layers(args).require_any() for r in run_queue(store)]
    if args.json:
        _print_json([{"store": s.scope.value, "job": r.job.name, "done": r.done, "detail": r.detail}
                     for s, r in results])
    elif not results:
        print("nothing queued")
    else:
        for _store, r in results:
            print(f"{'done' if r.done else 'left'}  {r.job.name}: {r.detail}")
    return 0 if all(r.done for _s, r in results) else 1


def cmd_status(args: argparse.Namespace) -> int:
    from rose import render, report

    result = report.status(_layers(args))
    off = _switched_off(args)
    if args.json:
        _print_json({**result.to_dict(), **({"switched_off": off} if off else {})})
    else:
        if off:
            print(off)
        print(render.status(result))
    return 0


def cmd_credit(args: argparse.Namespace) -> int:
    from rose import render
    from rose.credit.report import lessons

    layers = _layers(args)
    settings = layers.settings()
    items = lessons(layers, settings)
    if args.json:
        _print_json({"withhold_rate": settings.credit.withhold_rate, "lessons": [i.to_dict() for i in items]})
    else:
        print(render.credit(items, settings.credit.withhold_rate))
    return 0


def cmd_evolution(args: argparse.Namespace) -> int:
    from rose import render
    from rose.evolve import commands

    layers = _layers(args)
    action = args.action or "list"
    if action == "list":
        items = commands.listing(layers)
        if args.json:
            _print_json([{**i.artifact.to_dict(), "store": str(i.store.root)} for i in items])
        else:
            print(render.evolution_list(items, layers.settings().evolution.enabled))
        return 0
    if action == "distill":
        from rose.evolve.synth import distill
        from rose.judge import Judge

        settings = layers.settings()
        note = distill(layers, Judge.for_store(layers.require_any()[0], settings), settings, force=True)
        if args.json:
            _print_json({"distill": note})
        else:
            print(note or "nothing to distill")
        return 0
    if not args.id:
        raise commands.EvolutionError(f"rose evolution {action} needs an ID (rose evolution list shows them)")
    if action == "show":
        item = commands.find(layers, args.id)
        if args.json:
            _print_json({**item.artifact.to_dict(), "store": str(item.store.root),
                         "skill_md": str(item.path) if item.path else None})
        else:
            print(render.evolution_show(item))
        return 0
    if action == "promote":
        target = commands.promote(layers, args.id)
        if args.json:
            _print_json({"id": args.id, "promoted_to": str(target)})
        else:
            print(f"promoted to {target}; rose no longer applies it itself")
        return 0
    done = {"approve": commands.approve, "reject": commands.reject, "rollback": commands.rollback}[action](
        layers, args.id)
    if args.json:
        _print_json(done.to_dict())
    else:
        print(f"{done.name}: {done.state.value} ({done.reason})")
    return 0


def cmd_tree(args: argparse.Namespace) -> int:
    from rose import render, report

    if not (args.json or args.all):   # bounded: reads only what it draws
        print(render.tree_view(report.tree_view(_layers(args), family=args.family, shown=render.TREE_SHOWN,
                                                per_family=render.TREE_PER_FAMILY)))
        return 0
    lines = report.tree(_layers(args), family=args.family)
    if args.json:
        from rose.typedrecord import asdict

        _print_json([asdict(line) for line in lines])
    else:
        print(render.tree(lines))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rose import render
    from rose.retention.manage import show

    shown = show(_layers(args), args.id)
    if args.json:
        _print_json(shown.to_dict())
    else:
        print(render.shown(shown))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from rose import render
    from rose.retention.manage import listing

    result = listing(_layers(args), args.filter or "", scope=args.scope, memory_type=args.type, cold=args.cold,
                     limit=None if args.all or args.json else render.LIST_SHOWN)
    if args.json:
        _print_json(result.to_dict())
    else:
        print(render.listing(result, full=args.all))
    return 0


def _confirm(args: argparse.Namespace, plan: str, question: str) -> bool:
    """Destructive commands say what they will do and ask; --yes answers for scripts. Without a terminal to ask on,
    the answer is no. With --json the plan and the question go to stderr, so stdout stays one JSON document."""
    out = sys.stderr if args.json else sys.stdout
    if not args.json or not args.yes:
        print(plan, file=out)
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise RoseError(f"{args.command}: not removing anything without confirmation: run it in a terminal, "
                        "or pass --yes")
    print(question + " [y/N] ", end="", file=out, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def cmd_delete(args: argparse.Namespace) -> int:
    from rose import render
    from rose.retention.manage import delete, plan_delete

    layers = _layers(args)
    plan = plan_delete(layers, args.id)
    if not _confirm(args, render.delete_plan(plan), f"delete {plan.id} for good?"):
        if args.json:
            _print_json({**plan.to_dict(), "deleted": False})
        else:
            print("nothing deleted")
        return 1
    delete(layers, plan)
    if args.json:
        _print_json({**plan.to_dict(), "deleted": True})
    else:
        print(f"deleted {plan.id}")
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    from rose.retention.manage import clear, plan_clear

    layers = _layers(args)
    plan = plan_clear(layers, args.scope)
    said = (f"clear the {plan.scope} store {plan.root}: {plan.hot} hot and {plan.cold} cold record(s) removed "
            "for good (episodes, settings and usage.jsonl stay)")
    if not _confirm(args, said, f"remove all {plan.hot + plan.cold} {plan.scope} records?"):
        if args.json:
            _print_json({**plan.to_dict(), "removed": 0})
        else:
            print("nothing removed")
        return 1
    removed = clear(layers, plan)
    if args.json:
        _print_json({**plan.to_dict(), "removed": removed})
    else:
        print(f"removed {removed} record file(s)")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    from rose import render
    from rose.retention import manage
    from rose.typedrecord import asdict

    moved = (manage.archive if args.command == "archive" else manage.restore)(_layers(args), args.id)
    if args.json:
        _print_json(asdict(moved))
    else:
        print(render.moved(moved))
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from rose import render

    from rose.embed import EmbedUnavailable, catch_up

    layers = _layers(args)
    stores = layers.require_any()
    results = []
    for store in stores:
        report = store.rebuild_index() if args.rebuild else store.sync()
        results.append((store, report, store.index.count()))
    try:
        vectors = catch_up(stores, layers.settings().embed)
    except EmbedUnavailable as exc:
        raise RoseError(str(exc)) from None
    if args.json:
        _print_json([{"scope": s.scope.value, "root": str(s.root), "indexed": n, "added": r.added,
                      "updated": r.updated, "removed": r.removed,
                      "embedded": vectors[1][i][1] if vectors else 0, "embed_model": vectors[0] if vectors else None,
                      "problems": [{"path": p, "reason": why} for p, why in r.problems]}
                     for i, (s, r, n) in enumerate(results)])
    else:
        print(render.index_report(results))
        print(f"dense: {vectors[0]}, " + ", ".join(f"{total} vectors (+{new})" for new, total in vectors[1])
              if vectors else "dense: no embedding model (lexical search only)")
    return 1 if any(r.problems for _s, r, _n in results) and args.strict else 0


def cmd_events(args: argparse.Namespace) -> int:
    from rose.store import events

    rows = []
    for store in _layers(args).require_any():
        rows += [{**e, "store": store.scope.value} for e in events.read(store.events_path, kind=args.kind)]
    rows.sort(key=lambda e: str(e.get("ts", "")))
    rows = rows[-args.limit:] if args.limit else rows
    if args.json:
        _print_json(rows)
    else:
        for e in rows:
            rest = {k: v for k, v in e.items() if k not in {"ts", "kind", "store"}}
            print(f"{e.get('ts', '')}  {e.get('kind', ''):<8} {json.dumps(rest, ensure_ascii=False)}")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from rose import doctor, render

    checks = doctor.run(_layers(args), probe=args.probe)
    if args.json:
        _print_json([c.to_dict() for c in checks])
    else:
        print(render.checks(checks))
    return 1 if any(c.level is doctor.Level.FAIL for c in checks) else 0


def cmd_config(args: argparse.Namespace) -> int:
    from rose import config
    from rose.model import Scope

    layers = _layers(args)
    settings = layers.settings()
    action, key, value = args.action, args.key, args.value
    if action not in (None, "list", "get", "set"):  # `rose config KEY [VALUE]` shorthand
        action, key, value = ("set" if key is not None else "get"), action, key
    if action in (None, "list"):
        rows = [{"key": k.key, "value": config.display(config.get(settings, k.key)), "type": k.type_name,
                 "default": config.display(k.default), "reason": k.reason} for k in config.knobs()]
        if args.json:
            _print_json(rows)
        else:
            width = max(len(r["key"]) for r in rows)
            for r in rows:
                mark = "" if r["value"] == r["default"] else "   (default " + r["default"] + ")"
                print(f"{r['key']:<{width}}  {r['value']}{mark}")
        return 0
    if key is None:
        raise RoseError(f"rose config {action} needs a KEY")
    if action == "get":
        shown = config.display(config.get(settings, key))
        _print_json({"key": key, "value": shown}) if args.json else print(shown)
        return 0
    if value is None:
        raise RoseError("rose config set needs KEY and VALUE")
    stored, path, note = layers.set_setting(key, value, Scope(args.scope))
    from rose.store.events import EventKind

    layers.writable(Scope(args.scope)).event(EventKind.CONFIG, key=key, value=config.display(stored))
    if args.json:
        _print_json({"key": key, "value": config.display(stored), "file": str(path), "note": note or None})
    else:
        print(f"{key} = {config.display(stored)}  ({path})" + (f"\n  {note}" if note else ""))
    return 0


def cmd_trust(args: argparse.Namespace) -> int:
    from rose import config, trust

    layers = _layers(args)
    if args.list:
        pins = trust.pins()
        if args.json:
            _print_json([{"path": p.path, "sha256": p.sha256, "at": p.at,
                          "state": trust.state(Path(p.path)).value} for p in pins])
        else:
            print("\n".join(f"{trust.state(Path(p.path)).value:<8} {p.path}  (trusted {p.at})" for p in pins)
                  or "no trusted repository configs")
        return 0
    if layers.project is None:
        from rose.errors import StoreNotFound

        raise StoreNotFound(layers.cwd)
    path = layers.project.config_path
    if args.revoke:
        removed = trust.revoke(path)
        _print_json({"path": str(path), "revoked": removed}) if args.json else \
            print(f"{'no longer trusted' if removed else 'was not trusted'}: {path}")
        return 0
    if not path.exists():
        raise RoseError(f"{path} does not exist: there is nothing to trust")
    keys = config.privileged_keys(config.read_overrides(path))
    pin = trust.pin(path)
    if args.json:
        _print_json({"path": pin.path, "sha256": pin.sha256, "privileged_keys": keys})
    else:
        print(f"trusted {pin.path} as it is now (sha256 {pin.sha256[:12]}…); any change to it lapses this trust")
        print("  it chooses: " + (", ".join(keys) if keys else "nothing privileged (it only tunes rose)"))
    return 0


def cmd_switch(args: argparse.Namespace) -> int:
    from rose.store.layers import OFF_MARKER, repository_root, switch, switched_off

    repo = repository_root(Path(args.cwd) if args.cwd else Path.cwd())
    on = args.command == "on"
    changed = switch(repo, on=on)
    still = switched_off(repo)
    if args.json:
        _print_json({"repository": str(repo), "on": still is None, "changed": changed})
    elif on and still:
        print(f"rose is still off in {repo}: {still} (remove {repo / OFF_MARKER} to switch it on)")
    else:
        print(f"rose is {'on' if on else 'off'} in {repo}" + ("" if changed else " (it already was)")
              + ("" if on else ": no recall, no learning there; lessons stay where they are. `rose on` undoes it"))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from rose import render
    from rose.search import search

    hits = search(_layers(args), " ".join(args.query), limit=args.limit)
    if args.json:
        _print_json([h.to_dict() for h in hits])
    else:
        print(render.hits(hits))
    return 0


def _recall(args: argparse.Namespace):
    from rose.config import Selector
    from rose.recall import recall

    layers = _layers(args)
    layers.require_any()
    settings = layers.settings()
    if args.selector:
        settings.recall.selector = Selector(args.selector)
    judge = None
    if settings.recall.selector is not Selector.HYBRID:
        from rose.judge import Judge

        judge = Judge.for_store(layers.stores()[0], settings)
    # a dry run: the session record is read (tiers) but never written
    return recall(layers, args.prompt, session_id=args.session, settings=settings, judge=judge, hot=False,
                  record_session=False)


def cmd_recall(args: argparse.Namespace) -> int:
    from rose import render

    result = _recall(args)
    off = _switched_off(args)
    if args.json:
        _print_json({"notice": result.notice, "block": result.block, "lessons": result.trace.get("pack", []),
                     **({"switched_off": off} if off else {})})
    else:
        if off:
            print(off)
        print(render.recall(result))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from rose import render

    result = _recall(args)
    off = _switched_off(args)
    if args.json:
        _print_json({**result.trace, **({"switched_off": off} if off else {})})
    else:
        if off:
            print(off)
        print(render.trace(result.trace))
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    """Selection rules: list them with their record and the growth ratio, teach one, or forget one."""
    from rose import routing

    layers = _layers(args)
    stores = layers.require_any()
    if args.forget:
        path = routing.forget([s.routing_dir for s in stores], args.forget)
        if args.json:
            _print_json({"forgotten": args.forget, "path": str(path)})
        else:
            print(f"forgot {args.forget} ({path})")
        return 0
    if args.when or args.then:
        if not (args.when and args.then):
            raise RoseError("teaching a rule takes both --when \"<a kind of task>\" and --then \"<where to look>\"")
        store = layers.project or stores[0]
        look_in = [f for chunk in (args.look_in or []) for f in chunk.split(",") if f] \
            or ([] if args.skip else routing.folders_named(args.then))
        skip = [f for chunk in (args.skip or []) for f in chunk.split(",") if f]
        rule = routing.save_rule(store.routing_dir, args.when, args.then, look_in=look_in, skip=skip,
                                 source="manual")
        if args.json:
            _print_json({**rule.to_dict(), "path": str(store.routing_dir / f"{rule.id}.yaml")})
        else:
            print(f"rule {rule.id} stored: {rule.text()[2:]}")
            print(f"  {routing.growth(stores).line()}")
        return 0
    rules, problems = routing.load_rules([s.routing_dir for s in stores])
    given = {r.id for r in routing.within_cap(rules, layers.settings().routing.max_tokens)}
    g = routing.growth(stores)
    ranked = sorted(rules, key=lambda r: (-r.record, -r.tried, r.id))
    if args.json:
        _print_json({"rules": [{**r.to_dict(), "record": round(r.record, 4), "precision": r.precision,
                                "recall": r.recall, "within_cap": r.id in given} for r in ranked],
                     "growth": {"rules": g.rules, "lessons": g.lessons, "ratio": round(g.ratio, 4)},
                     "problems": [{"path": str(p), "reason": why} for p, why in problems]})
        return 0
    if not rules:
        print("no selection rules yet (the learner writes them after sessions; `rose route --when ... --then ...`)")
    for r in ranked:
        record = (f"helped {r.helped}/{r.tried} selections, precision {r.precision:.2f}, recall {r.recall:.2f}"
                  if r.tried else "not tried yet")
        cap = "" if r.id in given else "  [over routing.max_tokens: not sent]"
        folders = (" look in " + ", ".join(r.look_in) if r.look_in else "") + (
            " skip " + ", ".join(r.skip) if r.skip else "")
        print(f"{r.id}  {r.text()[2:]}{cap}")
        print(f"    {record};{folders or ' no folder named'} ({r.source})")
    for path, why in problems:
        print(f"unreadable: {path}: {why}")
    print(g.line())
    return 0


def cmd_eval_recall(args: argparse.Namespace) -> int:
    from rose import evalrecall

    layers = _layers(args)
    layers.require_any()
    settings = layers.settings()
    arms = tuple(a for chunk in (args.arms or []) for a in chunk.split(",") if a) or evalrecall.ARMS
    unknown = [a for a in arms if a not in evalrecall.ARMS]
    if unknown:
        raise RoseError(f"unknown arm(s) {', '.join(unknown)}: choose from {', '.join(evalrecall.ARMS)}")
    judge = _judge(layers, settings) if any(a != "hybrid" for a in arms) else None
    report = evalrecall.evaluate(layers, judge, settings, arms=arms, limit=args.limit)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(evalrecall.render(report))
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    from rose.install import InstallScope, agents_for, install_agents, render_reports, uninstall

    cwd = Path(args.cwd) if args.cwd else Path.cwd()
    if args.command == "install":  # with --agent auto, an agent not found gets a "skipped (why)" report
        reports = install_agents(args.agent, InstallScope(args.scope), cwd, Path.home(), dry_run=args.dry_run,
                                 mcp=not args.no_mcp)
    else:  # uninstalling from an agent that was never wired is a no-op, so "auto" means all here
        agent = "all" if args.agent == "auto" else args.agent
        reports = [uninstall(a, InstallScope(args.scope), cwd, Path.home(), dry_run=args.dry_run) for a in agents_for(agent)]
    if args.json:
        _print_json([r.to_dict() for r in reports])
    else:
        print(render_reports(reports))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from rose.demo import run_demo

    return run_demo(keep=args.keep, out=sys.stdout)


# -- where users already are (issue #16): the MCP server, rule-file import, the visual view, the defect report -----
def cmd_mcp(args: argparse.Namespace) -> int:
    from rose.mcp.server import serve

    serve(Path(args.cwd) if args.cwd else None)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from rose.importers import import_paths
    from rose.model import Scope

    layers = _layers(args)
    settings = layers.settings()
    scope = Scope(args.scope)
    judge = None if args.dry_run else _judge_for_import(layers, scope, settings)
    base = Path(args.cwd) if args.cwd else Path.cwd()
    result = import_paths(layers, [base / p for p in args.paths], scope=scope, dry_run=args.dry_run,
                          prune=args.prune, settings=settings, judge=judge)
    if args.json:
        _print_json(result.to_dict())
    else:
        print(result.render())
    return 1 if result.errors else 0


def _judge_for_import(layers, scope, settings):
    from rose.judge import Judge

    return Judge.for_store(layers.writable(scope), settings)


def cmd_view(args: argparse.Namespace) -> int:
    from rose import view

    layers = _layers(args)
    data = view.collect(layers)
    out = Path(args.out) if args.out else view.default_path(layers)
    view.write(data, out)
    if args.json and not args.serve:
        _print_json({"path": str(out), "lessons": len(data["nodes"]), "conflicts": len(data["conflicts"])})
        return 0
    print(f"wrote {out} ({len(data['nodes'])} lessons, {len(data['conflicts'])} open conflicts)")
    if args.serve:
        view.serve(out, port=args.port, announce=print)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from rose import defect

    layers = _layers(args)
    report = defect.build(layers, args.about)
    out = Path(args.out) if args.out else defect.default_path(args.about)
    defect.write(report, out)
    if args.json:
        _print_json({"path": str(out), "about": report.about, "sections": [s.title for s in report.sections],
                     "matches": report.matches})
    else:
        print(f"wrote {out}: a redacted defect report about {report.about!r} ({report.matches} matching trace(s) "
              "and event(s)); it was sent nowhere. Read it, then attach it to an issue if you like.")
    return 0


def _add_where_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    command("mcp", cmd_mcp, "serve rose's tools (search, show, add, used) and lessons over MCP on stdio "
            "(what `rose install` registers; needs the mcp extra)")

    p = command("import", cmd_import, "turn CLAUDE.md, AGENTS.md, .cursorrules, .cursor/rules/*.mdc or "
                ".github/copilot-instructions.md into lessons (a rule or section each), reconciled and idempotent")
    p.add_argument("paths", nargs="+", metavar="PATH", help="rule files, or folders to look in for them")
    p.add_argument("--dry-run", action="store_true", help="show what would be added, updated or removed; write "
                   "nothing")
    p.add_argument("--scope", choices=["project", "global"], default="project",
                   help="project (default): this repository's lessons; global: your rules for every project")
    p.add_argument("--prune", action="store_true", help="archive the lessons whose piece is gone from its file "
                   "(by default they are only reported)")

    p = command("view", cmd_view, "write a self-contained HTML view of the lesson graph (and --serve it on "
                "127.0.0.1)")
    p.add_argument("--out", help="the HTML file (default: rose-view.html in the project store's cache/)")
    p.add_argument("--serve", action="store_true", help="serve it on 127.0.0.1 until interrupted")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any free one)")

    p = command("report", cmd_report, "write a redacted defect report about a topic to a file (sends nothing)")
    p.add_argument("--about", required=True, help="what went wrong, in a few words (matched against traces and "
                   "events)")
    p.add_argument("--out", help="the report file (default: rose-report-<topic>-<time>.md in the current folder)")


# -- parser ---------------------------------------------------------------------------------------------------
class _Unbuilt:
    """A subcommand the command line does not name: its arguments are not built (argparse takes ~25 ms, twice a bare
    interpreter's start, to build all of them)."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (`only`) the parser with just that subcommand built: what `main` parses a command line
    with. A name that is no subcommand gets the whole parser, so argparse lists the choices."""
    import argparse

    parser = argparse.ArgumentParser(prog="rose", description="A continual-learning memory for coding agents.")
    parser.add_argument("--version", action="version", version=f"rose {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    built: list[str] = []

    def command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        if only is not None and name != only:
            return _Unbuilt()   # type: ignore[return-value]  # takes any add_argument, builds nothing
        built.append(name)
        return _common(sub.add_parser(name, help=help_text, description=help_text), handler)

    def hook(name: str, help_text: str) -> None:
        if only in (None, name):
            built.append(name)
            sub.add_parser(name, help=help_text)

    _declare(command, hook)
    if only is not None and not built:
        return build_parser()
    return parser


def _common(p: argparse.ArgumentParser, handler: Handler) -> argparse.ArgumentParser:
    """What every subcommand but `hook` takes."""
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--cwd", help="act as if run from this directory")
    p.set_defaults(handler=handler)
    return p


def _declare(command: Callable[[str, Handler, str], argparse.ArgumentParser],
             hook: Callable[[str, str], None]) -> None:
    """Every subcommand and its arguments, declared once, in the order `rose --help` lists them: read by argparse
    (build_parser), and without it for a command line of switches alone (_switches_only)."""
    command("init", cmd_init, "create a project store (.rose/) in the current directory")

    p = command("add", cmd_add, "record a lesson by hand")
    p.add_argument("text", help="the lesson text, or - to read it from stdin")
    p.add_argument("--title")
    p.add_argument("--family")
    p.add_argument("--tags", action="append", help="comma-separated; may repeat")
    p.add_argument("--scope", choices=["project", "global"], default=None,
                   help="default: decided by the scope judgement (project when no model answers)")

    p = command("used", cmd_used, "report which served lessons a session actually used (wins over the judge)")
    p.add_argument("refs", nargs="*", help="lesson ids or the refs the block showed (M1 M3)")
    p.add_argument("--session", required=True)
    p.add_argument("--used", action="append", help="ids, comma- or space-separated; may repeat")
    p.add_argument("--unused", action="append")

    command("conflicts", cmd_conflicts, "open contradictions between lessons")
    p = command("resolve", cmd_resolve, "settle a contradiction: keep ID (default) or --drop it")
    p.add_argument("id")
    p.add_argument("--drop", action="store_true",
                   help="ID was wrong: move it to the cold archive (rose restore undoes it); the others stand")

    command("learn", cmd_learn, "run queued learning work now (normally done detached after each session)")

    command("status", cmd_status, "families, counts per level and status, tokens stored, precision")

    command("credit", cmd_credit, "each measured lesson: its effect (served vs withheld sessions), samples, verdict")

    p = command("evolution", cmd_evolution, "generated skills and guardrails: list, show, approve, reject, rollback, "
                "promote ID; distill")
    p.add_argument("action", nargs="?", choices=["list", "show", "approve", "reject", "rollback", "promote",
                                                  "distill"], default="list")
    p.add_argument("id", nargs="?", help="a record's id or name")

    p = command("tree", cmd_tree, "the lesson DAG with levels and delta manifests")
    p.add_argument("--family")
    p.add_argument("--all", action="store_true", help=f"draw every line (a tree of more than {render_bound('TREE')} "
                   "lines shows each family's count and its first subtrees; --json has them all)")

    p = command("show", cmd_show, "one lesson, whole: provenance, importance, utility, uses, archive path")
    p.add_argument("id")

    p = command("list", cmd_list, "the hot store (or --cold, the archive): counts, tokens, and one row per record")
    p.add_argument("filter", nargs="?", help="a substring or glob (*auth*) of the id, title, family or tags")
    p.add_argument("--scope", choices=["project", "global"])
    p.add_argument("--type", choices=["lesson", "orientation", "experience"])
    p.add_argument("--cold", action="store_true", help="list the cold archive instead of the hot store")
    p.add_argument("--all", action="store_true", help=f"every row (by default the first {render_bound('LIST')}, "
                   "by importance; --json has them all)")

    p = command("delete", cmd_delete, "remove one record for good (says what happens to its DAG neighbours; asks)")
    p.add_argument("id")
    p.add_argument("--yes", action="store_true", help="do not ask")

    p = command("clear", cmd_clear, "remove every hot and cold record of one store (asks)")
    p.add_argument("--scope", choices=["project", "global"], default="project")
    p.add_argument("--yes", action="store_true", help="do not ask")

    p = command("archive", cmd_archive, "move a record (and the detail only it leads to) to the cold archive")
    p.add_argument("id")
    p = command("restore", cmd_archive, "bring a cold record (and its lineage) back to the hot store")
    p.add_argument("id")

    p = command("index", cmd_index, "catch the search index up with the files and report problems")
    p.add_argument("--rebuild", action="store_true", help="drop and rebuild the index from the files")
    p.add_argument("--strict", action="store_true", help="exit 1 when a file could not be read")

    p = command("events", cmd_events, "raw telemetry")
    p.add_argument("--kind")
    p.add_argument("--limit", type=int, default=50, help="last N events (0 = all)")

    p = command("doctor", cmd_doctor, "store, config, index, backends, hook wiring, queued work: what to fix")
    p.add_argument("--probe", action="store_true", help="make one tiny real call on the configured backend")

    p = command("config", cmd_config, "list, get or set settings (`rose config KEY VALUE` works too)")
    p.add_argument("action", nargs="?", help="list | get | set | KEY")
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?")
    p.add_argument("--scope", choices=["project", "global"], default="project")

    command("off", cmd_switch, "switch rose off in this repository (no recall, no learning; lessons stay)")
    command("on", cmd_switch, "switch rose back on in this repository")

    p = command("trust", cmd_trust, "honour this repository's .rose/config.yaml as it is now (pinned to its content)")
    p.add_argument("--revoke", action="store_true", help="stop trusting it")
    p.add_argument("--list", action="store_true", help="every trusted config and whether it changed since")

    p = command("search", cmd_search, "ranked lessons for a query, with their paths (weaker matches after, marked)")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=10)

    for name, handler, text in (("recall", cmd_recall, "what would be injected for a prompt, and why"),
                                ("trace", cmd_trace, "every recall stage for a prompt, ending in the verbatim block")):
        p = command(name, handler, text)
        p.add_argument("--prompt", required=True)
        p.add_argument("--session", help="read this session's served record (tiers); never written")
        p.add_argument("--selector", choices=["fork", "judge", "hybrid"], help="override recall.selector")

    p = command("route", cmd_route, "selection rules (where to look for a kind of task): their record and the "
                                    "growth ratio; teach one with --when/--then, delete one with --forget")
    p.add_argument("--when", help="the kind of task, e.g. \"the task runs the integration tests\"")
    p.add_argument("--then", help="where to look or what to skip, e.g. \"read nodes/testing/ first\"")
    p.add_argument("--look-in", action="append", help="lesson folders the rule points at (default: those --then "
                                                     "names as nodes/<folder>/); comma-separated, may repeat")
    p.add_argument("--skip", action="append", help="lesson folders the rule rules out; comma-separated, may repeat")
    p.add_argument("--forget", metavar="ID", help="delete this rule")

    p = command("eval-recall", cmd_eval_recall, "replay recorded episodes (prompt -> lessons used) through every "
                                                "selector arm against the apex walk: precision, recall, tokens, calls")
    p.add_argument("--arms", action="append", help="comma-separated: apex, hybrid, judge, fork (default: all)")
    p.add_argument("--limit", type=int, default=0, help="the newest N episodes only (0 = all)")

    for name, text in (("install", "wire rose's hooks into Claude Code and Codex (this project, or --scope user)"),
                       ("uninstall", "remove exactly what rose install added")):
        p = command(name, cmd_install, text)
        p.add_argument("--scope", choices=["project", "user"], default="project",
                       help="project: this directory only (default); user: every repository")
        p.add_argument("--agent", choices=["auto", "claude", "codex", "all"], default="auto",
                       help="auto: the agents found on this machine")
        p.add_argument("--dry-run", action="store_true", help="show what would change; write nothing")
        if name == "install":
            p.add_argument("--no-mcp", action="store_true", help="wire the hooks only, without registering "
                           "rose's MCP server")

    hook("hook", "the hook entry point agents call: rose hook <claude|codex> <Event> (JSON on stdin)")

    p = command("demo", cmd_demo, "run rose on a throwaway demo store and show what it does")
    p.add_argument("--keep", action="store_true", help="keep the demo folder and print its path")
    _add_where_commands(command)


def render_bound(which: str) -> int:
    """A human view's bound, for a help text (render is imported only when the parser names tree or list)."""
    from rose import render

    return int(getattr(render, f"{which}_SHOWN"))


def _version() -> str:
    from rose import __version__

    return __version__


class _Declared:
    """One subcommand's arguments read from their declaration, without argparse: each destination's default, and
    the switches (store_true options) by their spellings. Not `plain` when a command line of switches alone would
    not simply take every other default (a required argument, a positional that is not optional, a type applied to
    a string default, another action): argparse decides those."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.switches: dict[str, str] = {}
        self.plain = True

    def add_argument(self, *names: str, **kwargs: Any) -> None:
        action = kwargs.get("action")
        if names[0].startswith("-"):
            longs = [n for n in names if n.startswith("--")]
            dest = kwargs.get("dest") or (longs or list(names))[0].lstrip("-").replace("-", "_")
        else:
            dest = names[0]
            self.plain &= kwargs.get("nargs") == "?"
        self.plain &= not kwargs.get("required") and action in (None, "store_true", "append") and not (
            kwargs.get("type") is not None and isinstance(kwargs.get("default"), str))
        self.values[dest] = kwargs.get("default", False if action == "store_true" else None)
        if action == "store_true":
            self.switches.update(dict.fromkeys(names, dest))

    def set_defaults(self, **kwargs: Any) -> None:
        self.values.update(kwargs)


def _switches_only(argv: list[str]) -> Any:
    """A command line of one subcommand and its switches alone (`rose list`, `rose tree --all`, `rose status
    --json`), read into what argparse would make of it without importing argparse or building its parser (about
    12 ms, most of a bare interpreter's start, for a command that may take 20); None for any other, which argparse
    reads (and says what is wrong with). tests/test_cli_parser.py holds the two equal for every subcommand."""
    from types import SimpleNamespace

    name, found = argv[0], []

    def command(named: str, handler: Handler, help_text: str) -> Any:
        if named != name:
            return _Unbuilt()
        found.append(_Declared())
        return _common(found[0], handler)   # type: ignore[arg-type]  # takes what _common calls

    _declare(command, lambda named, help_text: None)
    if len(found) != 1 or not found[0].plain:
        return None
    values = {**found[0].values, "command": name}
    for arg in argv[1:]:
        dest = found[0].switches.get(arg)
        if dest is None:
            return None
        values[dest] = True
    return SimpleNamespace(**values)


def parse(argv: Sequence[str]) -> tuple[argparse.ArgumentParser | None, argparse.Namespace]:
    """The command line read (argparse exits on a bad one, as it always has). A command line of switches alone is
    read without argparse (_switches_only): no parser is built, and None stands for it."""
    argv = list(argv)
    name = argv[0] if argv and not argv[0].startswith("-") else None
    if name is not None:
        args = _switches_only(argv)
        if args is not None:
            return None, args
    parser = build_parser(name)
    return parser, parser.parse_args(argv)


def dispatch(parser: argparse.ArgumentParser | None, args: argparse.Namespace) -> int:
    """Run a parsed command: its exit code, every failure one line. The warm helper calls this too, inside a
    request's environment (rose.warm.commands), so the environment is read through rose.environment."""
    if not getattr(args, "handler", None):
        (parser or build_parser()).print_help()
        return 2
    folder = getattr(args, "cwd", None)
    if folder is not None and not Path(folder).is_dir():   # a typo would find (or make) a store for no repository
        print(f"rose: --cwd {folder}: not a directory", file=sys.stderr)
        return 2
    try:
        return args.handler(args)
    except RoseError as exc:
        print(f"rose: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug must still read as one line, with the way to see more
        from rose import environment

        healed = _healed_after(args, exc)
        if healed:
            print(f"rose: {healed}", file=sys.stderr)
            return 1
        if environment.get(envvars.DEBUG):
            raise
        print(f"rose: internal error: {type(exc).__name__}: {exc} (set {envvars.DEBUG}=1 for the traceback)",
              file=sys.stderr)
        return 1


def _healed_after(args: argparse.Namespace, exc: Exception) -> str | None:
    """After a damaged index.db (derived data) failed a command: what was discarded, to be rebuilt from the lesson
    files by the next command, or None (not damage, or it could not be healed: the error is reported as it is)."""
    from rose.store.index import damaged

    if not damaged(exc):
        return None
    try:
        layers = _layers(args)
    except Exception:  # noqa: BLE001 - the first error is the one to report
        return None
    try:
        return layers.healed_after(exc)
    finally:
        layers.close()


# Commands whose stdout is a protocol for a program (JSON-RPC to an MCP client), not text for a person
SPEAKS_PROTOCOL = frozenset({"mcp"})


def main(argv: Sequence[str] | None = None) -> int:
    # `rose hook` never reaches here: rose.launcher routes it to rose.hooks.entry (and an inspection command to
    # the warm helper when one is up, rose.warm.client.run_command, which prints through the same rose.terminal)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in SPEAKS_PROTOCOL:
        parser, args = parse(argv)
        return dispatch(parser, args)
    from rose.terminal import Shown

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Shown(sys.stdout), Shown(sys.stderr)   # a lesson's words cannot drive the terminal
    try:
        parser, args = parse(argv)
        return dispatch(parser, args)
    finally:
        for shown in (sys.stdout, sys.stderr):
            try:
                shown.flush()
            except (OSError, ValueError):   # a closed pipe: nothing more can reach its reader
                pass
        sys.stdout, sys.stderr = streams
