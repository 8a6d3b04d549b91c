"""What the session digest keeps, measured on a corpus of realistic transcripts with known facts planted in them.

    .venv/bin/python bench/bench_digest.py                        # build the corpus (seed 7), old vs new table
    .venv/bin/python bench/bench_digest.py --baseline 2e5bcc8     # the revision to compare with (default)
    .venv/bin/python bench/bench_digest.py --corpus /tmp/corpus   # reuse a corpus written by generate.py
    .venv/bin/python bench/bench_digest.py --budgets 3000 --sessions 120 --seed 11

The corpus (bench/transcript_corpus) is written in both agents' real line formats at several CLI versions
(Claude Code 2.0.x-2.1.x, Codex 0.4x-0.171), with compactions, sub-agents, images, pasted 10k-30k blocks, and
sizes from ~10 KB to several MB. For each session and budget the digest is made by the code under test (this
checkout) and by the baseline revision (its `src/` exported with `git archive` and run in a subprocess, readers
included), and the planted facts are looked for in the digest text:

    corrections kept     short user corrections (40-200 chars) found verbatim (whitespace aside)   target 100%
    failures kept        failed tool calls whose error line (a unique token on the output's last line) is shown
    ... in >= 2 MB       the same, in sessions of 2 MB or more
    none-kept sessions   sessions with failures of which not one is shown                         target 0
    failure spread       sessions with >= 8 failures: share of their quarters (in time) with a failure shown
    reasoning facts      planted reasoning sentences shown (after feedback / elsewhere)
    reasoning entries    reasoning blocks with an entry in the digest
    paste chars          characters of a pasted 10k-30k block shown, on average
    tokens / budget      mean and max of the digest's tokens over the budget
    sub-agent leaks      a sub-agent's text in its parent's digest                               target 0
    reader: corrections  corrections the reader holds as user turns (quote_in_user_turns finds them)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASELINE = "2e5bcc8"   # the digest before the budget-split rework
MB2 = 2_000_000


def ws(text: str) -> str:
    return " ".join(text.split())


ENTRY_RE = re.compile(r"^\[(\d+)\] ", re.M)


def entries(text: str) -> dict[int, str]:
    out: dict[int, str] = {}
    marks = list(ENTRY_RE.finditer(text))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out[int(m.group(1))] = text[m.start():end]
    return out


_LABELS = (("user", re.compile(r"^\[\d+\] user( command)?: ")), ("failures", re.compile(r"^\[\d+\] FAILED")),
           ("reasoning", re.compile(r"^\[\d+\] reasoning: ")), ("assistant", re.compile(r"^\[\d+\] assistant: ")),
           ("tool lines", re.compile(r"^\[\d+\] (ok|no verdict|called) ")))


def split(by_n: dict[int, str]) -> dict[str, int]:
    """Characters of the digest by kind of entry."""
    out = {name: 0 for name, _ in _LABELS}
    out["other"] = 0
    for text in by_n.values():
        name = next((name for name, pattern in _LABELS if pattern.match(text)), "other")
        out[name] += len(text)
    return out


def measure_session(item: dict, budgets: list[int]) -> dict:
    from rose.transcripts import Kind, digest, quote_in_user_turns, read_transcript

    conv = read_transcript(item["path"])
    facts = item["facts"]
    out: dict = {"name": item["name"], "agent": item["agent"], "bytes": item["bytes"],
                 "size_class": item["size_class"], "budgets": {}}
    out["reader_corrections"] = sum(quote_in_user_turns(conv, c) is not None for c in facts["corrections"])
    failed_texts = [m.text for m in conv.messages if m.kind is Kind.TOOL_RESULT and m.failed]
    out["reader_failures"] = sum(any(f["token"] in t for t in failed_texts) for f in facts["failures"])
    reasoning_ns = [m.n for m in conv.messages if m.kind is Kind.REASONING]
    answer_ns, last_text = [], None   # the agent's last text before each prompt, and at the end: its answers
    for m in conv.messages:
        if m.kind is Kind.TEXT:
            last_text = m.n
        elif m.is_user_words and last_text is not None:
            answer_ns.append(last_text)
            last_text = None
    if last_text is not None:
        answer_ns.append(last_text)
    paste_ns = {p["head"]: next((m.n for m in conv.messages if m.is_user_words and p["head"] in m.text), None)
                for p in facts["pastes"]}
    for budget in budgets:
        started = time.perf_counter()
        d = digest(conv, budget_tokens=budget)
        seconds = time.perf_counter() - started
        text = d.text
        flat = ws(text)
        shown = set(d.shown)
        by_n = entries(text)
        fail_kept = [f["token"] in text for f in facts["failures"]]
        quarters = None
        if len(fail_kept) >= 8:
            q = [fail_kept[i * len(fail_kept) // 4:(i + 1) * len(fail_kept) // 4] for i in range(4)]
            quarters = sum(any(part) for part in q) / 4
        out["budgets"][str(budget)] = {
            "tokens": d.tokens, "seconds": seconds, "complete": d.omitted == 0 and d.trimmed == 0,
            "split": split(by_n),
            "corrections": [ws(c) in flat for c in facts["corrections"]],
            "failures": fail_kept,
            "quarters": quarters,
            "reasoning": [(r["after_feedback"], r["token"] in text) for r in facts["reasoning"]],
            "reasoning_entries": (sum(n in shown for n in reasoning_ns), len(reasoning_ns)),
            "answers": (sum(n in shown for n in answer_ns), len(answer_ns)),
            "last_answer": bool(answer_ns) and answer_ns[-1] in shown,
            "paste_chars": [len(by_n.get(n, "")) if n is not None else 0 for n in paste_ns.values()],
            "leaks": sum(t in text for t in facts["subagent_tokens"]),
        }
    return out


def measure(corpus: Path, budgets: list[int]) -> list[dict]:
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    return [measure_session(item, budgets) for item in manifest]


def share(hits: int, total: int) -> str:
    return f"{hits / total:.1%} ({hits}/{total})" if total else "-"


def summarise(results: list[dict], budget: int) -> dict[str, str]:
    b = str(budget)
    rows = [(r, r["budgets"][b]) for r in results]
    corr = [k for _, x in rows for k in x["corrections"]]
    fails = [k for _, x in rows for k in x["failures"]]
    big = [k for r, x in rows if r["bytes"] >= MB2 for k in x["failures"]]
    with_fail = [x for _, x in rows if x["failures"]]
    none_kept = sum(1 for x in with_fail if not any(x["failures"]))
    quarters = [x["quarters"] for _, x in rows if x["quarters"] is not None]
    after = [k for _, x in rows for fb, k in x["reasoning"] if fb]
    elsewhere = [k for _, x in rows for fb, k in x["reasoning"] if not fb]
    re_kept = sum(x["reasoning_entries"][0] for _, x in rows)
    re_all = sum(x["reasoning_entries"][1] for _, x in rows)
    pastes = [c for _, x in rows for c in x["paste_chars"]]
    answers = (sum(x["answers"][0] for _, x in rows), sum(x["answers"][1] for _, x in rows))
    last = [x["last_answer"] for _, x in rows if x["answers"][1]]
    ratio = [x["tokens"] / budget for _, x in rows]
    over = sum(1 for t in ratio if t > 1.1)
    full = [x for _, x in rows if not x["complete"]]
    full_ratio = [x["tokens"] / budget for x in full]
    parts = {k: sum(x["split"][k] for x in full) for k in (full[0]["split"] if full else {})}
    whole = sum(parts.values()) or 1
    return {
        "corrections kept": share(sum(corr), len(corr)),
        "failures kept": share(sum(fails), len(fails)),
        "... in >= 2 MB sessions": share(sum(big), len(big)),
        "sessions with failures, none kept": f"{none_kept} of {len(with_fail)}",
        "failure spread (quarters shown)": f"{sum(quarters) / len(quarters):.0%}" if quarters else "-",
        "reasoning facts kept (after feedback)": share(sum(after), len(after)),
        "reasoning facts kept (elsewhere)": share(sum(elsewhere), len(elsewhere)),
        "reasoning entries shown": share(re_kept, re_all),
        "answers shown (last answer)": f"{share(*answers)} ({sum(last) / len(last):.0%})" if last else "-",
        "paste chars shown (mean)": f"{sum(pastes) / len(pastes):,.0f}" if pastes else "-",
        "tokens / budget (mean, max)": f"{sum(ratio) / len(ratio):.2f}, {max(ratio):.2f}",
        "digests over budget by > 10%": str(over),
        "sessions over budget: tokens / budget (min)": (f"{len(full)}: {sum(full_ratio) / len(full_ratio):.2f} "
                                                        f"({min(full_ratio):.2f})" if full else "-"),
        "... their digest: user / failures / reasoning": " / ".join(
            f"{parts.get(k, 0) / whole:.0%}" for k in ("user", "failures", "reasoning")),
        "... answers and texts / tool lines / other": " / ".join(
            f"{parts.get(k, 0) / whole:.0%}" for k in ("assistant", "tool lines", "other")),
        "sub-agent text leaked": str(sum(x["leaks"] for _, x in rows)),
        "digest time (mean, max)": (f"{1000 * sum(x['seconds'] for _, x in rows) / len(rows):.0f} ms, "
                                    f"{1000 * max(x['seconds'] for _, x in rows):.0f} ms"),
    }


def reader_summary(results: list[dict], manifest: list[dict]) -> dict[str, str]:
    by_name = {m["name"]: m for m in manifest}
    corr = sum(len(by_name[r["name"]]["facts"]["corrections"]) for r in results)
    fails = sum(len(by_name[r["name"]]["facts"]["failures"]) for r in results)
    return {"reader: corrections held as user turns": share(sum(r["reader_corrections"] for r in results), corr),
            "reader: failures held as failed results": share(sum(r["reader_failures"] for r in results), fails)}


def export_baseline(rev: str, into: Path) -> Path:
    archive = into / "baseline.tar"
    with open(archive, "wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data") if sys.version_info >= (3, 12) else tar.extractall(into)  # noqa: S202
    return into / "src"


def run_baseline(rev: str, corpus: Path, budgets: list[int], tmp: Path) -> subprocess.Popen:
    src = export_baseline(rev, tmp)
    env = dict(os.environ, PYTHONPATH=str(src))
    return subprocess.Popen([sys.executable, __file__, "--measure-only", "--corpus", str(corpus), "--budgets",
                             ",".join(map(str, budgets)), "--json", str(tmp / "baseline.json")], env=env,
                            cwd=str(tmp))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, help="a corpus written by transcript_corpus/generate.py")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sessions", type=int, default=120)
    ap.add_argument("--budgets", default="1500,3000,6000")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare with ('' for none)")
    ap.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.measure_only:   # the baseline's process: its own src/ is on PYTHONPATH
        args.json.write_text(json.dumps(measure(args.corpus, budgets)), encoding="utf-8")
        return
    sys.path.insert(0, str(ROOT / "src"))
    with tempfile.TemporaryDirectory(prefix="rose-bench-digest-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = args.corpus
        if corpus is None:
            sys.path.insert(0, str(ROOT / "bench" / "transcript_corpus"))
            from generate import build_corpus

            corpus = tmp / "corpus"
            started = time.monotonic()
            build_corpus(corpus, args.seed, args.sessions)
            print(f"corpus: {args.sessions} sessions, seed {args.seed}, in {time.monotonic() - started:.0f}s")
        manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
        total = sum(m["bytes"] for m in manifest)
        big = sum(1 for m in manifest if m["bytes"] >= MB2)
        print(f"{len(manifest)} sessions ({sum(m['agent'] == 'claude' for m in manifest)} Claude Code, "
              f"{sum(m['agent'] == 'codex' for m in manifest)} Codex), {total / 1e6:.0f} MB, {big} of 2 MB or more; "
              f"{sum(len(m['facts']['corrections']) for m in manifest)} corrections, "
              f"{sum(len(m['facts']['failures']) for m in manifest)} failures, "
              f"{sum(len(m['facts']['reasoning']) for m in manifest)} reasoning facts, "
              f"{sum(len(m['facts']['pastes']) for m in manifest)} pastes planted")
        child = run_baseline(args.baseline, corpus, budgets, tmp) if args.baseline else None
        started = time.monotonic()
        new = measure(corpus, budgets)
        new_s = time.monotonic() - started
        old = None
        if child is not None:
            child.wait()
            if child.returncode == 0:
                old = json.loads((tmp / "baseline.json").read_text(encoding="utf-8"))
            else:
                print(f"baseline {args.baseline} failed (exit {child.returncode})")
        print(f"measured in {new_s:.0f}s\n")
        head = f"{'':42s} {'baseline ' + args.baseline if old else '':>26s} {'this checkout':>26s}"
        for budget in budgets:
            print(f"budget {budget} tokens")
            print(head)
            now = summarise(new, budget)
            then = summarise(old, budget) if old else {}
            for key, value in now.items():
                print(f"  {key:40s} {then.get(key, ''):>26s} {value:>26s}")
            print()
        now_r = reader_summary(new, manifest)
        then_r = reader_summary(old, manifest) if old else {}
        for key, value in now_r.items():
            print(f"  {key:40s} {then_r.get(key, ''):>26s} {value:>26s}")


if __name__ == "__main__":
    main()
