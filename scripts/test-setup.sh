#!/usr/bin/env bash
# Run by `python3 dev.py test` before pytest. Idempotent, and fast (a few hundred ms) when all is done.
#
# Today it only installs the pinned real agent CLIs (claude, codex) that tests/e2e drives against a
# local mock model server; see docs/testing-real-clis.md. It fails (non-zero) when they cannot be
# installed, because the e2e tests must run, not skip.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bash "$HERE/install-agent-clis.sh"
