"""Long multi-section lessons: runbooks and guides of the kind a verbatim skills migration brings in.

Each has several sections on different subjects; the prompts that need one (prompts_src.LONG_PROMPTS) ask about a
fact in one section, so a ranker that averages a long lesson into one vector, or a BM25 length penalty, is tested
on what it loses. Keys start with `long-`; `build.py` lets these bodies run past six sentences.
"""

LONG = {
    "deploy": [
        ("long-release-runbook",
         "Release runbook for the api and web services",
         "The weekly release end to end: freeze, tagging, the staging soak, the prod promotion, and what to do "
         "when it goes wrong.",
         """## Freeze
The release freeze starts Tuesday at 14:00 UTC. After that only commits labelled `release-blocker` merge to main;
everything else waits for the next train. The release captain is whoever is on the rota in the team calendar.

## Tagging
Tags are calendar versions: `v2024.37.0` for the 37th week, with the patch number bumped for hotfixes. Create the
tag with `make tag-release`, which also writes the changelog section from the merged PR titles. Never push a tag by
hand: the release workflow only listens to tags made by the bot user.

## Staging soak
The tagged build sits on staging for at least four hours. The soak dashboard must show an error rate under 0.5%
and p95 latency under 300 ms for the whole window; the synthetic checkout probe runs every two minutes during it.

## Promotion to production
Promotion is a PR against the deploy repository that bumps `prod/values.yaml`. It needs two approvals, one of them
from the on-call SRE. Argo Rollouts then shifts traffic 10%, 30%, 60%, 100% with five minutes between steps.

## Rolling back
If the canary analysis fails, Argo aborts on its own. For a problem found after full promotion, revert the deploy
PR; do not `kubectl rollout undo`, because Argo will sync the bad version straight back. Post in #releases with the
tag and the reason.""",
         "release runbook deploy calver"),
    ],
    "database": [
        ("long-postgres-upgrade-guide",
         "Guide: upgrading the main Postgres cluster to a new major version",
         "How the last major upgrade was done: the logical replica, extension checks, the cutover window and the "
         "checks afterwards.",
         """## Preparation
Upgrades go through a logical replica, not pg_upgrade in place. Create the new cluster from the Terraform module
with `pg_version` bumped, then run the extension audit: `SELECT extname, extversion FROM pg_extension;` on both
sides. PostGIS must be upgraded on the old cluster first, or the replica refuses the schema.

## Replication
Publish every table with `CREATE PUBLICATION upgrade_pub FOR ALL TABLES;` and subscribe from the new cluster.
Tables without a primary key cannot replicate updates: the audit_log table needed a surrogate key added a week
before. Watch `pg_stat_subscription` until the lag stays under a second.

## Sequences
Logical replication does not copy sequence values. Right before cutover run the sequence sync script
`scripts/sync_sequences.py`, which sets every sequence on the new side to the old value plus 1000.

## Cutover
Cutover happens in the Sunday 05:00 UTC window. Put the apps in maintenance mode, wait for lag zero, sync sequences,
switch the pgbouncer `host=` line to the new primary, and reload pgbouncer (no restart: existing clients reconnect).

## Afterwards
Run `ANALYZE` on the whole database: the planner has no statistics on the new cluster and the first hour is slow
otherwise. Keep the old cluster read-only for a week before deleting it.""",
         "postgres upgrade replication runbook"),
    ],
    "testing": [
        ("long-testing-handbook",
         "Testing handbook for the monorepo",
         "What each test layer is for, how to run it, the fixtures that exist, and the rules on flaky tests.",
         """## Layers
Unit tests live beside the code in `tests/unit` and must not touch the network or the database. Integration tests
in `tests/integration` get a real Postgres and Redis from docker compose. End-to-end tests in `e2e/` drive the web
app with Playwright against a full local stack.

## Running them
`make test` runs the unit tests only. Integration needs `docker compose -f compose.test.yml up -d` first and then
`pytest -m integration`. The e2e suite runs with `pnpm e2e` and takes about twelve minutes.

## Fixtures
The `db_session` fixture wraps every test in a transaction that is rolled back, so tests never see each other's
rows. Use the `frozen_clock` fixture instead of patching `datetime.now` by hand; it also freezes the clock inside
Celery tasks run eagerly. Factories are in `tests/factories.py` and use factory_boy.

## Snapshot tests
Snapshot files live under `__snapshots__` and are updated with `pytest --snapshot-update`. A PR that updates more
than ten snapshots needs a comment explaining why: mass updates have hidden real regressions before.

## Flaky tests
A test that fails then passes on retry is quarantined with `@pytest.mark.flaky(reruns=0)` and a ticket in the
QA board within a day. Quarantined tests still run nightly so we know when they are fixed. Never add retries to
make a flaky test pass.""",
         "testing handbook pytest fixtures"),
    ],
    "ci": [
        ("long-ci-pipeline-guide",
         "How the CI pipeline is put together",
         "The jobs of the main workflow, caching, the merge queue, self-hosted runners and secrets in CI.",
         """## Jobs
The main workflow runs lint, typecheck, unit, integration and build in parallel; e2e runs only after build
succeeds. Each job has a timeout of 30 minutes except e2e, which gets 45.

## Caching
Python dependencies are cached by the hash of `uv.lock`, node modules by `pnpm-lock.yaml`. The Docker build uses
the registry cache at `ghcr.io/corvid/ci-cache`; a cold build takes 14 minutes and a warm one under three.

## Merge queue
Main is protected by the merge queue. A PR enters it with the `queue` label once approved; the queue rebases, runs
the full suite again and merges in batches of up to five. A red batch is bisected automatically.

## Self-hosted runners
The GPU tests run on the self-hosted runners labelled `gpu-a10`. There are only two, so GPU jobs are restricted to
PRs that touch `ml/`. If they are offline, ask in #infra: the runners restart nightly at 03:00 UTC.

## Secrets
CI secrets come from the `ci` environment and are never available to PRs from forks. To add one, ask a repo admin;
do not print secrets in logs even masked, because masking fails for values that contain newlines.""",
         "ci pipeline github-actions runners"),
    ],
    "observability": [
        ("long-oncall-handbook",
         "On-call handbook",
         "Shifts, paging rules, the first five minutes of an incident, severity levels and the postmortem process.",
         """## Shifts
On-call shifts are one week, Monday 10:00 to Monday 10:00 local time, with a primary and a secondary. Swap shifts in
PagerDuty, not in chat, or the pages still go to the old person.

## Paging
Only alerts tagged `page: true` page a human; everything else goes to #alerts-low. An alert that pages more than
twice a week without action needed must be tuned or demoted within the next shift.

## First five minutes
Acknowledge the page, open an incident channel with `/incident new`, and post the dashboard link. Check the deploy
log first: two thirds of incidents last year started within an hour of a deploy.

## Severity
SEV1 is customer-facing downtime or data loss and needs the incident commander rota paged. SEV2 is degraded
service for some customers. SEV3 is internal only. When unsure, declare higher; downgrading is cheap.

## Postmortems
Every SEV1 and SEV2 gets a blameless postmortem within five working days, using the template in the wiki. Action
items go to the owning team's board with the `postmortem` label and a due date.""",
         "oncall incidents pagerduty"),
    ],
    "frontend": [
        ("long-frontend-conventions",
         "Frontend conventions for the web app",
         "Folder layout, state management, data fetching, styling and accessibility rules for the React app.",
         """## Layout
Each route has a folder under `src/routes/` with its page, loader and tests together. Shared components go in
`src/ui/` only after a second route needs them; until then keep them beside the route.

## State
Server data lives in TanStack Query, never copied into component state. Global client state is a small Zustand
store for the session and the theme; anything else is local state or the URL.

## Data fetching
Every API call goes through the generated client in `src/api/`, regenerated with `pnpm api:gen` from the OpenAPI
spec. Query keys are built with the helpers in `src/api/keys.ts` so invalidation matches.

## Styling
Tailwind utility classes only; no CSS modules. Colours come from the design tokens in `tailwind.config.ts`, so a
hex value in a className is a review comment.

## Accessibility
Every interactive element must be reachable by keyboard, and icon-only buttons need an `aria-label`. The axe check
runs in the e2e suite and fails the build on any serious violation.""",
         "frontend react conventions"),
    ],
    "corvid": [
        ("long-wharf-service-guide",
         "wharf service guide",
         "Everything about wharf, the booking API: its endpoints, rate limits, the partner sandbox, data retention "
         "and its alerts.",
         """## What it is
wharf is the booking API partners call to reserve container slots. It is a FastAPI service in the `wharf` repo,
deployed to the `bookings` namespace, and it owns the `bookings` schema in the main database.

## Endpoints
`POST /v2/bookings` creates a booking and is idempotent on the `Idempotency-Key` header; `GET /v2/bookings/{id}`
reads one. The v1 endpoints still exist for two legacy partners and must not get new features.

## Partner sandbox
Partners test against `sandbox.wharf.corvid.example`, which resets every night at 02:00 UTC. Sandbox API keys start
with `wk_test_`; a live key used on the sandbox gets a 401 with `key_environment_mismatch`.

## Data retention
Cancelled bookings are kept for 400 days for billing disputes, then anonymised by the nightly `wharf-retention`
job. Do not delete bookings by hand: quillbill reconciles against them.

## Alerts
The `WharfBookingLatencyHigh` alert fires when p99 stays above 2 s for ten minutes; it almost always means the
slot-availability cache in Redis was evicted. Warm it with `wharf-cli cache warm --all` before digging further.""",
         "wharf bookings guide"),
        ("long-ferryman-guide",
         "ferryman handbook",
         "ferryman, the deploy bot: its chat commands, locks, environments, approvals and how to recover it.",
         """## Commands
`/ferryman deploy <service> <env>` deploys the latest green build; `/ferryman status <service>` shows what runs
where. `/ferryman rollback <service> <env>` redeploys the previous build recorded in ferryman's history.

## Locks
A deploy takes a lock on the service and environment for 20 minutes. `/ferryman unlock <service> <env>` releases it
early; only the person who took it or an SRE may do that.

## Environments
dev and staging deploy without approval. prod needs an approval from a code owner of the service, given with
`/ferryman approve <id>`, and is blocked during the release freeze unless the build is labelled release-blocker.

## Approvals
Approvals expire after 60 minutes. An approval given for one build does not carry to a rebuilt one, even with the
same commit, because the image digest changes.

## When ferryman is stuck
If ferryman stops answering, its worker queue is usually backed up. Check `ferryman-worker` in the `tools`
namespace, and restart it with `kubectl -n tools rollout restart deploy/ferryman-worker`. In-flight deploys resume
from their last step after a restart.""",
         "ferryman deploys chatops guide"),
    ],
}
