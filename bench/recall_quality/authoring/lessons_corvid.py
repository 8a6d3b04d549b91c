"""Lessons: Corvid Freight, a fictional logistics company with its own internal services and tools.

Service names are made up on purpose: no embedding model has seen them, so only their context can carry meaning.
wharf (booking API), ferryman (chat deploy bot), lamplighter (feature flags), quillbill (billing), gatehouse
(auth gateway), driftwood (event consumers), almanac (config repo), spyglass (dashboards), tidetable (scheduler),
ballast (package mirror), skiff (developer CLI), mooring (shared protobufs).
"""

CORVID = [
    ("cv-wharf-local",
     "wharf runs on port 8710 locally and needs the almanac checkout beside it",
     "skiff up wharf starts it with Postgres and driftwood; /_meta returns the running git sha.",
     "`skiff up wharf` starts the booking API on port 8710 with its Postgres and the driftwood consumer. It reads "
     "config from `../almanac/wharf/local.yaml`, so clone almanac next to wharf. `curl localhost:8710/_meta` "
     "returns the git sha when it's up.",
     "wharf local skiff"),
    ("cv-ferryman-deploy",
     "Deploys go through ferryman in #ship: /ferryman deploy <service>@<sha> to <env>",
     "ferryman refuses a sha without a green main build; 'no attestation for sha' means the image wasn't signed.",
     "Type `/ferryman deploy wharf@3f9c2e1 to staging` in #ship. It refuses shas without a green build on main. "
     "\"no attestation for sha\" means the image was not built and signed by the release pipeline (e.g. pushed "
     "from a laptop); rebuild through CI.",
     "ferryman deploy chatops"),
    ("cv-ferryman-lock",
     "ferryman holds a per-service deploy lock; unlock only after checking nobody is mid-rollout",
     "'locked by ci-bot 3h ago' is usually a crashed rollout; confirm in #ship before /ferryman unlock.",
     "Each service has one deploy lock. A crashed pipeline leaves \"wharf is locked by ci-bot (3h ago)\". Check "
     "`/ferryman status wharf` and ask in #ship before `/ferryman unlock wharf`; unlocking during a real rollout "
     "let two versions race in March.",
     "ferryman lock deploy"),
    ("cv-ferryman-prod-approval",
     "Production deploys need a second engineer's approval reaction in #ship",
     "ferryman waits up to 30 minutes for a thumbs-up from someone other than the requester.",
     "For `to prod`, ferryman posts the diff summary and waits for a :+1: reaction from an engineer other than "
     "the requester. After 30 minutes the request expires and must be repeated. Out of hours, the on-call can "
     "approve.",
     "ferryman prod approval"),
    ("cv-lamplighter-flags",
     "Feature flags live in lamplighter; new flags default off in prod and are named team.feature",
     "lamplighter.enabled(name, account_id) is cached in-process for 30 s, so a flip takes up to 30 s.",
     "Create flags in the lamplighter UI as `booking.split_payments` (team.feature). Evaluate with "
     "`lamplighter.enabled(\"booking.split_payments\", account_id)`. Values are cached in-process for 30 seconds, "
     "so after flipping a flag wait half a minute before concluding it 'didn't work'.",
     "lamplighter flags"),
    ("cv-lamplighter-tests",
     "In tests, set lamplighter flags with the flags fixture; never call the real service",
     "The real client raises LamplighterOffline in CI; flags.set(name, True) overrides per test.",
     "Tests use the `flags` fixture: `flags.set(\"booking.split_payments\", True)`. The real client raises "
     "`LamplighterOffline` in CI because the service isn't reachable there. Cover both flag states with "
     "`@pytest.mark.parametrize(\"flag_on\", [True, False])`.",
     "lamplighter pytest fixtures"),
    ("cv-quillbill-money",
     "quillbill stores money as integer minor units plus a currency, never floats",
     "Money(amount_minor=1999, currency='EUR'); rounding is banker's rounding; JPY has zero decimals.",
     "Amounts are `Money(amount_minor=1999, currency=\"EUR\")`. Floats caused one-cent drifts in invoice totals. "
     "Rounding goes through `quillbill.rounding.round_half_even`. Don't assume two decimals: JPY has zero and "
     "KWD three; use `currency.exponent`.",
     "quillbill money billing"),
    ("cv-quillbill-invoice-numbers",
     "Invoice numbers are gapless per legal entity and issued only by quillbill's numbering worker",
     "Never mint numbers in wharf; a failed invoice is voided, never deleted.",
     "Dutch law requires gapless sequences per entity (prefix `CF-NL-`, `CF-BE-` for Belgium). Only the "
     "`numbering` worker in quillbill assigns them, inside the same transaction as the invoice row. A wrong "
     "invoice gets a credit note and a `void` status; deleting it leaves a gap auditors flag.",
     "quillbill invoices legal"),
    ("cv-gatehouse-headers",
     "External traffic enters through gatehouse, which validates tokens and injects X-Corvid-Account",
     "Services trust X-Corvid-Account only from gatehouse's mTLS identity; locally skiff runs it permissive.",
     "gatehouse terminates TLS, validates the bearer token and forwards `X-Corvid-Account` and "
     "`X-Corvid-Scopes`. Services accept those headers only on the mTLS listener that gatehouse connects to. "
     "Locally `skiff up` runs gatehouse in permissive mode, so a missing token still passes: test auth on staging.",
     "gatehouse auth headers"),
    ("cv-gatehouse-audience",
     "gatehouse returns 401 reason=aud when a token was minted for another service",
     "Tokens are per audience (svc:wharf); mint one for the target with skiff token --aud.",
     "Calling quillbill with a wharf token gives `401 {\"reason\": \"aud\"}` from gatehouse. Internal tokens are "
     "minted per audience: `skiff token --aud svc:quillbill` locally; services use their own client credentials "
     "with `audience=svc:<target>`.",
     "gatehouse tokens audience"),
    ("cv-driftwood-idempotent",
     "driftwood consumers must be idempotent: events are redelivered on every rebalance",
     "Dedupe by event_id in processed_events; bookings.v2 has 24 partitions.",
     "driftwood commits offsets after processing, so a rebalance or pod restart redelivers recent events. Each "
     "handler inserts the `event_id` into `processed_events` in the same transaction as its side effects and "
     "skips duplicates. Topic `bookings.v2` has 24 partitions; ordering holds only per booking id.",
     "driftwood kafka idempotency"),
    ("cv-driftwood-poison",
     "driftwood lag alert: look for a poison message before scaling consumers",
     "One event that always throws blocks its partition; park it to the DLQ with skiff driftwood park.",
     "`skiff driftwood lag bookings.v2` shows lag per partition. If one partition is stuck while others are "
     "fine, an event keeps failing and being retried. Park it with `skiff driftwood park bookings.v2 "
     "--partition 7 --offset 123456` (moves it to `bookings.v2.dlq`). More consumers don't help a stuck partition.",
     "driftwood kafka dlq"),
    ("cv-almanac-config",
     "Service config lives in the almanac repo per environment; secrets are Vault paths referenced there",
     "Change almanac/<service>/<env>.yaml by PR; ferryman applies it on the next deploy.",
     "Config is `almanac/wharf/staging.yaml` and so on. Secrets appear as `vault:secret/wharf/stripe#key` "
     "references, never values. Change config by PR to almanac; ferryman reads it at the next deploy. Env vars "
     "set by hand on the cluster are overwritten.",
     "almanac config vault"),
    ("cv-spyglass",
     "spyglass is the metrics UI; each service has a <service>-overview dashboard",
     "spyglass is our Grafana fork at spyglass.corvid.internal; dashboards are code in each repo.",
     "Open `https://spyglass.corvid.internal/d/wharf-overview` for request rate, errors and latency per "
     "endpoint. Dashboards live in each service repo under `ops/spyglass/` and are pushed by ferryman on deploy, "
     "so edits in the UI are lost.",
     "spyglass dashboards metrics"),
    ("cv-tidetable",
     "Scheduled jobs are declared in tidetable.yaml, not as Kubernetes CronJobs",
     "Times are Europe/Amsterdam; tidetable run --now <job> triggers a manual run.",
     "Each repo declares jobs in `tidetable.yaml` (`wharf.nightly_reconcile: \"30 2 * * *\"`). Times are "
     "Europe/Amsterdam, unlike GitHub cron. `tidetable run --now wharf.nightly_reconcile` starts one by hand; "
     "`tidetable history <job>` shows past runs and their logs link.",
     "tidetable scheduler cron"),
    ("cv-ballast-mirror",
     "Python packages install through the ballast mirror; new public packages need approval",
     "'No matching distribution found' for a new package means it hasn't been approved on ballast yet.",
     "pip and uv point at `https://ballast.corvid.internal/simple`. Public packages appear there only after "
     "approval: run `ballast request <name>` and wait for security's review (usually a day). Until then "
     "installs fail with \"No matching distribution found\".",
     "ballast pypi mirror"),
    ("cv-skiff-doctor",
     "skiff is the developer CLI; run skiff doctor first when the local stack won't start",
     "skiff doctor checks Docker, the VPN, and the almanac checkout.",
     "`skiff up <svc>`, `skiff logs <svc>`, `skiff db shell wharf`. When something won't start, `skiff doctor` "
     "checks Docker's memory setting (needs 8 GB), the WireGuard VPN, and that almanac is cloned and up to date, "
     "and prints the fix for each.",
     "skiff cli local"),
    ("cv-vpn-staging",
     "Staging endpoints (*.stg.corvid.internal) need the WireGuard VPN",
     "Without it requests time out rather than fail, which looks like a hung service.",
     "`curl https://wharf.stg.corvid.internal/_meta` just hangs without the VPN; DNS resolves but packets are "
     "dropped. Connect with `wg-quick up corvid` (config from the IT portal). `skiff doctor` reports it.",
     "vpn staging network"),
    ("cv-wharf-booking-states",
     "Booking status changes only through booking.transition(); cancellation is allowed before dispatch",
     "draft -> quoted -> confirmed -> dispatched -> delivered; never set status directly.",
     "The state machine is in `wharf/booking/states.py`. Call `booking.transition(\"confirmed\")`, which checks "
     "the edge and emits the `booking.confirmed` event for driftwood. Setting `booking.status` directly skipped "
     "the event and quillbill never invoiced. Cancelling after `dispatched` raises `IllegalTransition`.",
     "wharf booking domain"),
    ("cv-quillbill-vat",
     "VAT rates come from quillbill's tax table by country and date; never hard-code 21%",
     "Rates change; tax_rate(country, on=date) reads the table, including reduced and reverse-charge cases.",
     "Use `quillbill.tax.tax_rate(country=\"NL\", on=invoice_date, category=\"transport\")`. A hard-coded 0.21 "
     "billed Belgian B2B customers VAT that should have been reverse-charged. The table is updated by finance "
     "via a migration.",
     "quillbill vat tax"),
    ("cv-wharf-quote-cache",
     "wharf caches quote prices 15 minutes per lane; a tariff upload busts them with skiff cache bust quotes",
     "Keys are quote:v2:{origin}:{dest}:{weight_band} in Redis.",
     "Quotes are cached for 15 min under `quote:v2:{origin}:{dest}:{weight_band}`. After finance uploads new "
     "tariffs, prices stay old until the keys expire unless you run `skiff cache bust quotes --env staging` "
     "(prod: via ferryman `/ferryman run wharf cache-bust-quotes`).",
     "wharf quotes cache"),
    ("cv-oncall-handbook",
     "On-call pages go to /page corvid-core; runbooks are in handbook/runbooks/<service>.md",
     "Start from the service's runbook; update it after each incident.",
     "Page with `/page corvid-core <summary>` in Slack. Each service has `handbook/runbooks/wharf.md` etc. with "
     "dashboards, common alerts and safe mitigations. After an incident, the on-call updates the runbook in the "
     "postmortem PR.",
     "oncall runbooks incident"),
    ("cv-wharf-api-versioning",
     "wharf's public API is versioned by the Corvid-Version date header",
     "Breaking changes need a new dated version; old versions are served by response transformers.",
     "Clients send `Corvid-Version: 2024-06-01`. A breaking change (renamed field, new required param) needs a "
     "new date and a transformer in `wharf/api/versions/` that converts new responses back to older shapes. "
     "Additive fields are not breaking.",
     "api versioning wharf"),
    ("cv-mooring-protos",
     "Shared protobufs live in the mooring repo; regenerate stubs with skiff gen protos",
     "Never edit generated *_pb2.py; bump the mooring pin and regenerate.",
     "Messages between wharf, quillbill and driftwood are defined in `mooring/corvid/*.proto`. Services pin a "
     "mooring tag in `mooring.lock`; bump it and run `skiff gen protos`. Field numbers are never reused; mark "
     "removed fields `reserved`.",
     "mooring protobuf grpc"),
    ("cv-staging-reset",
     "Staging data is reset every Sunday at 02:00 from an anonymised snapshot",
     "Test bookings and accounts you created during the week disappear; seed them with skiff seed.",
     "The Sunday job restores wharf and quillbill staging databases from the anonymised snapshot. Don't rely on "
     "records surviving the weekend; `skiff seed staging --scenario demo-shipper` recreates the demo accounts.",
     "staging data reset"),
    ("cv-customer-ids",
     "Customer ids are cus_ + ULID in wharf but legacy integers in quillbill",
     "Translate with quillbill.legacy_id(); never compare the two forms directly.",
     "wharf uses `cus_01HX...` ids, while quillbill's older tables still key customers by integer. Convert with "
     "`quillbill.legacy_id(\"cus_...\")` and back with `quillbill.public_id(4711)`. A join on the raw values "
     "silently matched nothing.",
     "ids quillbill wharf"),
]
