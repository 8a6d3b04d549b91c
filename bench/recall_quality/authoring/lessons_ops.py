"""Lessons: logging / observability, performance, docs and style conventions. (key, title, gist, body, tags)"""

OBSERVABILITY = [
    ("obs-structlog-kv",
     "Log with structlog key-value pairs, not f-strings",
     "log.info('order.paid', order_id=...) is queryable in Loki; an interpolated message is not.",
     "`log.info(f\"order {o.id} paid {o.total}\")` can't be filtered. Write `log.info(\"order.paid\", "
     "order_id=o.id, amount_minor=o.total)`; Loki queries then use `| json | event=\"order.paid\"`. Bound "
     "context (`log = log.bind(request_id=...)`) is added by the middleware.",
     "structlog logging"),
    ("obs-traceparent",
     "Propagate the traceparent header to downstream calls and queued tasks",
     "Traces broke between api and worker; instrument httpx and Celery with OpenTelemetry.",
     "Traces stopped at the API because outgoing calls lacked `traceparent`. `HTTPXClientInstrumentor()."
     "instrument()` adds it to httpx calls; `CeleryInstrumentor().instrument()` carries the context through task "
     "headers. Custom thread pools need `contextvars.copy_context()`.",
     "opentelemetry tracing"),
    ("obs-log-volume",
     "INFO is for business events; don't log per item inside loops",
     "The importer logged 2M lines an hour at INFO and tripled the Loki bill.",
     "DEBUG is off in production. The CSV importer logged every row at INFO: 2M lines/hour and a tripled Loki "
     "bill. Log one summary line per batch (`import.batch_done rows=5000 failed=3`) and sample repetitive "
     "warnings.",
     "levels cost"),
    ("obs-label-cardinality",
     "Never put ids or raw URLs in Prometheus metric labels",
     "path='/orders/123' created a series per order and exhausted Prometheus memory; use the route template.",
     "`http_requests_total{path=\"/orders/123\"}` created a time series per order and Prometheus ran out of "
     "memory. Label with the route template (`/orders/{order_id}`), taken from `request.scope[\"route\"].path`. "
     "No user ids, emails or tenant ids as labels; put them in logs or traces.",
     "prometheus cardinality metrics"),
    ("obs-sentry-sampling",
     "Sentry: sample 5% of traces in production, keep all errors",
     "traces_sample_rate=0.05; sample_rate for errors stays 1.0.",
     "`sentry_sdk.init(traces_sample_rate=0.05, sample_rate=1.0, environment=ENV, release=GIT_SHA)`. At 100% "
     "tracing we hit the quota in four days. Use a `traces_sampler` to drop `/healthz` entirely.",
     "sentry sampling"),
    ("obs-alert-on-symptoms",
     "Page on SLO burn rate, not on CPU or memory",
     "CPU alerts woke people for harmless batch spikes; multi-window burn-rate alerts page on user impact.",
     "High CPU during the nightly batch paged the on-call for nothing. Paging alerts use the multi-window burn "
     "rate on the availability SLO (1h and 5m windows at 14.4x). Resource alerts go to a ticket queue, not a "
     "pager.",
     "alerting slo"),
    ("obs-liveness-vs-readiness",
     "/healthz answers only 'process alive'; /readyz checks dependencies",
     "A liveness probe that checked the database restarted every pod during a DB blip.",
     "When Postgres failed over for 20 s, the liveness probe (which queried the DB) failed and Kubernetes "
     "restarted every api pod at once, turning a blip into an outage. `/healthz` returns 200 if the process "
     "runs; `/readyz` checks Postgres and Redis and only removes the pod from the Service.",
     "health probes"),
    ("obs-log-exception",
     "Use log.exception inside except blocks to keep the traceback",
     "log.error(str(e)) lost the stack; log.exception (or exc_info=True) records it.",
     "Incidents were slow to debug because handlers did `log.error(f\"failed: {e}\")`, which drops the "
     "traceback. Inside `except` use `log.exception(\"sync.failed\", partner=p)`; outside, pass "
     "`exc_info=True`. Ruff TRY400 flags the error-without-traceback form.",
     "exceptions logging"),
    ("obs-dashboards-as-code",
     "Grafana dashboards are code in observability/dashboards; UI edits get overwritten",
     "Provisioned dashboards reset on every deploy; change the jsonnet and open a PR.",
     "Dashboards are generated from grafonnet in `observability/dashboards/*.jsonnet` and provisioned on "
     "deploy; edits made in the UI vanish at the next sync. Prototype in the UI, export the JSON, then port it "
     "into jsonnet.",
     "grafana dashboards"),
    ("obs-loki-request-logs",
     "Find one request's logs in Loki by request_id",
     "{namespace='prod', app='api'} | json | request_id='...' across api and worker; retention is 30 days.",
     "Use `{namespace=\"prod\", app=~\"api|worker\"} | json | request_id=\"01HX...\"` in Explore. The same id is "
     "in the `X-Request-ID` response header and Sentry's tags. Logs are kept 30 days; older incidents need the "
     "GCS archive.",
     "loki logql"),
    ("obs-no-pii-logs",
     "Don't log emails, addresses or card data; log user ids",
     "The redaction processor drops known keys like email and phone, but free text isn't scanned.",
     "Support found customer emails in log lines like `log.info(f\"sent receipt to {email}\")`. Log `user_id` "
     "instead. The structlog redaction processor removes `email`, `phone` and `address` keys only when they are "
     "separate fields.",
     "pii privacy gdpr"),
    ("obs-request-id",
     "Every response carries X-Request-ID; ask for it in bug reports",
     "The middleware generates a ULID if the caller didn't send one and binds it to all logs.",
     "`RequestIdMiddleware` accepts an incoming `X-Request-ID` from gatehouse or generates a ULID, returns it on "
     "the response and binds it to the log context. The frontend shows it in error toasts so users can quote it.",
     "request-id tracing"),
    ("obs-celery-queue-alert",
     "Alert when the Celery queue backs up, using celery-exporter metrics",
     "celery_queue_length{queue='default'} > 1000 for 10 minutes pages the owning team.",
     "Workers silently stopped consuming after a broker reconnect and the queue grew for hours. "
     "`celery-exporter` exposes `celery_queue_length`; the alert fires at >1000 for 10 min. Check `celery -A "
     "app inspect active` before scaling workers.",
     "celery queues alerting"),
    ("obs-drop-health-access-logs",
     "Drop access logs for /healthz and /metrics",
     "Probe and scrape requests were 60% of all access log lines.",
     "Kubelet probes every 5 s and Prometheus scrapes every 15 s produced most of the access log volume. The "
     "uvicorn access logger has a filter that skips `/healthz`, `/readyz` and `/metrics`; ingress-nginx uses a "
     "`map` to do the same.",
     "noise access-logs"),
    ("obs-otlp-ports",
     "The OTLP collector listens on 4317 for gRPC and 4318 for HTTP",
     "StatusCode.UNAVAILABLE from the exporter usually means the protocol doesn't match the port.",
     "Set `OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.observability:4317` with the gRPC exporter, or port "
     "4318 with `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`. Pointing the gRPC exporter at 4318 logs "
     "\"Failed to export spans ... StatusCode.UNAVAILABLE\" and traces never arrive.",
     "otlp collector opentelemetry"),
    ("obs-audit-log",
     "Admin actions go to the audit_log table, not the application logs",
     "Logs expire after 30 days; audit entries are kept 7 years for compliance.",
     "Refunds, role changes and data exports by staff call `audit.record(actor, action, target, diff)`, which "
     "writes to `audit_log` in the same transaction. App logs are sampled and expire; auditors need complete, "
     "durable records.",
     "audit compliance"),
    ("obs-utc-timestamps",
     "Log timestamps in UTC ISO-8601 with milliseconds",
     "Mixed local and UTC timestamps made incident timelines across services wrong by an hour.",
     "`structlog.processors.TimeStamper(fmt=\"iso\", utc=True)` everywhere. The worker logged local time while "
     "the api logged UTC, and the incident timeline put the cause after the effect.",
     "timestamps timezone"),
    ("obs-error-budget-freeze",
     "When the 28-day error budget is spent, feature deploys freeze",
     "Only reliability fixes ship until the budget recovers; the SLO dashboard shows the remaining budget.",
     "The availability SLO is 99.9% over 28 days. When the budget is exhausted the team stops feature "
     "releases and works on reliability until it is positive again. The release checklist links the budget "
     "panel.",
     "slo process reliability"),
    ("obs-no-print",
     "Remove print() calls before merging; ruff T20 flags them",
     "print goes to stdout without level, context or request id.",
     "Debug `print()` statements ended up in production output and broke the JSON log parser. Ruff's T20 rules "
     "fail CI on `print` in `src/`; use the logger. Scripts under `scripts/` are exempt.",
     "print lint"),
    ("obs-duplicate-log-lines",
     "Every log line appears twice: the logger propagates to a root logger configured twice",
     "uvicorn's loggers plus our root handler duplicate output; configure logging once with propagate=False.",
     "After adding a root handler, each uvicorn line printed twice. Configure logging once with `dictConfig` "
     "at startup, set `propagate: False` on `uvicorn` and `uvicorn.access`, and start uvicorn with "
     "`--log-config logging.yaml`.",
     "uvicorn logging duplicate"),
]

PERFORMANCE = [
    ("perf-py-spy",
     "Profile a live process with py-spy without restarting it",
     "py-spy dump shows every thread's stack now; py-spy record makes a flame graph.",
     "`py-spy dump --pid <pid>` prints what each thread is doing right now, which found a worker stuck in a DNS "
     "call. `py-spy record -o profile.svg --duration 30 --pid <pid>` gives a flame graph. In Kubernetes the "
     "container needs the `SYS_PTRACE` capability; use the debug ephemeral container.",
     "profiling py-spy"),
    ("perf-uvicorn-workers",
     "Async services run one uvicorn worker per CPU, not 2n+1",
     "The 2 x cores + 1 formula is for sync gunicorn workers; async workers oversubscribed the pod.",
     "The api pods have 2 CPUs and ran 5 uvicorn workers from the old gunicorn formula: more memory and "
     "context-switching, no throughput gain. Async services use `--workers $CPU`; sync gunicorn services keep "
     "2n+1.",
     "gunicorn workers uvicorn"),
    ("perf-blocking-in-async",
     "Blocking calls in async handlers stall the whole event loop",
     "A requests.get inside an async endpoint serialised all traffic; use an async client or run_in_threadpool.",
     "Latency jumped under load because an `async def` endpoint called `requests.get` and `time.sleep`, freezing "
     "the event loop for every request. Use `httpx.AsyncClient`, or wrap sync code with `await "
     "run_in_threadpool(fn)`. `PYTHONASYNCIODEBUG=1` logs \"Executing <Task ...> took 0.512 seconds\".",
     "asyncio event-loop latency"),
    ("perf-pandas-iterrows",
     "Don't iterrows over big DataFrames",
     "The report loop took 20 minutes with iterrows and 3 seconds vectorised.",
     "`for _, row in df.iterrows()` builds a Series per row. The revenue report took 20 min. Vectorise "
     "(`df[\"net\"] = df[\"gross\"] - df[\"fee\"]`), use `groupby().agg`, or at least `itertuples()` when a loop "
     "is unavoidable.",
     "pandas dataframes"),
    ("perf-orjson-responses",
     "Use ORJSONResponse for large JSON responses",
     "The stdlib encoder spent 300 ms serialising the catalog export.",
     "Profiling showed `json.dumps` taking 300 ms for the 8 MB catalog response. `default_response_class="
     "ORJSONResponse` on the router cut it to 30 ms; orjson also handles datetimes and UUIDs natively.",
     "json serialization orjson"),
    ("perf-bulk-copy",
     "Bulk-load with COPY, not row-by-row ORM inserts",
     "Loading 1M rows took 40 minutes via session.add and 35 seconds via COPY.",
     "The nightly import added rows one by one through the ORM. psycopg 3's `with cur.copy(\"COPY staging_rows "
     "FROM STDIN\") as copy: copy.write_row(...)` loads a million rows in 35 s. Load into a staging table, then "
     "`INSERT ... SELECT ... ON CONFLICT` into the real one.",
     "postgres bulk copy"),
    ("perf-regex-backtracking",
     "Catastrophic regex backtracking froze a worker at 100% CPU",
     "Nested quantifiers like (a+)+ explode on crafted input; bound input length or use re2.",
     "The email validator `^([a-zA-Z0-9_.+-]+)+@` took minutes on a 40-character string and pinned a CPU. Avoid "
     "nested quantifiers, cap input length before matching, and use `google-re2` for user-supplied patterns.",
     "regex cpu redos"),
    ("perf-tracemalloc-leak",
     "Find a memory leak by comparing tracemalloc snapshots",
     "snapshot.compare_to(old, 'lineno') pointed at a module-level list that kept every request.",
     "Memory rose 50 MB an hour until OOM. Start with `PYTHONTRACEMALLOC=25`, take snapshots ten minutes apart "
     "via the debug endpoint, and print `new.compare_to(old, \"lineno\")[:10]`. It was a module-level list of "
     "request objects kept for 'debugging'.",
     "memory leak tracemalloc"),
    ("perf-k6-staging",
     "Load-test staging with k6 before big launches, never production",
     "k6 scripts in loadtest/; 200 virtual users for 5 minutes is the standard checkout test.",
     "`k6 run --vus 200 --duration 5m loadtest/checkout.js` against staging, with the results posted to the "
     "launch ticket. Warn #platform first because staging is shared. Never point it at production: the "
     "payment provider counts test traffic.",
     "load-testing k6"),
    ("perf-keyset-pagination",
     "Use keyset pagination instead of OFFSET and exact counts on big tables",
     "OFFSET 200000 plus count(*) made page 2000 take 9 seconds.",
     "Deep pages with `OFFSET` scan and discard every earlier row, and `SELECT count(*)` scans the table. Use "
     "`WHERE (created_at, id) < (:last_created, :last_id) ORDER BY created_at DESC, id DESC LIMIT 50` and show an "
     "estimate from `pg_class.reltuples` instead of an exact total.",
     "pagination postgres"),
    ("perf-cpu-throttling",
     "CPU limits cause throttling and latency spikes: latency-sensitive services set none",
     "Throttled periods showed up as p99 spikes even at 40% average CPU.",
     "The api had p99 spikes while average CPU was 40%; `container_cpu_cfs_throttled_periods_total` was climbing. "
     "CFS quotas throttle bursts inside each 100 ms period. Latency-sensitive services set cpu requests but no "
     "cpu limit; memory limits stay.",
     "kubernetes cpu throttling latency"),
    ("perf-graphql-dataloader",
     "GraphQL resolvers must batch with DataLoader",
     "Resolving author per post issued a query per post; a DataLoader batches them per tick.",
     "The `posts { author { name } }` query issued 1 + N queries. Resolvers fetch through "
     "`strawberry.dataloader.DataLoader(load_fn=load_users)` created per request in the context getter, never "
     "globally (a global loader leaks cached data across users).",
     "graphql dataloader"),
    ("perf-gzip-middleware",
     "Compress JSON responses over 1 KB",
     "GZipMiddleware(minimum_size=1000) cut the catalog payload from 8 MB to 900 kB.",
     "`app.add_middleware(GZipMiddleware, minimum_size=1000)`. Small responses aren't worth the CPU. The "
     "ingress does not compress upstream responses for us because `use-gzip` is off cluster-wide.",
     "compression gzip"),
    ("perf-threadpool-limit",
     "Sync endpoints share a 40-thread pool: raise it or go async",
     "AnyIO's default limiter is 40 tokens; sync def endpoints queued behind it under load.",
     "FastAPI runs `def` endpoints in AnyIO's thread pool, limited to 40 threads. Under load requests queued "
     "with no CPU usage. Raise it at startup with `anyio.to_thread.current_default_thread_limiter()."
     "total_tokens = 100`, or convert the hot endpoints to async.",
     "threads fastapi anyio"),
    ("perf-pytest-benchmark",
     "Prove a speed-up with pytest-benchmark comparisons",
     "Save a baseline on main and compare; one-off timeit numbers were noise.",
     "`pytest benchmarks/ --benchmark-autosave` on main, then `--benchmark-compare --benchmark-compare-fail="
     "mean:10%` on the branch. Run on the same machine; a laptop on battery gave a fake 30% regression.",
     "benchmarks measurement"),
    ("perf-trigram-search",
     "LIKE '%term%' can't use a btree index: add a pg_trgm GIN index",
     "The admin customer search did full scans; gin_trgm_ops made it 2 ms.",
     "`WHERE name ILIKE '%smith%'` scanned 3M rows. `CREATE EXTENSION pg_trgm;` then `CREATE INDEX CONCURRENTLY "
     "customers_name_trgm ON customers USING gin (name gin_trgm_ops);` makes it use the index. Terms shorter than "
     "3 characters still scan.",
     "search trigram postgres"),
    ("perf-export-jobs",
     "List endpoints return at most 100 items; big exports run as background jobs",
     "An unbounded list call returning 200k rows timed out and held a worker for minutes.",
     "List endpoints clamp `limit` to 100. Full exports go through `POST /exports`, which enqueues a Celery job "
     "that writes a CSV to the bucket and emails a signed link valid for 24 h.",
     "api limits exports"),
    ("perf-celery-prefetch",
     "Long Celery tasks: prefetch multiplier 1 and late acks",
     "With the default prefetch of 4 one worker hoarded long tasks while others sat idle.",
     "`worker_prefetch_multiplier = 1` and `task_acks_late = True` for the `reports` queue. With the default, "
     "one worker reserved four 10-minute tasks while others were idle, and a crash lost the reserved ones.",
     "celery queues"),
    ("perf-sqlalchemy-echo-slow",
     "Find slow queries with pg_stat_statements, not by guessing",
     "Sort by total_exec_time; the worst offender was a 2 ms query called 4 million times a day.",
     "`SELECT query, calls, total_exec_time, mean_exec_time FROM pg_stat_statements ORDER BY total_exec_time "
     "DESC LIMIT 20`. The top entry wasn't a slow query but a cheap one called from a loop. Reset with "
     "`pg_stat_statements_reset()` after a fix to measure again.",
     "postgres queries statistics"),
]

STYLE = [
    ("style-google-docstrings",
     "Docstrings are Google style with an imperative one-line summary",
     "Args/Returns/Raises sections; mkdocstrings renders them into the API reference.",
     "Start with one imperative line (\"Return the invoice total in minor units.\"), then `Args:`, `Returns:`, "
     "`Raises:`. mkdocstrings is configured for the Google style, and ruff's pydocstyle convention is `google`.",
     "docstrings documentation"),
    ("style-mypy-strict-core",
     "New code is fully typed; src/acme/core runs under mypy --strict",
     "No untyped defs in core; use typing.Protocol rather than Any for duck-typed parameters.",
     "`[[tool.mypy.overrides]] module = \"acme.core.*\" strict = true`. New functions anywhere need annotations. "
     "Prefer a `Protocol` over `Any`; `# type: ignore` needs the error code and a reason.",
     "mypy typing"),
    ("style-ruff-format",
     "Format with ruff format at line length 100; black is not used",
     "One formatter, one config in pyproject; run ruff check --fix before committing.",
     "`[tool.ruff] line-length = 100`; `ruff format` replaced black and isort. Don't add black to your editor "
     "config: it reflows differently and creates noise diffs.",
     "ruff formatting"),
    ("style-adr",
     "Record architecture decisions as ADRs in docs/adr",
     "docs/adr/NNNN-title.md from the template: context, decision, consequences.",
     "Significant choices (a new datastore, a queue, dropping a dependency) get an ADR: copy "
     "`docs/adr/0000-template.md` to the next number, fill Context / Decision / Consequences, and link it from "
     "the PR. Superseded ADRs stay, marked Superseded by NNNN.",
     "adr architecture docs"),
    ("style-towncrier",
     "User-visible changes need a news fragment in changes/",
     "CI's 'news fragment missing' check wants changes/<PR>.<type>.md for towncrier.",
     "Add `changes/1234.bugfix.md` (types: feature, bugfix, removal, doc, misc) with one user-facing sentence. "
     "towncrier assembles CHANGELOG.md at release. Internal-only PRs take the `skip-news` label.",
     "towncrier changelog"),
    ("style-test-names",
     "Test names read test_<unit>_<condition>_<expected>",
     "test_refund_after_dispatch_is_rejected tells you the failure without opening the file.",
     "Name tests by behaviour: `test_refund_after_dispatch_is_rejected`, not `test_refund_2`. One behaviour per "
     "test; parametrize variations instead of copying the test.",
     "naming tests"),
    ("style-no-abbreviations",
     "Spell names out; no home-made abbreviations",
     "cust_ord_qty saves nothing; customer_order_quantity reads at once. Standard ones (id, url, db) are fine.",
     "Reviewers kept asking what `shp_cfg` and `rcpt_tmpl` meant. Use full words for variables, functions and "
     "modules. Accepted abbreviations: id, url, db, http, api, config, max, min.",
     "naming readability"),
    ("style-error-messages",
     "Error messages say what happened and what to do next",
     "'Could not connect to the database at localhost:5433: is docker compose up?' beats 'Oops'.",
     "User and developer errors name the thing that failed, the value involved and the next step: \"Config "
     "file acme.toml has no [billing] section; run `acme init` to create one.\" No 'Oops', no bare exception "
     "names, no stack traces in CLI output unless `--debug`.",
     "errors ux messages"),
    ("style-todo-owner",
     "TODO comments need an owner and a ticket",
     "# TODO(jd, PAY-88): ... ; anonymous TODOs fail the lint.",
     "Write `# TODO(jd, PAY-88): drop the v1 fallback after March`. The `todo-format` pre-commit hook rejects "
     "TODOs without initials and a ticket key, so they can be tracked and cleaned up.",
     "todo comments"),
    ("style-absolute-imports",
     "Use absolute imports only",
     "from acme.billing.money import Money, never from ..money import Money.",
     "Relative imports broke when a module moved and made grep-based refactors miss usages. Ruff's TID252 bans "
     "relative imports. Import modules, not names, when a module exports many things (`from acme.billing import "
     "money`).",
     "imports"),
    ("style-readme-commands-tested",
     "Commands in README files must be copy-pasteable; docs CI runs them",
     "make docs-test executes the fenced shell blocks marked as runnable.",
     "Three README setup commands had drifted and no longer worked. Shell blocks tagged ```sh runnable are "
     "executed by `make docs-test` in a fresh container. Use placeholders only in blocks not tagged runnable.",
     "readme docs"),
    ("style-openapi-docs",
     "Endpoint docs come from route docstrings and response_model; add openapi_examples",
     "Don't hand-maintain API docs; the published reference is generated from the FastAPI app.",
     "The API reference is generated from the app's OpenAPI schema on each release. Write a docstring on every "
     "route, declare `response_model`, and give request bodies `openapi_examples`; the schema-diff CI job flags "
     "breaking changes.",
     "openapi docs fastapi"),
    ("style-mkdocs",
     "The docs site is mkdocs-material in strict mode",
     "mkdocs serve -a localhost:8001; broken links fail the build.",
     "Preview with `mkdocs serve -a localhost:8001` (8000 is the API). `mkdocs build --strict` runs in CI and "
     "fails on broken internal links or pages missing from `nav`.",
     "mkdocs docs"),
    ("style-comments-why",
     "Comments explain why, not what the code does",
     "A comment restating the line goes stale; explain the constraint or the incident behind it.",
     "`# increment retries` above `retries += 1` adds nothing. Useful comments give the reason: `# the partner "
     "returns 500 for duplicates, so 500 here means 'already exists' (PAY-412)`.",
     "comments readability"),
    ("style-dataclass-vs-pydantic",
     "Dataclasses inside the domain, pydantic only at I/O boundaries",
     "Validation belongs where data enters; internal value objects are frozen dataclasses.",
     "Pydantic models everywhere made internal calls re-validate the same data and slowed hot paths. Request "
     "and response schemas, settings and external payloads use pydantic; domain objects are "
     "`@dataclass(frozen=True, slots=True)`.",
     "pydantic dataclasses design"),
    ("style-domain-exceptions",
     "Raise domain exceptions from acme.errors; map them to HTTP in one handler",
     "No bare Exception, no HTTPException in the domain layer.",
     "Services raise `acme.errors.NotFound`, `Conflict`, `PermissionDenied`; the app's exception handler maps them "
     "to 404/409/403 with the standard error body. Raising `HTTPException` from service code coupled it to "
     "FastAPI and broke the CLI.",
     "exceptions errors"),
    ("style-pr-template",
     "PR descriptions follow the template: what, why, how tested, rollout",
     "The rollout section must say whether a migration or flag is involved.",
     "Fill every section of `.github/pull_request_template.md`. 'How tested' names the commands or screenshots; "
     "'Rollout' states migrations, flags and whether the change is safe to revert.",
     "pull-requests process"),
    ("style-flag-cleanup",
     "Delete a feature flag within two sprints of reaching 100%",
     "Stale flags double the code paths to test; the flag report lists candidates.",
     "Once a flag has been fully on for two sprints, remove the flag and the dead branch in one PR. The weekly "
     "flag report in #eng lists flags at 100% for more than 14 days with their owners.",
     "flags cleanup"),
    ("style-sqlfluff",
     "SQL lives in .sql files under queries/ and is formatted by sqlfluff",
     "sqlfluff with the postgres dialect runs in pre-commit; no SQL built with f-strings.",
     "Hand-written SQL goes in `queries/*.sql`, loaded with `aiosql`, and `sqlfluff lint --dialect postgres` "
     "runs in pre-commit. Never format values into SQL strings; bind parameters.",
     "sql sqlfluff"),
    ("style-log-event-names",
     "Log event names are noun.past_tense_verb in snake case",
     "invoice.sent, payment.failed, sync.started: consistent names make dashboards and alerts easy.",
     "Use `invoice.sent`, not `Sent invoice!` or `INVOICE_SEND`. The noun is the domain object, the verb what "
     "happened to it. Alert rules and Loki dashboards match on these names, so renaming one is a breaking change.",
     "logging naming conventions"),
]
