"""Lessons added as confusable near-misses of existing ones (same family or symptom, different fix)."""

EXTRA = {
    "deploy": [
        ("dep-helm-diff",
         "Run helm diff before upgrading a production release",
         "The helm-diff plugin shows the rendered changes; surprises were hiding in a shared subchart.",
         "`helm diff upgrade api ./chart -n prod -f values.yaml -f values-prod.yaml` prints the manifest diff "
         "without applying. A subchart bump once changed every pod's securityContext; the diff would have shown "
         "it. The deploy pipeline posts this diff on the PR.",
         "helm diff prod"),
    ],
    "database": [
        ("db-sequence-reset",
         "After a manual data import, reset the id sequence",
         "'duplicate key value violates unique constraint orders_pkey' on insert means the sequence lags the data.",
         "Loading rows with explicit ids (CSV import, restore of one table) doesn't advance the sequence, so the "
         "next insert reuses an id: `duplicate key value violates unique constraint \"orders_pkey\"`. Run "
         "`SELECT setval(pg_get_serial_sequence('orders', 'id'), max(id)) FROM orders;`.",
         "postgres sequences import"),
    ],
    "testing": [
        ("test-transaction-rollback",
         "Each test runs in a transaction rolled back at teardown; code that commits needs committing_db",
         "A service that calls commit() escapes the rollback and leaks rows into later tests.",
         "The `db` fixture wraps every test in a transaction with a SAVEPOINT and rolls back at the end. Code that "
         "calls `session.commit()` ends the outer transaction and its rows survive. Use the `committing_db` "
         "fixture, which truncates the touched tables afterwards, for tests of such code.",
         "pytest fixtures transactions"),
    ],
    "ci": [
        ("ci-dependabot-grouping",
         "Group Dependabot updates weekly so they don't flood the PR list",
         "groups: in dependabot.yml bundles minor and patch bumps into one PR per ecosystem.",
         "Dependabot opened 30 PRs every Monday. `.github/dependabot.yml` now has `schedule: weekly` and a `groups:` "
         "entry per ecosystem for `minor` and `patch` updates; majors still get their own PR.",
         "dependabot dependencies"),
    ],
    "http": [
        ("http-ipv6-localhost",
         "'localhost' may resolve to ::1 first: bind and call 127.0.0.1 for local mock servers",
         "A mock server bound to 127.0.0.1 refused connections addressed to localhost over IPv6.",
         "The test's mock server listened on `127.0.0.1:9000` while the client called `localhost:9000`, which "
         "resolved to `::1` first on the CI image: `ConnectionRefusedError: [Errno 111]`. Use `127.0.0.1` on both "
         "sides, or bind the server to `::` with dual-stack.",
         "ipv6 localhost networking"),
    ],
    "frontend": [
        ("fe-service-worker-stale",
         "A stale service worker keeps serving the old app after a release",
         "The PWA's worker cached the app shell; call skipWaiting/clientsClaim and prompt for reload.",
         "Even with `index.html` set to no-cache, returning users got the previous version for days because the "
         "service worker served its precached shell. The Workbox config uses `skipWaiting` + `clientsClaim`, and the "
         "app shows a 'new version available' toast that reloads.",
         "pwa service-worker workbox"),
    ],
    "git": [
        ("git-commit-email",
         "Commit with your work email: the CLA check fails for unknown addresses",
         "Set user.email per repository (or with includeIf) so personal addresses don't end up on work commits.",
         "The CLA bot marks commits whose author email isn't linked to a signed agreement. Use `git config "
         "user.email you@acme.example` in work repos, or an `includeIf \"gitdir:~/work/\"` block in your global "
         "config. Fix existing commits with `git rebase -i --exec 'git commit --amend --no-edit --reset-author'`.",
         "cla email config"),
    ],
    "packaging": [
        ("pkg-python-version-file",
         "The app's Python version is pinned in .python-version (3.12)",
         "uv reads .python-version; the Docker base image and CI matrix must match it.",
         "`.python-version` contains `3.12` and uv creates the venv with that interpreter. When you bump it, bump "
         "the `FROM python:3.12-slim` image and the CI `python-version` in the same PR; a mismatch built wheels "
         "for the wrong ABI.",
         "python-versions uv"),
    ],
    "observability": [
        ("obs-log-level-env",
         "Change a service's log level with LOG_LEVEL; it needs a restart",
         "Set LOG_LEVEL in the service config and restart; there is no runtime toggle.",
         "Log levels come from the `LOG_LEVEL` env var read at startup (default INFO). For a short debugging window "
         "on staging set `LOG_LEVEL=DEBUG` and restart the deployment; revert afterwards, DEBUG output includes "
         "third-party request logs.",
         "logging levels configuration"),
    ],
    "performance": [
        ("perf-gil-processes",
         "CPU-bound work doesn't speed up with threads: use a process pool",
         "The GIL serialises Python bytecode; ProcessPoolExecutor or a native library parallelises.",
         "Rendering shipping labels in a `ThreadPoolExecutor(8)` stayed at one core's worth of CPU. For CPU-bound "
         "Python use `ProcessPoolExecutor(max_workers=os.cpu_count())` and pass small, picklable arguments; threads "
         "only help for I/O waits.",
         "gil threads multiprocessing"),
    ],
    "style": [
        ("style-env-var-naming",
         "Environment variables are ACME_-prefixed upper snake case, grouped by component",
         "ACME_BILLING_TIMEOUT_S, with the unit as a suffix; read them only in settings.py.",
         "Name variables `ACME_<COMPONENT>_<NAME>_<UNIT>`, e.g. `ACME_BILLING_TIMEOUT_S`. They are read in "
         "`settings.py` via pydantic-settings and nowhere else; code gets values from the settings object.",
         "configuration naming env"),
    ],
    "corvid": [
        ("cv-ferryman-rollback",
         "Roll back a Corvid service with /ferryman rollback, which redeploys the previous attested sha",
         "No git revert needed; ferryman keeps the last five deployed shas per environment.",
         "`/ferryman rollback wharf in prod` redeploys the previous attested sha without a new build and takes "
         "the deploy lock. `/ferryman history wharf prod` lists the last five. Reverting in git is still needed "
         "afterwards so the next deploy doesn't reintroduce the bug.",
         "ferryman rollback"),
        ("cv-skiff-logs",
         "skiff logs <svc> tails local containers; staging logs are in spyglass's Logs tab",
         "skiff logs wharf --since 10m locally; there is no kubectl access to staging for developers.",
         "`skiff logs wharf --since 10m -f` follows the local container. Developers have no kubectl access to "
         "staging; use spyglass → Explore → Logs with `{service=\"wharf\", env=\"staging\"}`.",
         "skiff logs spyglass"),
        ("cv-driftwood-schema",
         "Event schemas on bookings.v2 only grow optional fields",
         "A new required field breaks consumers still on the old schema; add it optional or publish bookings.v3.",
         "driftwood consumers deserialise with the schema pinned in their mooring version. Adding a required "
         "field to `BookingEvent` made older consumers reject every event. Add fields as optional with a default; "
         "breaking changes go to a new topic version with a dual-publish period.",
         "driftwood schemas events"),
        ("cv-wharf-rate-limits",
         "wharf's public API limits each shipper to 600 requests per minute",
         "Over the limit gatehouse answers 429 with Retry-After; big integrations get a raised quota per account.",
         "Limits are enforced by gatehouse per shipper account: 600 req/min, bursts of 100. Responses carry "
         "`X-RateLimit-Remaining`; over the limit it returns 429 with `Retry-After`. Raise a shipper's quota in "
         "almanac `gatehouse/quotas.yaml`, not in wharf.",
         "wharf rate-limit gatehouse"),
        ("cv-quillbill-refunds",
         "Refunds are credit notes issued by quillbill, never negative invoices",
         "POST /credit-notes against the original invoice; the numbering worker gives it its own CN- number.",
         "To refund, create a credit note referencing the original invoice (`quillbill.credit_notes.issue("
         "invoice_id, lines)`). It gets a `CN-NL-` number from the numbering worker. Negative invoices broke the "
         "VAT report and are rejected by validation.",
         "quillbill refunds invoices"),
    ],
}
