#!/usr/bin/env bash
# Run by `python3 dev.py test` before pytest. Idempotent, and fast (a few hundred ms) when all is done.
#
# It installs what the tests drive: the pinned real agent CLIs (claude, codex) that tests/e2e runs against a
# local mock model server (see docs/testing-real-clis.md), tmux, in which the TUI tests watch what a user of
# each agent sees, and Chromium (Debian's package), in which tests/test_view.py renders `rose view`'s page. It fails
# (non-zero) when they cannot be installed, because those tests must run, not skip.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$HERE/install-agent-clis.sh"
if ! command -v tmux >/dev/null 2>&1; then
  if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
    echo "[test-setup] installing tmux (Debian package) for the TUI tests"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q tmux >/dev/null 2>&1 || {
      apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tmux >/dev/null; }
  fi
  command -v tmux >/dev/null 2>&1 || { echo "[test-setup] ERROR: tmux is missing (install it: apt-get install tmux)" >&2; exit 1; }
fi
if ! command -v chromium >/dev/null 2>&1; then
  if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
    echo "[test-setup] installing chromium (Debian package) for the rose view browser tests"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || {
      apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }
  fi
  command -v chromium >/dev/null 2>&1 || { echo "[test-setup] ERROR: chromium is missing (install it: apt-get install chromium)" >&2; exit 1; }
fi
