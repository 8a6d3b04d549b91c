"""`rose report --about`: a redacted defect report written to a file, sending nothing anywhere."""
from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from rose.store.paths import local_root
from tests.conftest import run_rose_here as run_rose
from tests.conftest import write_own_config
from tests.support.mock_model_server import MockModelServer

GITHUB = "ghp_" + "Zr8Qm2Lk9Xw4Tb7Vn3Jc6Hd1Fs5Gy0Pa2Ue"
AWS = "AKIA" + "Q7TGUV3XKZ4WJ9RB"
SLACK = "xoxb-" + "2048163912-7749132211-Rk4Zq8Tn2Lw6Yb9Vc3Xm5Hd"


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_report_holds_versions_config_doctor_and_what_mentions_the_topic_redacted(project: Path,
                                                                                    isolated_home: Path) -> None:
    with MockModelServer() as mock:
        # the user's own config names an endpoint: the report must not call it
        write_own_config(f"agent:\n  backend: openai\n  openai_base_url: {mock.openai_base_url}\n"
                         f"# my token, pasted here by mistake: {GITHUB}\n")
        assert run_rose("init", cwd=project).returncode == 0
        events = local_root(project / ".rose") / "events.jsonl"
        with events.open("a") as handle:   # written by hand, as an older rose or another tool might have
            handle.write(json.dumps({"ts": "2026-01-02T03:04:05Z", "kind": "judge", "call": "assess", "ok": False,
                                     "error": f"judge timeout after 30s calling with key {AWS}"}) + "\n")
            handle.write(json.dumps({"ts": "2026-01-02T03:05:00Z", "kind": "inject", "session": "s1",
                                     "tokens": 120, "served": ["n_aaaaaa"]}) + "\n")
        (local_root(project / ".rose") / "logs").mkdir(exist_ok=True)
        (local_root(project / ".rose") / "logs" / "learner.log").write_text(
            f"2026-01-02T03:04:06 [12] judge timeout: slack said {SLACK}\n2026-01-02T03:04:07 [12] all good\n")
        out = project / "report.md"
        cp = run_rose("report", "--about", "judge timeout", "--out", str(out), "--json", cwd=project,
                      env={"ROSE_EMBED_MODEL_HINT": SLACK})
        assert cp.returncode == 0, cp.stderr
        assert mock.requests == []   # nothing was sent anywhere: not even the configured endpoint was asked
    info = json.loads(cp.stdout)
    assert info["path"] == str(out) and info["matches"] == 2
    text = out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    for secret in (GITHUB, AWS, SLACK):
        assert secret not in text
    assert text.startswith("# rose defect report: judge timeout\n")
    versions = _section(text, "Versions")
    assert re.search(r"- rose \d+\.\d+", versions) and "- Python 3." in versions and "- claude: " in versions
    config = _section(text, "Configuration")
    assert "agent.backend = openai   <- set" in config and "recall.selector = fork" in config
    assert "# my token, pasted here by mistake:" in config          # the file's text, its secret redacted
    assert "ROSE_HOME=" in config
    doctor = _section(text, "rose doctor")
    assert "] python: 3." in doctor and "] project store:" in doctor
    found = _section(text, "What mentions the topic")
    assert "judge timeout after 30s" in found and "judge timeout: slack said" in found
    assert '"kind": "inject"' not in found and "all good" not in found
    failures = _section(text, "Recent failures (for context)")
    assert "judge timeout after 30s" in failures


def test_the_default_file_is_named_after_the_topic_in_the_current_folder(project: Path) -> None:
    assert run_rose("init", cwd=project).returncode == 0
    cp = run_rose("report", "--about", "Recall served nothing!", cwd=project)
    assert cp.returncode == 0, cp.stderr
    written = list(project.glob("rose-report-recall-served-nothing-*.md"))
    assert len(written) == 1 and "it was sent nowhere" in cp.stdout
    assert "## What mentions the topic" in written[0].read_text()


def test_an_empty_topic_is_a_one_line_error(project: Path) -> None:
    assert run_rose("init", cwd=project).returncode == 0
    cp = run_rose("report", "--about", "   ", cwd=project)
    assert cp.returncode == 1 and cp.stderr.strip().startswith("rose: rose report --about needs")


def test_topic_matching() -> None:
    from rose.defect import mentions, stems

    assert stems("The hook timed out") == ["hook", "timed"]
    assert mentions('{"kind": "hook", "outcome": "timed out"}', stems("hook timed out"))
    assert not mentions('{"kind": "inject"}', stems("hook timed out"))
    assert not mentions("anything", stems("the and for"))
