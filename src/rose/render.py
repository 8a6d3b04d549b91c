"""Plain-text rendering of the records the commands compute. Kept apart so the CLI only parses, calls, prints."""
from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False   # typing is not imported to run
if TYPE_CHECKING:
    from rose.doctor import Check
    from rose.recall import RecallResult
    from rose.recall.trace import Trace
    from rose.model import Node
    from rose.report import StatusReport, TreeLine, TreeView
    from rose.retention.manage import Bucket, DeletePlan, Listing, Moved, Shown
    from rose.search import Hit
    from rose.store import Store
    from rose.store.index import SyncReport


def _pct(value: float | None) -> str:
    return "n/a (no episodes yet)" if value is None else f"{value:.0%}"


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def status(r: StatusReport) -> str:
    out = []
    for s in r.stores:
        bad = f", {len(s.problems)} unreadable file(s): run `rose index`" if s.problems else ""
        out.append(f"{s.scope:<8} {s.root}  {s.lessons} lessons, {s.tokens} tokens{bad}")
    total = sum(r.families.values())
    out.append(f"lessons  {total} in {len(r.families)} families, {r.tokens} tokens stored")
    if r.families:
        out.append("families " + ", ".join(f"{k} {v}" for k, v in r.families.items()))
        out.append("levels   " + ", ".join(f"L{k} {v}" for k, v in r.levels.items()))
        out.append("status   " + ", ".join(f"{k} {v}" for k, v in r.statuses.items()))
        out.append("types    " + ", ".join(f"{k} {v}" for k, v in r.memory_types.items()))
    out.append(f"episodes {r.episodes}")
    p = r.precision
    out.append(f"precision {_pct(p.value)}" + (f" ({p.used} used / {p.served} served)" if p.served else ""))
    for fam, fp in r.precision_by_family.items():
        out.append(f"  {fam:<20} {_pct(fp.value)} ({fp.used}/{fp.served})")
    c = r.compression
    if c.compressed or c.merged or c.evaluated or c.demoted:
        held = (f"held-out {c.heldout_passed}/{c.heldout_total} reproduced ({c.heldout_rate:.0%}) over {c.evaluated}"
                f" evaluated" if c.heldout_total else "no held-out evaluation yet")
        out.append(f"compression {c.compressed} compressed, {c.merged} merged; {held}, {c.demoted} demoted")
    if c.rescues or c.sticky or c.open_trials or c.gaps or c.repaired:
        out.append(f"descent  {_n(c.rescues, 'rescue')}, {_n(c.repaired, 'claim')} folded back by repair, "
                   f"{_n(c.sticky, 'sticky patch', 'sticky patches')} served, {c.open_trials} in progress, "
                   f"{_n(c.gaps, 'knowledge gap')}")
    out += _credit_lines(r.credit)
    if r.retention:
        out.append("retention (tokens; hard and soft watermarks per scope and type):")
        out += _buckets(r.retention)
    if r.routing:
        out.append(f"routing  {r.routing['line']}")
    if r.stages:
        out.append("model calls, last 7 days:")
        for stage, cost in r.stages.items():
            tokens = f"  {cost.tokens:,} tok" + (f" ({cost.unreported} unreported)" if cost.unreported else "")
            out.append(f"  {stage:<14} {cost.calls} calls ({cost.cached} cached, {cost.failures} failed)"
                       f"{tokens}  ${cost.cost_usd:.4f}  {cost.ms / 1000:.1f}s")
    k = r.cost
    if k.prompts or k.learner_calls:
        out.append(f"tokens, last {k.days} days: packs carried {k.pack_tokens:,} over {_n(k.prompts, 'prompt')}, "
                   f"{k.saved:,} saved by compression ({k.saved_by_withholding:,} more left out by withholding); "
                   f"the learner spent {k.learner_tokens:,} in {_n(k.learner_calls, 'call')}"
                   + (f" (${k.learner_cost_usd:.4f})" if k.learner_cost_usd else "")
                   + (f": {'saves more than it spends' if k.saved > k.learner_tokens else 'spends more than it saves'}"
                      if k.learner_calls else ""))
    return "\n".join(out)


def _credit_lines(c) -> list[str]:  # rose.credit.report.CreditSummary
    if c is None:
        return []
    out = []
    if c.measured or c.withhold_rate > 0:
        rate = f"withholding {c.withhold_rate:.0%} of sessions per lesson" if c.withhold_rate > 0 else \
            "withholding off (credit.withhold_rate 0)"
        out.append(f"credit   {rate}: {_n(c.measured, 'lesson')} measured ({c.measuring} measuring, "
                   f"{c.suspect} suspect, {c.helps} help, "
                   f"{c.no_effect} no effect, {len(c.harmful)} harmful); {c.served_samples} served / "
                   f"{c.withheld_samples} withheld sessions — rose credit")
    for h in c.harmful:
        where = "withdrawn" if h["status"] not in ("active", "disputed") else "still served (credit.withdraw_harmful is off)"
        out.append(f"  harmful {h['id']} {h['title']}: {where}")
    return out


def credit(items, withhold_rate: float) -> str:  # list[rose.credit.report.LessonCredit]
    head = (f"withholding {withhold_rate:.0%} of sessions per lesson to measure it (credit.withhold_rate)"
            if withhold_rate > 0 else "withholding is off (credit.withhold_rate 0): nothing new is measured")
    if not items:
        return head + "\n(no lesson measured yet: a sample is a session that served or withheld it and ended in a " \
                      "success or a failure)"
    out = [head, f"{'verdict':<10} {'effect':>13}  {'served':>9}  {'withheld':>9}  lesson"]
    for i in items:
        c = i.credit
        status = "" if i.status in ("active", "disputed") else f" [{i.status}]"
        out.append(f"{i.verdict.value:<10} {c.effect:+6.2f} ± {c.sd:4.2f}  {c.served.passes:>4}/{c.served.n:<4}  "
                   f"{c.withheld.passes:>4}/{c.withheld.n:<4}  {i.id} {i.title}{status}")
    out.append("effect: posterior mean success rate served minus withheld, ± its posterior sd; served and withheld: "
               "successful / all sessions of that arm")
    return "\n".join(out)


def _arms(a) -> str:  # rose.evolve.registry.Artifact
    t, c = a.treatment, a.control
    if not (t.n or c.n):
        return ""
    return (f"treatment {t.passes}/{t.n} ({t.mean_calls:.1f} calls), control {c.passes}/{c.n} "
            f"({c.mean_calls:.1f} calls)")


def evolution_list(items, enabled: bool) -> str:  # list[rose.evolve.commands.Listed]
    head = "evolution is on" if enabled else "evolution is off (evolution.enabled, your own config)"
    if not items:
        return head + "\n(no generated skills or guardrails yet)"
    out = [head]
    for i in items:
        a = i.artifact
        arms = _arms(a)
        extra = f"; {arms}" if arms else (f"; {a.shadow_matches} shadow matches" if a.state.value == "shadow" else "")
        out.append(f"{a.state.value:<9} {a.kind:<9} {a.id} {a.name} ({a.scope}) on {a.trigger}{extra}")
        if a.reason and not a.state.live:
            out.append(f"          {a.reason}")
    return "\n".join(out)


def evolution_show(item) -> str:  # rose.evolve.commands.Listed
    a = item.artifact
    out = [f"{a.id} {a.name}: a {a.state.value} {a.kind} ({a.scope}), from {', '.join(a.sources)}",
           f"  {a.description}", f"  trigger: {a.trigger}" + (f" ({a.action})" if a.kind == "guardrail" else ""),
           "  replay cases: " + "; ".join(f"{'fires' if f else 'quiet'}: {t}" for t, f in a.cases)]
    arms = _arms(a)
    if arms:
        out.append(f"  arms since the trial opened: {arms}; {a.trial_uses} trial uses")
    if a.state.value == "shadow":
        out.append(f"  shadow matches: {a.shadow_matches}")
    if item.path:
        out.append(f"  SKILL.md: {item.path}")
    out.append("  history:")
    out += [f"    {h.get('at', '')} {h.get('from', '') or '-'} -> {h.get('to', '')}: {h.get('reason', '')}"
            for h in a.history]
    out += ["", a.body]
    return "\n".join(out)


def _buckets(items: list[Bucket]) -> list[str]:
    out = []
    for b in items:
        flag = "  OVER the hard mark: the next learner pass archives down to the soft one" if b.over else ""
        out.append(f"  {b.scope:<7} {b.memory_type:<11} hot {b.hot:>5} ({b.hot_tokens:>7} tok)   cold {b.cold:>5} "
                   f"({b.cold_tokens:>7} tok)   hard {b.hard}, soft {b.soft}{flag}")
    return out


# A human view is bounded: nobody reads 50,000 lines (--all prints every one; --json always has them all)
LIST_SHOWN = 100        # `rose list`: rows shown, by falling importance
TREE_SHOWN = 200        # `rose tree`: a tree of up to this many lines is drawn whole
TREE_PER_FAMILY = 3     # ... a larger one: each family's count and its first subtrees (the highest levels first)


def listing(r: Listing, full: bool = False) -> str:
    t = r.totals()
    scopes = ", ".join(f"{name} {c['hot']} hot / {c['cold']} cold" for name, c in r.scopes().items())
    out = [f"hot {t['hot']} ({t['hot_tokens']} tok), cold {t['cold']} ({t['cold_tokens']} tok); {scopes}"]
    types: dict[str, list[int]] = {}
    for b in r.buckets:
        c = types.setdefault(b.memory_type, [0, 0])
        c[0] += b.hot
        c[1] += b.cold
    out.append("types: " + ", ".join(f"{k} {h} hot / {c} cold" for k, (h, c) in types.items()))
    what = "cold archive" if r.cold else "hot store"
    out.append(f"{what}{' matching ' + repr(r.filter) if r.filter else ''}: {r.count()} "
               f"(ids are stable: `rose show ID`, `rose delete ID`)")
    rows = r.rows if full else r.rows[:LIST_SHOWN]
    for row in rows:
        out.append(f"{row.id:<14} {row.scope:<7} {row.memory_type:<11} imp {row.importance:.2f}  U {row.utility:.2f}  "
                   f"{row.uses:>3} uses {row.tokens:>5} tok  {plain_title(row.title)}"
                   + ("" if row.status in ("active", "archived") else f"  [{row.status}]"))
    if len(rows) < r.count():
        out.append(f"… and {r.count() - len(rows)} more, by falling importance: `rose list --all` prints every "
                   "one; a FILTER narrows the list")
    return "\n".join(out)


def plain_title(text: str, limit: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def shown(s: Shown) -> str:
    where = "cold archive" if s.cold else "hot store"
    head = [f"# {s.path}",
            f"# {s.scope} {s.node.memory_type.value}, in the {where}"
            + (f" (returns to {s.node.archived_from.value} when restored)" if s.cold and s.node.archived_from
               else ""),
            f"# importance {s.importance:.2f} (minted {s.minted_importance:.2f}; moved by {s.node.stats.successes} "
            f"successful and {s.node.stats.failures} failed uses), utility {s.utility:.3f}",
            f"# uses {s.uses}, last used {s.last_used or 'never'} ({s.age_days:.0f} days of age counted)",
            f"# evidence: {', '.join(s.node.evidence) or 'none'}"]
    if s.node.related:
        head.append(f"# related: {', '.join(s.node.related)}")
    if s.archived:
        head.append(f"# archived {s.archived.get('at', '')}: {s.archived.get('because', '')}")
    if s.bucket:
        b = s.bucket
        head.append(f"# its bucket ({b.scope}/{b.memory_type}): {b.hot_tokens} hot tokens, hard {b.hard}, soft {b.soft}")
    from rose.store.frontmatter import render_node   # PyYAML loads only for the commands that print a file

    return "\n".join(head) + "\n" + render_node(s.node)


def delete_plan(p: DeletePlan) -> str:
    where = "cold archive" if p.cold else "hot store"
    return "\n".join([f"delete {p.id} ({p.scope}, {where}): {plain_title(p.title)}"]
                     + [f"  - {e}" for e in p.effects()])


def moved(m: Moved) -> str:
    rest = [i for i in m.moved if i != m.id]
    tail = f" with {len(rest)} record(s) of its lineage ({', '.join(rest)})" if rest else ""
    if not m.moved:
        return f"{m.id}: nothing moved"
    return f"{m.id} moved to the {'cold archive' if m.to == 'archive' else 'hot store'}{tail}"


def tree(lines: list[TreeLine]) -> str:
    """Every line of the tree (`rose tree --all`); the bounded view is tree_view of what rose.report cut."""
    return _tree_lines(lines) if lines else "(no lessons)"


def tree_view(v: TreeView) -> str:
    if not v.nodes:
        return "(no lessons)"
    if v.lines:
        return _tree_lines(v.lines)
    out = []
    for f in v.families:
        out.append(f"{f.family}: {f.lessons} lesson{'' if f.lessons == 1 else 's'}")
        out += ["  " + text for t in f.trees for text in _tree_lines(t).split("\n")]
        if f.more:
            out.append(f"  … and {f.more} more trees: `rose tree --family {f.family} --all`")
    out.append(f"({v.nodes} nodes in all: `rose tree --all` draws every one, `--json` lists them)")
    return "\n".join(out)


def _tree_lines(lines: list[TreeLine]) -> str:
    out = []
    for line in lines:
        pad = "  " * line.depth + ("└─ " if line.depth else "")
        status = "" if line.status == "active" else f" [{line.status}]"
        scope = " (global)" if line.scope == "global" else ""
        tail = "  ↑ see above" if line.repeat else ""
        if line.heldout_total:
            tail += f"  held-out {line.heldout_passed}/{line.heldout_total}"
        if line.gaps:
            tail += f"  {line.gaps} knowledge gap{'' if line.gaps == 1 else 's'}"
        out.append(f"{pad}L{line.level} {line.id} {line.family}/{line.title}{status}{scope}{tail}")
        for trial in line.trials:
            what = ", ".join(trial["attached"]) if trial["kind"] != "claim" else "; ".join(trial["attached"])
            out.append(f"{'  ' * (line.depth + 2)}~ under trial ({trial['strategy']}, {trial['kind']}, "
                       f"try {trial['tries']}, after {trial['episode']}): {' '.join(what.split())[:160]}")
        for claim in line.dropped:
            rescues = f", {claim['rescues']} rescues" if claim.get("rescues") else ""
            out.append(f"{'  ' * (line.depth + 2)}- dropped ({claim['kind']}{rescues}, held by "
                       f"{claim['holder'] or '?'}): {claim['claim']}")
    return "\n".join(out)


def node(n: Node, path: Path) -> str:
    from rose.store.frontmatter import render_node

    return f"# {path}\n{render_node(n)}"


def index_report(results: list[tuple[Store, SyncReport, int]]) -> str:
    out = []
    for store, report, count in results:
        out.append(f"{store.scope.value} {store.root}: {count} indexed"
                   f" (+{report.added} ~{report.updated} -{report.removed})")
        for rel, reason in report.problems:
            out.append(f"  unreadable, skipped: {store.root / rel}: {reason}")
    return "\n".join(out)


def checks(items: list[Check]) -> str:
    marks = {"ok": "ok  ", "info": "info", "warn": "WARN", "fail": "FAIL"}
    return "\n".join(f"[{marks[c.level.value]}] {c.name}: {c.detail}" for c in items)


WEAKER = "weaker matches (no phrase or rare word of the query, not close enough in meaning to be served):"
NONE_WELL = "no lesson matches well; the nearest ones, weaker matches:"


def hits(items: list[Hit]) -> str:
    if not items:
        return "(no matching lessons)"
    out = []
    for i, h in enumerate(items):
        if not h.evidence and (i == 0 or items[i - 1].evidence):
            out.append(NONE_WELL if i == 0 else WEAKER)
        # a cold exact match has no fused score: it is marked as what it is, with its archive path
        out.append(f"{'    cold' if h.status == 'archived' else format(h.score, '8.5f')}  {h.id}  L{h.level} "
                   f"{h.family}/{h.title}\n          {h.gist}\n          {h.path}")
    return "\n".join(out)


def recall(result: RecallResult) -> str:
    out = [result.notice or "(nothing would be injected: " + str(result.trace.get("gate", "no match")) + ")"]
    for entry in result.trace.get("pack", []):
        out.append(f"  {entry['tier']:<8} {entry['id']}  {entry['tokens']:>4} tok  {entry['reason']}")
    return "\n".join(out)


def trace(t: Trace) -> str:
    out = [f"prompt    {t.get('prompt', '')[:200]!r}",
           f"gate      {t.get('gate', '')}"]
    if "store" in t:
        s = t["store"]
        out.append(f"store     {s['servable']} servable lessons, {s['tokens']} tokens (budget {s['max_pack_tokens']})")
    for c in t.get("cold", []):
        out.append(f"cold      paged in {c['id']} ({c['scope']}): {c['title'][:80]} — {c['reason']}")
    if "dense" in t:
        dense = t["dense"]
        out.append("dense     " + ("on" if dense == "on" else f"{dense}: lexical search alone ran"))
        out.append("lexical   " + ", ".join(f"{i}({sc})" for _s, i, sc in t.get("lexical_list", [])[:15]))
        out.append("dense     " + ", ".join(f"{i}({sc})" for _s, i, sc in t.get("dense_list", [])[:15]))
        out.append("candidates (fused):")
        for c in t.get("candidates", []):
            via = f" via {','.join(c['via'])}" if c["via"] else ""
            out.append(f"  {c['score']:.5f} {c['id']} L{c['level']} lex#{c['lexical_rank']} dense#{c['dense_rank']}"
                       f"{via}  {c['title']}")
        out.append(f"selector  configured {t.get('selector_configured')}, ran {t.get('selector_ran')}")
        for f in t.get("fallbacks", []):
            out.append(f"  fallback: {f}")
        if t.get("routing_rules"):
            out.append("routing rules given to the selector:")
            out += [f"  {r}" for r in t["routing_rules"]]
        for v in t.get("verdicts", []):
            out.append(f"  {v['verdict']:<10} {v['id']}  {v['reason']}")
        if "second_pass" in t:
            sp = t["second_pass"]
            out.append(f"second pass query: {sp['query'][:160]!r}")
            for c in sp.get("candidates", []):
                out.append(f"  {c['score']:.5f} {c['id']} lex#{c['lexical_rank']} dense#{c['dense_rank']}  {c['title']}")
    out.append("pack:")
    for e in t.get("pack", []):
        out.append(f"  {e['tier']:<8} {e['id']} {e['tokens']:>4} tok  {e['reason']}")
    out.append("block:")
    out.append(t.get("block", "") or "  (empty)")
    out.append(f"notice    {t.get('notice', '') or '(none)'}")
    return "\n".join(out)
