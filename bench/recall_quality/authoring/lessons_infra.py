"""Lessons: deploy (k8s / Argo / Helm), databases and migrations. (key, title, gist, body, tags)"""

DEPLOY = [
    ("dep-argo-presync",
     "Argo sync on staging hangs on a PreSync migration hook",
     "A PreSync hook Job that never finishes blocks the whole sync; inspect the Job, not the Deployment.",
     "When `argocd app sync web-staging` sits at 'Running' for minutes after an image bump, the PreSync hook "
     "(the db-migrate Job) is usually waiting on a table lock. Run `kubectl -n web-staging get jobs -l "
     "argocd.argoproj.io/hook=PreSync` and read that pod's logs. Restarting the Deployment's pods does nothing. "
     "Delete the stuck Job once the lock holder is gone and sync again.",
     "argo staging hooks kubernetes"),
    ("dep-argo-outofsync-hpa",
     "Argo shows OutOfSync forever because the HPA owns spec.replicas",
     "Drop replicas from the manifest when an autoscaler manages it, or add ignoreDifferences.",
     "The api Application flips to OutOfSync after every scale event because the HorizontalPodAutoscaler "
     "rewrites `spec.replicas`. Remove `replicas:` from the chart when `autoscaling.enabled` is true, or add "
     "`ignoreDifferences` on `/spec/replicas` in the Application. Do not switch off self-heal to hide the diff.",
     "argo hpa drift autoscaling"),
    ("dep-imagepull-secret",
     "ImagePullBackOff in a new namespace: the registry pull secret is missing",
     "New namespaces do not inherit regcred; add it through the platform/pull-secret kustomize component.",
     "Pods sit in ImagePullBackOff with \"pull access denied ... repository does not exist or may require "
     "authorization\". Namespaces don't inherit `regcred`. Include the `platform/pull-secret` kustomize component "
     "in the new overlay instead of running `kubectl create secret docker-registry` by hand, so Argo owns it.",
     "kubernetes registry namespace imagepullbackoff"),
    ("dep-imagetag-latest",
     "Never deploy the :latest tag; pin the image to the git sha",
     "Argo cannot see a change to :latest and nodes keep the cached image; CI pushes <short-sha> tags.",
     "With `image.tag: latest` Argo sees no diff and nodes with `imagePullPolicy: IfNotPresent` keep running the "
     "old image. CI pushes `ghcr.io/acme/api:<short-sha>`; the values file's `image.tag` must be that sha. The "
     "`bump-image` workflow writes the commit to the deploy repo; don't edit the tag by hand.",
     "docker image tag argo"),
    ("dep-helm-pending-upgrade",
     "helm upgrade fails with 'another operation (install/upgrade/rollback) is in progress'",
     "A cancelled CI job left the release in pending-upgrade; roll back to the last deployed revision.",
     "Cancelling the deploy job mid-upgrade leaves the release in `pending-upgrade`. `helm history api -n prod` "
     "shows the stuck revision; `helm rollback api <last-deployed-revision> -n prod` clears it. Only delete the "
     "release secret `sh.helm.release.v1.api.vN` if the rollback itself fails.",
     "helm release ci"),
    ("dep-rollout-canary-nan",
     "Argo Rollouts canary aborts when the analysis query returns NaN",
     "With no traffic at the first canary weight the success-rate query divides by zero and fails the analysis.",
     "The `success-rate` AnalysisTemplate divides 2xx by all requests. On staging there is almost no traffic at "
     "10% weight, Prometheus returns NaN and the AnalysisRun fails, aborting the rollout. Write the query as "
     "`(sum(rate(...)) / sum(rate(...))) or vector(1)` or run `make smoke-staging` during the canary.",
     "argo-rollouts canary prometheus analysis"),
    ("dep-startup-probe",
     "Pods killed during a slow start: add a startupProbe instead of a longer liveness delay",
     "The billing worker warms caches for ~90 s; liveness kills it in a loop unless a startupProbe covers boot.",
     "billing-worker needs about 90 seconds to warm up and the livenessProbe (initialDelaySeconds 30) restarts it "
     "forever with \"Liveness probe failed: HTTP probe failed with statuscode: 503\". Add a startupProbe with "
     "`failureThreshold: 30` and `periodSeconds: 5`; keep the liveness probe tight for real hangs.",
     "kubernetes probes crashloop"),
    ("dep-oomkilled-137",
     "CrashLoopBackOff with exit code 137 is the memory limit, not a bug in the app",
     "OOMKilled / 137 means the container hit resources.limits.memory; check working-set memory before raising it.",
     "`kubectl describe pod` showing \"Last State: Terminated, Reason: OOMKilled, Exit Code: 137\" means the "
     "container crossed `resources.limits.memory`. Look at `container_memory_working_set_bytes` on the Pod "
     "resources dashboard first. The importer worker has a 512Mi limit and its batch imports grow past it; "
     "stream the input rather than doubling the limit.",
     "kubernetes memory oom crashloop"),
    ("dep-configmap-restart",
     "Editing a ConfigMap does not restart the pods that read it",
     "Env from a ConfigMap is read at container start; the chart's checksum/config annotation triggers a rollout.",
     "Values from `api-config` are injected as env vars at start, so pods keep old values after an edit. The chart "
     "sets a `checksum/config` pod annotation from the ConfigMap template, which rolls pods on change. A new "
     "ConfigMap must be added to that checksum; otherwise run `kubectl rollout restart deploy/api`.",
     "kubernetes configmap helm"),
    ("dep-kubectl-context",
     "Check the kubectl context before any apply: prod and staging share one kubeconfig",
     "The two GKE contexts differ by one word; scripts must pass --context explicitly.",
     "Run `kubectl config current-context` first. Staging is `gke_acme-stg_europe-west1_main`, prod is "
     "`gke_acme-prod_europe-west1_main`. Someone applied a staging manifest to prod this way. Use kubectx with "
     "a coloured prompt, and in scripts always pass `--context`; never rely on the default context.",
     "kubectl safety prod"),
    ("dep-argo-prune-pvc",
     "Argo prune deleted a PersistentVolumeClaim: mark stateful resources Prune=false",
     "Resources that hold data carry the Prune=false sync option; read argocd app diff before a pruning sync.",
     "Removing the rabbitmq StatefulSet from the chart let Argo prune its PVCs and the queue's data was gone. "
     "Anything holding data gets `argocd.argoproj.io/sync-options: Prune=false`. Run `argocd app diff` and look "
     "for deletions before syncing with prune on.",
     "argo pvc data-loss statefulset"),
    ("dep-ingress-413",
     "Uploads fail with 413 Request Entity Too Large at the ingress",
     "ingress-nginx caps bodies at 1m by default; services that accept files set proxy-body-size.",
     "ingress-nginx defaults `proxy-body-size` to 1m, so a 5 MB upload is rejected before the app sees it (the "
     "app's logs are empty). The uploads service sets `nginx.ingress.kubernetes.io/proxy-body-size: 50m` on its "
     "Ingress; any new service that accepts files needs the same annotation.",
     "ingress nginx uploads"),
    ("dep-dns-ndots",
     "Slow external calls from pods: ndots:5 tries every search domain first",
     "Lower ndots to 2 in dnsConfig or use a trailing dot for external hostnames.",
     "Each call to `api.stripe.com` first queried `api.stripe.com.payments.svc.cluster.local` and the other search "
     "domains. Setting `dnsConfig.options: [{name: ndots, value: \"2\"}]` in the pod spec cut ~40 ms off p99 for "
     "payment calls. A fully qualified name with a trailing dot also skips the search list.",
     "dns kubernetes latency"),
    ("dep-sealed-secrets",
     "Secrets go into SealedSecrets, never into plain values files",
     "Seal with kubeseal against the target cluster; a staging-sealed secret won't decrypt on prod.",
     "`kubeseal --controller-namespace kube-system --format yaml < secret.yaml > sealed-secret.yaml` with your "
     "context set to the target cluster. Each cluster has its own sealing key, so a secret sealed for staging "
     "does not decrypt on prod. Commit only the sealed file and delete the plain one.",
     "secrets kubeseal gitops"),
    ("dep-rollback-revert",
     "Roll back a bad prod deploy by reverting the deploy-repo commit, not with argocd app rollback",
     "Auto-sync re-applies the broken revision within minutes; revert the image bump in acme/deploy instead.",
     "`argocd app rollback` works for a moment, then auto-sync applies the broken revision again within three "
     "minutes. Revert the image bump commit in `acme/deploy` (`git revert <sha>` and push) and let Argo sync the "
     "previous tag. Write the incident note after traffic is healthy.",
     "rollback gitops argo incident"),
    ("dep-drain-pdb",
     "Node drain stuck on a PodDisruptionBudget with minAvailable equal to replicas",
     "A PDB that allows zero disruptions blocks every drain; use maxUnavailable: 1.",
     "`kubectl drain` loops on \"Cannot evict pod as it would violate the pod's disruption budget\". The search "
     "deployment had 2 replicas and `minAvailable: 2`, so no pod could ever be evicted and the GKE upgrade "
     "stalled. PDBs use `maxUnavailable: 1`.",
     "kubernetes pdb upgrades drain"),
    ("dep-cronjob-concurrency",
     "CronJobs pile up when a run outlasts its schedule: set concurrencyPolicy Forbid",
     "Two overlapping reindex runs fought over the same index; forbid concurrency and bound the runtime.",
     "The nightly `reindex` CronJob once took longer than 24 h and the next run started beside it. Set "
     "`concurrencyPolicy: Forbid`, `startingDeadlineSeconds: 600`, and `activeDeadlineSeconds` on the job template "
     "so a runaway job is killed.",
     "cronjob kubernetes batch"),
    ("dep-sync-window",
     "Staging deploys wait from Friday 16:00 to Monday 09:00: the Argo sync window denies them",
     "'Sync windows: deny' in the UI is the weekend freeze, not a bug; ask #platform for an override.",
     "Syncs silently queue and the UI shows \"Sync windows: deny\". It is the weekend freeze configured in the "
     "AppProject. For an urgent fix ask in #platform for a manual sync override; never edit `syncWindows` "
     "yourself.",
     "argo sync-window freeze process"),
    ("dep-pending-insufficient-cpu",
     "Pods Pending with '0/6 nodes are available: insufficient cpu' after raising requests",
     "Requests are reserved capacity; size them from p95 usage, not from the limit.",
     "Bumping the api to `requests.cpu: 2` made 12 replicas unschedulable on the 6-node pool, and the new "
     "ReplicaSet stayed Pending. Requests reserve capacity whether used or not. Size them from the p95 on the "
     "Pod resources dashboard and let the limit absorb bursts.",
     "kubernetes scheduling cpu requests"),
    ("dep-helm-values-order",
     "In helm upgrade the last -f values file wins",
     "values-prod.yaml overrides values.yaml only if it comes later; lists are replaced, not merged.",
     "`helm upgrade api ./chart -f values.yaml -f values-prod.yaml`: later files override earlier ones. When a "
     "prod setting 'does not apply', check whether `values-secrets.yaml`, passed after it by the Makefile, sets "
     "the same key. Lists such as `env:` are replaced wholesale, never merged.",
     "helm values configuration"),
    ("dep-port-forward",
     "Reach a service's admin port with kubectl port-forward instead of exposing it",
     "Port 9090 (metrics, pprof) is never put behind an Ingress; forward it locally.",
     "`kubectl -n prod port-forward svc/api 9090:9090` gives you the admin port (metrics and pprof) on "
     "localhost. Never add an Ingress or LoadBalancer for 9090. The forward dies after ~4 h idle; just rerun it.",
     "kubectl debugging admin"),
    ("dep-prestop-sleep",
     "502s during every rollout: add a preStop sleep so endpoints update before SIGTERM",
     "Pods got SIGTERM while the load balancer still routed to them; sleep 10 in preStop.",
     "Each rollout produced a burst of 502s because pods received SIGTERM while still listed as endpoints. A "
     "`preStop: exec: command: [\"sleep\", \"10\"]` plus `terminationGracePeriodSeconds: 40` fixed it. gunicorn's "
     "`--graceful-timeout 25` has to fit inside the grace period.",
     "kubernetes rollout 502 graceful-shutdown"),
    ("dep-sync-wave-crd",
     "First sync fails with 'no matches for kind ServiceMonitor': sync CRDs in an earlier wave",
     "Put CRDs in wave -1 and let dependants skip the dry run while the kind is missing.",
     "On a fresh cluster the first sync fails because ServiceMonitor objects are applied before the Prometheus "
     "operator's CRDs exist. Annotate CRDs with `argocd.argoproj.io/sync-wave: \"-1\"` and add "
     "`SkipDryRunOnMissingResource=true` to the resources that use them.",
     "argo crd sync-wave bootstrap"),
    ("dep-hpa-metrics-missing",
     "HPA shows <unknown>/70% targets: the pods have no cpu requests",
     "Utilization targets need resources.requests.cpu; without it the autoscaler cannot compute a percentage.",
     "`kubectl get hpa` printed `<unknown>/70%` and the api never scaled during the sale. Utilization is a "
     "percentage of the request, and the sidecar container had no `requests.cpu`. Every container in the pod "
     "needs a cpu request for the HPA to work; check `kubectl describe hpa` for 'missing request for cpu'.",
     "hpa autoscaling kubernetes metrics"),
]

DATABASE = [
    ("db-alembic-multiple-heads",
     "Alembic 'Multiple head revisions are present' after merging two branches",
     "Two PRs added migrations on the same parent; create a merge revision, never rewrite applied ones.",
     "Both branches added a revision whose down_revision is the same parent. Run `alembic heads`, then "
     "`alembic merge -m \"merge heads\" <rev_a> <rev_b>` and commit the merge file. Never change the "
     "down_revision of a migration that has already run on staging.",
     "alembic migrations merge"),
    ("db-lock-timeout",
     "Set lock_timeout in migrations that ALTER busy tables",
     "An ALTER waiting for an exclusive lock queues every query behind it; fail fast and retry instead.",
     "`ALTER TABLE orders ADD COLUMN ...` waited behind a long-running report for an ACCESS EXCLUSIVE lock, and "
     "every query on orders queued behind the ALTER: the site was down for four minutes. Migrations begin with "
     "`SET lock_timeout = '5s'`; the deploy job retries the migration three times.",
     "postgres locks migrations outage"),
    ("db-index-concurrently",
     "Create indexes CONCURRENTLY and outside a transaction",
     "CREATE INDEX CONCURRENTLY can't run in a transaction block; use alembic's autocommit_block and drop INVALID leftovers.",
     "A plain `CREATE INDEX` locks writes for the whole build. `CREATE INDEX CONCURRENTLY` cannot run inside a "
     "transaction, so in Alembic wrap it in `with op.get_context().autocommit_block():`. A failed concurrent "
     "build leaves an INVALID index (`\\d orders` shows it); drop it before retrying.",
     "postgres index alembic"),
    ("db-local-port-5433",
     "The local docker Postgres listens on 5433, not 5432",
     "compose maps 5433:5432 so it doesn't clash with a system Postgres; connection refused on 5432 means the wrong server.",
     "`docker compose up db` maps host port 5433 to the container's 5432 because many laptops already run a "
     "Postgres on 5432. DATABASE_URL in `.env.example` is `postgresql://app@localhost:5433/app`. 'Connection "
     "refused' or 'role app does not exist' means you are talking to the system Postgres.",
     "postgres docker local"),
    ("db-test-port-5434",
     "The test database runs on 5434 and is wiped every session",
     "compose.test.yml starts a tmpfs Postgres on 5434 with fsync off; never point tests at the dev database.",
     "`docker compose -f compose.test.yml up -d` starts a throwaway Postgres on port 5434, on tmpfs with "
     "fsync off. conftest drops and recreates schema `test_<worker>` for each xdist worker. Never aim the tests at "
     "5433: the fixtures truncate tables and you lose your local data.",
     "postgres pytest docker"),
    ("db-pool-exhausted",
     "'QueuePool limit of size 5 overflow 10 reached' means leaked sessions, not a small pool",
     "Raising pool_size only delays it; close every session with a context manager.",
     "Raising `pool_size` hid the error for a day. The real cause was a background task calling `SessionLocal()` "
     "without closing it. Use `with SessionLocal() as s:` everywhere and set `pool_pre_ping=True`. Many "
     "`idle in transaction` rows in `pg_stat_activity` confirm the leak.",
     "sqlalchemy pool connections"),
    ("db-pgbouncer-prepared",
     "Prepared statements break behind PgBouncer in transaction mode",
     "asyncpg's statement cache fails through pgbouncer on 6432; disable it or connect directly for migrations.",
     "asyncpg raises `prepared statement \"__asyncpg_stmt_1__\" does not exist` when it goes through pgbouncer on "
     "port 6432 in transaction pooling mode. Pass `statement_cache_size=0` (SQLAlchemy: "
     "`connect_args={\"statement_cache_size\": 0}`) and run migrations against 5432 directly.",
     "pgbouncer asyncpg postgres"),
    ("db-n-plus-one",
     "Use selectinload for collections to remove N+1 queries",
     "The orders page issued one query per order; eager-load the relationship and assert query counts in tests.",
     "/orders ran 301 queries for 300 orders because `order.items` lazy-loaded inside the template loop. "
     "`select(Order).options(selectinload(Order.items))` makes it 2 queries. `tests/utils/querycount.py` provides "
     "`assert_max_queries(3)` to keep it that way.",
     "sqlalchemy orm queries"),
    ("db-timestamptz-utc",
     "Store timestamps as timestamptz in UTC",
     "Naive datetimes were read in the server's Europe/Berlin zone and shifted reports by an hour at DST.",
     "All columns are `TIMESTAMP WITH TIME ZONE` and the app writes `datetime.now(timezone.utc)`. A naive "
     "`datetime.utcnow()` stored into a plain `timestamp` column was interpreted in Europe/Berlin by the "
     "reporting tool, and the March report was off by one hour. Ruff rule DTZ catches naive calls.",
     "postgres timezones datetime"),
    ("db-repack-bloat",
     "After mass deletes the table stays huge: VACUUM doesn't shrink it, pg_repack does",
     "Autovacuum only marks space reusable; pg_repack rebuilds online, VACUUM FULL locks the table.",
     "Deleting 40M rows from `events` left the table at 80 GB on disk. Autovacuum makes the space reusable but "
     "does not return it to the OS. Run `pg_repack -t events` in a quiet window; `VACUUM FULL` takes an "
     "exclusive lock for the whole rewrite.",
     "postgres vacuum storage bloat"),
    ("db-downgrade-tested",
     "Every migration needs a working downgrade, exercised in CI",
     "CI runs upgrade, downgrade -1, upgrade; a downgrade that would lose data raises NotImplementedError with a reason.",
     "The `migrations` CI job runs `alembic upgrade head && alembic downgrade -1 && alembic upgrade head` against "
     "the test database. If a downgrade cannot be done without losing data, raise NotImplementedError with a "
     "comment explaining why; never leave a bare `pass`.",
     "alembic ci downgrade"),
    ("db-not-null-backfill",
     "Adding a NOT NULL column to a big table: nullable first, backfill in batches, then constrain",
     "Backfill by primary-key batches, then VALIDATE a NOT VALID check so SET NOT NULL doesn't scan under lock.",
     "Step 1: add the column nullable with no default. Step 2: backfill in batches of 10k rows by primary key with "
     "a short sleep between batches. Step 3: `ADD CONSTRAINT ... CHECK (col IS NOT NULL) NOT VALID`, then "
     "`VALIDATE CONSTRAINT`, then `SET NOT NULL`, which reuses the validated check instead of scanning.",
     "postgres migrations backfill"),
    ("db-deadlock-order",
     "Deadlocks between the two stock workers: lock rows in id order",
     "'deadlock detected' came from workers updating the same rows in different orders; sort ids before FOR UPDATE.",
     "\"deadlock detected ... Process 1234 waits for ShareLock on transaction 5678\" appeared when the reservation "
     "and restock workers updated the same stock rows in different orders. Sort ids before "
     "`SELECT ... FOR UPDATE`, and retry once on SQLSTATE 40P01.",
     "postgres deadlock concurrency"),
    ("db-enum-alter",
     "Prefer a text column with a CHECK constraint over a Postgres enum for new status fields",
     "A new enum value can't be used in the transaction that adds it, and values can't be removed.",
     "On PG 14 `ALTER TYPE order_status ADD VALUE 'refunded'` works in a transaction but the new value cannot be "
     "used until that transaction commits, which broke a migration that also backfilled it. Removing an enum "
     "value needs a type rebuild. New status columns are `text` with a CHECK constraint.",
     "postgres enum schema"),
    ("db-jsonb-gin",
     "jsonb queries: use the @> operator so the GIN index is used",
     "payload->>'key' = ... ignores the GIN index; containment or an expression index uses one.",
     "`WHERE payload->>'customer_id' = '42'` does a sequential scan even with a GIN index on `payload`. "
     "`WHERE payload @> '{\"customer_id\": \"42\"}'` uses it. For one hot key an expression index on "
     "`((payload->>'customer_id'))` is smaller and faster.",
     "postgres jsonb index"),
    ("db-replica-lag",
     "Reads right after a write must go to the primary",
     "The replica lags up to 2 s; the request following a write uses session.using_primary().",
     "The profile page showed the old name after saving because the redirect's GET was routed to "
     "`DB_REPLICA_URL`, which lags up to two seconds under load. For the request after a write use "
     "`session.using_primary()`; the middleware does it automatically for 5 s after any POST from that user.",
     "replica consistency postgres"),
    ("db-no-sqlite-tests",
     "Don't run the test suite on SQLite when production is Postgres",
     "SQLite accepted queries Postgres rejects; the fixtures require the Postgres test container.",
     "SQLite accepted a `GROUP BY` with a non-aggregated column and ignored a `varchar(20)` length; both failed "
     "in production. The test fixtures refuse a sqlite:// URL on purpose. Start the Postgres test container "
     "instead of switching the URL.",
     "sqlite testing postgres"),
    ("db-restore-snapshot",
     "Restore a prod snapshot locally with pg_restore --no-owner",
     "Use the anonymised nightly snapshots; never restore a raw prod dump on a laptop.",
     "`pg_restore --no-owner --no-privileges -d app -j 4 latest.dump` into the local database on 5433. Snapshots "
     "in `gs://acme-db-snapshots/anon/` are anonymised by the nightly job. Raw dumps contain customer data and "
     "must not leave the VPC.",
     "postgres backup local restore"),
    ("db-explain-analyze",
     "Read EXPLAIN (ANALYZE, BUFFERS) before adding an index",
     "A Seq Scan with millions of rows removed by filter is the signal; run it on the replica.",
     "Look for `Seq Scan` with `Rows Removed by Filter: 2000000` and high shared read buffers. ANALYZE actually "
     "executes the statement, so run it on the replica (never an UPDATE on the primary). Paste the plan into "
     "the PR when you add an index.",
     "postgres explain query-plan"),
    ("db-uuid7-keys",
     "New tables use uuid7 primary keys generated in the application",
     "Random uuid4 keys fragment the btree; uuid7 is time-ordered. Old tables keep bigint ids.",
     "uuid4 primary keys scattered inserts across the index and bloated it. New tables use "
     "`uuid_utils.uuid7()` generated in the app (the column default is only a fallback). Existing tables keep "
     "their bigint identity columns; do not migrate them.",
     "postgres schema ids uuid"),
    ("db-data-migrations-separate",
     "Keep data migrations out of schema migrations",
     "Long UPDATEs inside an Alembic revision hold up the deploy; data fixes are idempotent one-off scripts.",
     "An UPDATE of 8M rows inside a revision held the deploy's PreSync hook for 40 minutes. Schema changes go in "
     "Alembic; data fixes go in `scripts/oneoff/` as idempotent scripts, run by the `oneoff` Job after deploy.",
     "alembic data oneoff"),
    ("db-statement-timeout",
     "The app role has statement_timeout 30s; long reports use the reporting role",
     "'canceling statement due to statement timeout' in exports: use REPORTING_DATABASE_URL, not a longer timeout.",
     "The `app` role has `statement_timeout = 30s`. The CSV export failed with \"canceling statement due to "
     "statement timeout\". Don't raise it for the app role; use `REPORTING_DATABASE_URL` (role `reporting`, 10 "
     "minutes, read replica) for exports and analytics.",
     "postgres timeout roles"),
    ("db-autogenerate-misses",
     "Alembic autogenerate misses server defaults and enum changes",
     "Always read the generated revision; turn on compare_server_default and write enum changes by hand.",
     "`alembic revision --autogenerate` did not notice a changed `server_default` nor a new enum value. "
     "`compare_type=True, compare_server_default=True` are set in `env.py`; enum values still need an explicit "
     "`op.execute(...)`. Read every generated file before committing.",
     "alembic autogenerate"),
    ("db-too-many-connections",
     "'FATAL: sorry, too many clients already' after scaling out the workers",
     "Pods x workers x pool size must stay under max_connections (200); route through pgbouncer.",
     "Scaling the worker Deployment from 6 to 20 pods, each with 4 processes and a pool of 5+10, asked for far "
     "more than Postgres's `max_connections = 200`. Budget connections before scaling and point workers at "
     "pgbouncer on 6432.",
     "postgres connections scaling"),
]
