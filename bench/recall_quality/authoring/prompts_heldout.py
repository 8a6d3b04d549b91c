"""Held-out prompts: written after the everyday-words evidence rule was chosen and committed (issue 13, branch
offtopic), and never used to choose or tune it. bench_retrieval.py reports them apart from the rest ("held out").

OFFTOPIC: everyday requests whose words collide with coding words (run, branch, commit, test, merge, docker, build,
deploy, cache, token, release, leak, fork, pool, ...). ONTOPIC: prompts that need specific lessons, worded the way
a developer types them, several of them in everyday words only. Same format as prompts_src: (text, "keys", unnamed).
"""
N = False
U = True   # unnamed: shares no content word with the title, gist or tags of a lesson it needs (build.py checks)

HELDOUT_PROMPTS = [
    ("argo is stuck syncing staging, the migration job never finishes", "dep-argo-presync", N),
    ("prod pods still run the old image even though I pushed a new one with the same tag", "dep-imagetag-latest", N),
    ("the api pods get killed while they are still warming up at boot", "dep-startup-probe", N),
    ("I just applied the manifest and realised I was pointed at prod", "dep-kubectl-context", N),
    ("calls from inside the cluster to stripe take a long time to resolve", "dep-dns-ndots", N),
    ("adding a column to the orders table locked everything for minutes", "db-lock-timeout", N),
    ("which port does the test database listen on?", "db-test-port-5434", N),
    ("the list page fires one query per row to load the tags", "db-n-plus-one", N),
    ("can I skip writing the downgrade for this migration?", "db-downgrade-tested", N),
    ("the async test hangs forever when I freeze time", "test-freezegun-asyncio", N),
    ("my PR is red because coverage dropped on the lines I touched", "test-diff-coverage", N),
    ("the pull request from a fork can't read the deploy secret in CI", "ci-fork-secrets", N),
    ("one python version failing cancels all the other matrix jobs", "ci-matrix-fail-fast", N),
    ("should the client retry a failed POST that creates a payment?", "http-retry-idempotent", N),
    ("the stripe webhook signature check fails even with the right secret", "http-webhook-raw-body", N),
    ("json.loads blows up on the partner api response with Expecting value", "http-json-decode-html", N),
    ("after the deploy people keep seeing the old javascript until they hard refresh",
     "cache-control-assets fe-service-worker-stale", N),
    ("the oauth login comes back without a session cookie", "auth-samesite-lax", N),
    ("calls from our GitHub bot start failing with 401 after an hour", "auth-github-app-token", N),
    ("I rebased my branch, how do I push it without clobbering Sam's commits?", "git-force-with-lease", N),
    ("the pre-commit hook is slow, can I just skip it for this commit?", "git-no-verify", N),
    ("where do I document a new environment variable for local setup?", "git-env-ignored style-env-var-naming", N),
    ("memory of the worker grows every hour until it gets OOM killed", "perf-tracemalloc-leak", N),
    ("latency spikes every few seconds even though cpu usage is low", "perf-cpu-throttling", N),
    ("the quotes for the Rotterdam lane still show old prices after we uploaded new tariffs",
     "cv-wharf-quote-cache", N),
    ("how do I schedule a nightly job for a corvid service?", "cv-tidetable", N),
    ("can't reach the staging endpoints from my laptop", "cv-vpn-staging", N),
]

HELDOUT_OFFTOPIC = [
    "I want to run a marathon next spring, how should I train?",
    "where is the nearest branch of my bank that opens on saturday?",
    "how do I commit to a diet when I travel for work?",
    "what should I check when I test drive a used car?",
    "when two lanes merge on the highway, who has the right of way?",
    "what does a docker do at the port, like loading ships?",
    "my kid wants to build a treehouse, what wood should we use?",
    "how do I deploy a parachute safely on my first skydive?",
    "what's a good way to cache vegetables for the winter in a cellar?",
    "how many tokens do I need for the subway in New York?",
    "which movies are being released in theaters this weekend?",
    "how do I fix a leaking kitchen faucet?",
    "my garden hose has a leak near the connector, can I patch it?",
    "what's the best way to store fresh herbs in the fridge?",
    "is it rude to fork food off someone else's plate?",
    "how do I get rid of bugs on my tomato plants?",
    "what time does the swimming pool open on sundays?",
    "my dog keeps pulling on the lead, how do I train him?",
    "how long does it take a package to ship from Canada to Germany?",
    "what are the rules for a penalty kick in rugby?",
    "how do I ask my landlord to renew the lease for another year?",
    "what key should we sing happy birthday in?",
    "can you help me write a toast for my sister's wedding?",
    "how do I keep my bread from going stale so quickly?",
    "what's the difference between a latte and a flat white?",
    "which queue at airport security is usually faster?",
    "how many calories does a five mile walk burn?",
]

# -- round 2: written after round 1 had been looked at (docs/benchmarks.md, "Held out"), with no rule changed since;
# a second estimate of the same rule on text it has never met ---------------------------------------------------
HELDOUT2_PROMPTS = [
    ("the pod keeps restarting with exit code 137 and the logs show nothing", "dep-oomkilled-137", N),
    ("helm says another operation is in progress and I can't upgrade", "dep-helm-pending-upgrade", N),
    ("where do I put the new database password for the deployment?", "dep-sealed-secrets", N),
    ("the nightly report job started twice because the first run was still going", "dep-cronjob-concurrency", N),
    ("creating an index on the events table blocked writes for ten minutes", "db-index-concurrently", N),
    ("I need a new required column on the users table, it has 40 million rows", "db-not-null-backfill", N),
    ("filtering on a key inside the jsonb settings column does a full scan", "db-jsonb-gin", N),
    ("tests are green one by one but red when I run them in parallel", "test-xdist-shared-db", N),
    ("my mock doesn't take effect, the real function still gets called", "test-patch-where-used", N),
    ("the e2e test clicks the button before the page has loaded", "test-playwright-waits", N),
    ("every CI run downloads all the dependencies from scratch", "ci-cache-key-lockfile", N),
    ("the docker build on the runner dies with no space left", "ci-runner-disk-full", N),
    ("can we make flaky tests rerun automatically in CI?", "ci-quarantine-flaky", N),
    ("we hit the partner API 500 times at once and they throttled us", "http-bounded-concurrency", N),
    ("how should I page through the partner's order list?", "http-cursor-pagination", N),
    ("after changing the cached object's fields the app crashed reading old entries", "cache-key-version", N),
    ("users in two browser tabs get logged out at the same moment", "auth-refresh-rotation-race", N),
    ("how should we store the API keys customers create?", "auth-api-keys-hashed", N),
    ("import.meta.env.API_URL is undefined in the built app", "fe-vite-env-prefix", N),
    ("the production build runs out of memory on my machine", "fe-heap-out-of-memory", N),
    ("which commit broke the invoice totals? it worked last month", "git-bisect-run", N),
    ("I accidentally pushed the stripe key to the repo", "git-leaked-secret", N),
    ("the CLA check on my PR fails even though I signed it", "git-commit-email", N),
    ("my templates folder isn't in the installed package", "pkg-package-data", N),
    ("the quote endpoint rounds prices wrong when we add VAT", "cv-quillbill-money", N),
    ("the staging data I created on friday is gone on monday", "cv-staging-reset", N),
]

HELDOUT2_OFFTOPIC = [
    "how do I get my toddler to sleep through the night?",
    "what's a good stretch routine after a long flight?",
    "can you help me pick a name for my bakery?",
    "how do I remove rust from an old bicycle chain?",
    "what is the best time of year to visit Japan for the cherry blossoms?",
    "my cat keeps scratching the couch, what can I do?",
    "how do I write a thank you note to my team after my farewell party?",
    "should I repaint the kitchen cabinets or replace them?",
    "which board games are fun for a family of four?",
    "what's the rule for tipping in restaurants in the United States?",
    "how long do I let a steak rest after grilling?",
    "what should I say in a toast at my parents' anniversary?",
    "how do I patch a hole in drywall?",
    "what's the capital of Canada and how big is it?",
    "how do I keep basil alive on a windowsill?",
    "what's the difference between a hurricane and a typhoon?",
    "can you recommend a podcast for learning history?",
    "how do I teach my kid to ride a bike without training wheels?",
    "what's a polite way to decline a wedding invitation?",
    "how do I clean a cast iron pan?",
    "what should I bring to a picnic in the park?",
    "how often should I water a cactus?",
    "what's a fun way to celebrate a tenth work anniversary with friends?",
    "how many cups of coffee a day is too many?",
    "is it worth learning to play the piano at forty?",
]

# -- round 3: written after the everyday-sense rule was chosen and committed (issue 13, branch sense), with rounds 1
# and 2 looked at and nothing tuned on these. OFFTOPIC: everyday senses of coding words (branch, commit, deploy,
# cache, thread, port, shell, kernel, patch, stack, heap, pool, release, lock, pipe, driver, container, bucket,
# cluster, tag, log, trace, hook, socket, job, mirror, proxy, root, tree, rotate, ticket, pipeline). ONTOPIC: the same
# words in their coding sense, against the set's lessons ---------------------------------------------------------
HELDOUT3_PROMPTS = [
    ("what should I name the branch for ticket OPS-88?", "git-branch-naming", N),
    ("the commit message got rejected by the hook, what format do we use?", "git-conventional-commits", N),
    ("how do I deploy wharf to staging from chat?", "cv-ferryman-deploy", N),
    ("our cache falls over when a popular key expires and every request recomputes it", "cache-stampede", N),
    ("the sync endpoints hang because every thread in the pool is busy", "perf-threadpool-limit", N),
    ("which port does the OTLP collector use for grpc?", "obs-otlp-ports", N),
    ("the shell says command not found right after I pip installed our CLI", "pkg-entry-point-path", N),
    ("the kernel kills the api pod with exit code 137", "dep-oomkilled-137", N),
    ("can I patch the function in the module where it's defined for my test?", "test-patch-where-used", N),
    ("the stack trace is lost when I log the error in the except block", "obs-log-exception", N),
    ("the node build crashes with heap out of memory", "fe-heap-out-of-memory", N),
    ("how do we cut a release tag for version 2.3.0?", "git-release-tags", N),
    ("the sqlalchemy pool runs out of connections under load and requests wait", "db-pool-exhausted", N),
    ("the ferryman deploy lock is held and I need to ship a fix", "cv-ferryman-lock", N),
    ("the driftwood consumer processed the same event twice after a rebalance", "cv-driftwood-idempotent", N),
    ("which python base image does the production docker container use?", "pkg-docker-slim", N),
    ("draining a node hangs forever on the disruption budget", "dep-drain-pdb", N),
    ("how should I tag the image when deploying to prod?", "dep-imagetag-latest", N),
    ("where do I find the logs of one request by its id?", "obs-loki-request-logs", N),
    ("how do I trace a request across services and into the queued tasks?", "obs-traceparent", N),
    ("the pre-commit hook fails in CI but I never installed it locally", "ci-pre-commit", N),
    ("the app hangs on the redis socket whenever redis is slow", "cache-redis-socket-timeout", N),
    ("the celery job queue is backing up, how do we get alerted?", "obs-celery-queue-alert", N),
    ("a worker pegs the cpu at 100% on one regex", "perf-regex-backtracking", N),
    ("how do I proxy api calls to the backend in the vite dev server?", "fe-dev-proxy", N),
    ("can I install a public package that isn't on our pypi mirror yet?", "cv-ballast-mirror", N),
    ("I merged two branches and now alembic complains about two heads", "db-alembic-multiple-heads", N),
    ("how do I find the commit that broke the build between two releases?", "git-bisect-run", N),
    ("which root certificate bundle do I point requests at behind the company proxy?", "http-corporate-ca", N),
    ("I need a second checkout of the repo to fix a bug on another branch", "git-worktree", N),
]

HELDOUT3_OFFTOPIC = [
    "which branch of the family tree did my great grandmother come from?",
    "is it a good idea to commit to a two year phone contract?",
    "how were troops deployed along the border in the first world war?",
    "we found a cache of old letters in the attic, how do I preserve them?",
    "what's the easiest way to thread a needle with thick yarn?",
    "which port wine goes best with blue cheese?",
    "I found a shell on the beach with a hole in it, what animal made it?",
    "how many kernels of corn are on a typical cob?",
    "how do I sew a patch on a denim jacket?",
    "how high can I safely stack firewood against the shed?",
    "the heap of leaves in the garden is attracting rats, what should I do?",
    "what's the best way to clean the filter of a swimming pool pump?",
    "how do I release a fish I caught without hurting it?",
    "can you suggest a good lock for my bike?",
    "my kitchen pipe is frozen, how do I thaw it safely?",
    "who was the driver that won the most Formula 1 races?",
    "how big a container do I need to grow potatoes on a balcony?",
    "what's a fair price for a bucket of golf balls at the range?",
    "what is the cluster of stars near Orion called?",
    "the price tag fell off a gift, how do I find out what it cost?",
    "how do I keep a log fire burning all night?",
    "how can I trace my family's ancestors in Ireland?",
    "what kind of hook holds a hanging chair from a ceiling beam?",
    "how do I replace a broken wall socket safely?",
    "my job interview is tomorrow, what should I wear?",
    "how do I fix a cracked bathroom mirror?",
    "can my neighbour vote by proxy for me in the local election?",
    "how long does a root canal take at the dentist?",
    "how often should I rotate the tires on my car?",
    "the print on my train ticket faded, will the conductor accept it?",
    "which pipeline in Alaska carries the most oil?",
]

# -- round 4: written before the collocation rule (issue 13, branch colloc) was chosen, with rounds 1-3 looked at and
# nothing tuned on these. OFFTOPIC: coding words inside everyday multiword expressions (dress code, speed limit, stock
# market, shelf life, hash browns, library card, warm up, fan club, going rate, standing order, fire drill, chopping
# block, jump start, check in), and the made-up service names of the set in their everyday sense (tide table, ballast,
# driftwood, mooring). ONTOPIC: the set's lessons asked for in plain words, some through the same kind of expression
# in its coding sense (time zone, warm cache, hard reset) -------------------------------------------------------
HELDOUT4_PROMPTS = [
    ("the canary rollout aborted because the analysis returned NaN", "dep-rollout-canary-nan", N),
    ("I changed a value in the configmap but the app still reads the old one", "dep-configmap-restart", N),
    ("uploading a 20 MB file through the ingress gives 413", "dep-ingress-413", N),
    ("which time zone should the created_at timestamps be stored in?", "db-timestamptz-utc", N),
    ("the monthly report query gets cancelled after thirty seconds", "db-statement-timeout", N),
    ("the two stock workers keep deadlocking on the same rows", "db-deadlock-order", N),
    ("after I imported rows by hand every insert fails with a duplicate key on id", "db-sequence-reset", N),
    ("how do I get a copy of the prod database onto my laptop to debug?", "db-restore-snapshot", N),
    ("a test fails only when the whole suite runs, and never in the same place twice", "test-order-dependent", N),
    ("how do I check in a pytest test that my code logged a warning?", "test-caplog", N),
    ("the golden file comparison fails only on the windows runner", "test-golden-crlf", N),
    ("my PR is stuck waiting on a check that no longer exists since I renamed the job", "ci-required-check-rename", N),
    ("which time zone does the cron of a scheduled workflow use?", "ci-schedule-utc", N),
    ("the release job has to put a multiline changelog into an environment variable", "ci-multiline-env", N),
    ("the partner api answers 429, how long should we wait before trying again?", "http-retry-after", N),
    ("downloading a 2 GB export with requests eats all the memory", "http-stream-download", N),
    ("calls to the internal billing host go out through the corporate proxy", "http-no-proxy", N),
    ("the price cache should be warm before the new release takes traffic", "cache-warm-after-deploy", N),
    ("redis cluster says CROSSSLOT when I read two keys in one pipeline", "cache-crossslot", N),
    ("is it ok to list all the session keys on the production redis with KEYS?", "cache-redis-scan-not-keys", N),
    ("an admin gave me a new role but I still can't open the page", "auth-role-change-delay", N),
    ("the google login says the callback url doesn't match", "auth-redirect-uri-mismatch", N),
    ("fetch with credentials fails the CORS check when the allowed origin is *", "auth-cors-credentials", N),
    ("react complains the server rendered text doesn't match for the order date", "fe-hydration-mismatch", N),
    ("tailwind classes I build from a variable are missing in production", "fe-tailwind-dynamic-classes", N),
    ("after a release people with an old tab open get Loading chunk failed", "fe-chunk-load-error", N),
    ("I lost two commits after a hard reset, can I get them back?", "git-reflog-recover", N),
    ("a fix is needed on the release branch, where do I land it first?", "git-hotfix-cherry-pick", N),
    ("every line our service logs shows up twice", "obs-duplicate-log-lines", N),
    ("should I put the customer id in a prometheus label?", "obs-label-cardinality", N),
    ("searching product names with LIKE and a wildcard on both sides is slow", "perf-trigram-search", N),
    ("resizing images in threads isn't any faster than doing it in one", "perf-gil-processes", N),
    ("a customer wants money back on an invoice, do I make a negative invoice in quillbill?",
     "cv-quillbill-refunds", N),
]

HELDOUT4_OFFTOPIC = [
    "what's the dress code for a black tie wedding?",
    "which zip code do I put on a letter to the old town of Boston?",
    "what's the speed limit on the motorway in France?",
    "how do I write a cover letter for a nursing job?",
    "is the stock market open on good friday?",
    "what's the shelf life of a can of beans?",
    "my front door key snapped off in the lock, what should I do?",
    "what is a safe heart rate during a spin class at the gym?",
    "how do I make crispy hash browns?",
    "how do I get a library card at the city library?",
    "what's a good warm up before a five a side football match?",
    "how do I read a tide table before going fishing?",
    "how much ballast does a small sailboat need?",
    "can I take driftwood from the beach to make a lamp?",
    "how do I tie a mooring line to a cleat on the dock?",
    "who holds the world record for the hundred metre sprint?",
    "how do I get a red wine stain out of a white table cloth?",
    "the power cord of my laptop charger is frayed near the plug, is it still safe?",
    "how do I join the fan club of my favourite football team?",
    "what's the best bait and fishing line for trout in a river?",
    "which credit card gives the most cash back on groceries?",
    "what should I put in a first aid kit for a hiking trip?",
    "what's the going rate for a babysitter on a friday night?",
    "how do I check in for my flight online and print the boarding pass?",
    "what's the best way to break in new hiking boots?",
    "what do I pack in a carry on bag for a weekend away?",
    "how do I get a refund for a concert that was cancelled?",
    "how do I set up a standing order to pay my rent every month?",
    "what's the difference between a fire drill and a fire alarm test at work?",
    "which wood is best for a chopping block?",
    "what's the safest way to jump start a car with a dead battery?",
    "how long is the waiting list for a council flat in Manchester?",
]

# -- round 5: written before the no-term agreement rule (issue 13, branch colloc2: a prompt sharing no term with the
# store gets no dense agreement) is run on them, with rounds 1-4 looked at and nothing tuned on these. ONTOPIC: the
# set's lessons asked for in several ways: paraphrases, short prompts, and prompts in everyday words only that name
# no term of the store but need a lesson (the ones such a rule could cost: "the six digit codes from the phone app",
# "how do I turn a new feature on just for one customer?"). OFFTOPIC: everyday life, other professions, chit-chat,
# and coding words in their everyday sense (back up, store, format, flag, quote, route, table, live, current,
# pattern, join, batch, deadline, reset, shift) ------------------------------------------------------------------
HELDOUT5_PROMPTS = [
    ("the six digit codes from the phone app get refused right before they change", "auth-totp-window", N),
    ("the shop's listing page is twelve megabytes, almost all of it photos", "fe-image-cdn", N),
    ("I keep fixing the same conflict every time I move my long running work onto main", "git-rerere", N),
    ("how do I sign in as somebody else on my own machine to see what they see?", "auth-dev-login", N),
    ("how should I split a huge change so that people actually read it?", "git-small-prs", N),
    ("fresh tokens are rejected because our clocks and the login provider's disagree by a few seconds",
     "auth-jwt-leeway", N),
    ("pandas loop too slow", "perf-pandas-iterrows", N),
    ("uuid4 or uuid7 for the new table?", "db-uuid7-keys", N),
    ("flame graph of a running worker", "perf-py-spy", N),
    ("after someone signs in, keep their basket but give them a new session", "auth-session-rotate-login", N),
    ("the weekend freeze is blocking my staging deploy on friday afternoon", "dep-sync-window", N),
    ("a bad version of the api is live, what's the safe way back to the previous one?",
     "dep-rollback-revert long-release-runbook", N),
    ("we expect lots of visitors next month, how do we find out whether we can cope?", "perf-k6-staging", N),
    ("one failed call to the partner turned into 27 attempts", "http-retry-layers", N),
    ("every worker froze because one call to the pricing engine never came back", "http-grpc-deadline", N),
    ("going deep into the list takes ages, page two thousand needs nine seconds", "perf-keyset-pagination", N),
    ("who needs to approve a change under the migrations folder?", "git-codeowners", N),
    ("bad interpreter after brew upgraded python", "pkg-venv-bad-interpreter", N),
    ("where do we write down why we picked one design over another?", "style-adr", N),
    ("can I just turn off the react hooks lint warning for this one line?", "fe-exhaustive-deps", N),
    ("what should the text say when the app can't reach the database?", "style-error-messages", N),
    ("a user reported a bug, what should I ask them for so I can find it later?", "obs-request-id", N),
    ("is it fine to write the customer's email address to the logs when a payment fails?", "obs-no-pii-logs", N),
    ("the warehouse team wants every shipment ever, can the list endpoint just return all of them?",
     "perf-export-jobs", N),
    ("storybook keeps calling the real backend", "fe-storybook-msw", N),
    ("the async tests pass, but it looks like nothing inside them ever ran", "test-asyncio-strict", N),
    ("during the incident the timelines of two services were an hour apart", "obs-utc-timestamps", N),
    ("a shipper keeps hitting 429 on our public api, can they get more?", "cv-wharf-rate-limits", N),
    ("can a booking go straight from quoted to delivered?", "cv-wharf-booking-states", N),
    ("nobody has reacted to my production deploy request for twenty minutes", "cv-ferryman-prod-approval", N),
    ("one bad message keeps the whole partition stuck", "cv-driftwood-poison", N),
    ("how do I turn a new feature on just for one customer?", "cv-lamplighter-flags", N),
    ("what goes on the first line of a function's description?", "style-google-docstrings", N),
    ("I left a note in the code to come back to this later, what else does it need?", "style-todo-owner", N),
    ("the partner throttles us, how long should our retries wait and how should they spread out?",
     "http-retry-after http-backoff-jitter", N),
    ("switching back to the browser tab reloads the whole catalog every time", "fe-react-query-stale", N),
]

HELDOUT5_OFFTOPIC = [
    "how do I get candle wax off a wooden table?",
    "what's a nice gift for a colleague who is retiring?",
    "my sourdough starter smells like nail polish, is it ruined?",
    "how do nurses hand over patients between the night and day shifts?",
    "what does a court clerk do all day?",
    "how do I ask for a raise without sounding ungrateful?",
    "good morning! how is your day going?",
    "tell me a joke about penguins",
    "what's the plural of octopus?",
    "how do I back up into a tight parking space?",
    "what's the best way to store winter clothes in the attic?",
    "how do I format the address on a wedding invitation envelope?",
    "what does a yellow flag mean in motor racing?",
    "my plumber quoted 400 euros to replace a valve on the boiler, is that a fair price?",
    "what's the quickest route to drive from Lyon to Geneva?",
    "how do I politely tell guests the party is over?",
    "what's the difference between a violin and a viola?",
    "can you help me plan three days in Lisbon?",
    "how do I get a splinter out of my finger?",
    "which houseplants are safe for cats?",
    "how long can cooked rice stay in the fridge?",
    "what should a waiter do when a table complains that the soup is cold?",
    "how do electricians test whether a wire is still live?",
    "how does a lifeguard get a swimmer out of a rip current?",
    "what's an easy pattern for knitting a scarf?",
    "how do carpenters join two boards at a right angle?",
    "how many cookies should one batch of dough make?",
    "what's the deadline for filing a tax return in the UK?",
    "how do I reset my kitchen scale to zero with the bowl on it?",
    "thanks, that's all for today!",
    "what are the symptoms of a pulled hamstring?",
    "how do firefighters decide when a burning building is safe to enter?",
]

# -- round 6: written blind before the next off-topic rule (issue 13: precision >= 0.30 at recall >= 0.55, nothing
# served for off-topic prompts) is run on them, by a helper who had not seen that rule; rounds 1-5 were read only to
# avoid repeating their wording and topics, and nothing is tuned on these. ONTOPIC: mostly lessons no earlier round
# asked for, as developers type them: pasted error lines, terse asks, long rambling asks, everyday words only, and the
# Corvid services by name. OFFTOPIC: everyday life, other professions, small talk, questions to the assistant about
# itself, and above all everyday senses of the store's own terms: the Corvid names (lamplighter, ferryman, skiff,
# wharf, gatehouse, almanac, spyglass) and tags (canary, drain, freeze, circuit breaker, timeout, rotation, lint,
# flaky, soak, redirect, postmortem, on call, fixtures, dashboard, compression, quarantine, VAT, booking, homebrew,
# migration, audience, keyring, cherry picking), plus two language questions no lesson covers ----------------------
HELDOUT6_PROMPTS = [
    ("the async app works against postgres directly, but since we pointed it at the connection pooler every other "
     "query fails", "db-pgbouncer-prepared", N),
    ("customers say their type checker treats our sdk as if it had no annotations at all, though every function is "
     "typed", "pkg-py-typed", N),
    ("both python versions in the matrix upload their junit xml and the second upload fails", "ci-artifact-names", N),
    ("httpx.RemoteProtocolError: Server disconnected without sending a response. only ever the first request after "
     "things were quiet for a while", "http-stale-keepalive", N),
    ("ScopeMismatch: You tried to access the function scoped fixture monkeypatch with a session scoped request object",
     "test-scope-mismatch", N),
    ("the wheel I built on my ubuntu laptop crashes on import on the amazon linux workers", "pkg-manylinux-wheels", N),
    ("mint a token so my local script can call quillbill through gatehouse", "cv-gatehouse-audience", N),
    ("B019 Use of `functools.lru_cache` or `functools.cache` on methods can lead to memory leaks -- is ruff right "
     "about this one?", "cache-lru-method-leak", N),
    ("git diff shows every line of deploy.sh as changed after I saved it on my windows machine", "git-autocrlf", N),
    ("we added a logging sidecar to the api pods and since then the autoscaler doesn't scale at all",
     "dep-hpa-metrics-missing", N),
    ("sign my commits with an ssh key", "git-signed-commits", N),
    ("this PR only touches the CI config, do I still need a changelog entry?", "style-towncrier", N),
    ("celery: one worker hogs all the long report tasks while the rest do nothing", "perf-celery-prefetch", N),
    ("so I'm working on the export endpoint and noticed that inside an async def handler someone calls requests.get "
     "to fetch exchange rates, and under load everything slows down for every request, not just the export, even "
     "the health check p99 goes through the roof. is that related or am I imagining it?", "perf-blocking-in-async", N),
    ("ok so context: we turned httpx up to DEBUG on staging to chase the partner timeouts, and now someone from "
     "security pinged me that they saw bearer tokens in loki?? I thought we had a masking thing for that, what's the "
     "rule here", "auth-no-token-logging", N),
    ("I'm adding 'on_hold' to the order status enum with ALTER TYPE in the same migration that backfills the old "
     "held orders, and it blows up with unsafe use of new value. two migrations? or is there a better way to model "
     "this", "db-enum-alter db-data-migrations-separate", N),
    ("the designer handed me a settings page with six inputs that only have placeholder text, no visible labels, and "
     "now the component tests fail on some axe violation. can I count the placeholder as the label or what do we do",
     "fe-a11y-labels", N),
    ("product wants the weight in the wharf booking response in kilograms instead of pounds. it's a one line change "
     "in the serializer but partners obviously parse that json and I don't know how we ship that without breaking "
     "them, is there a process?", "cv-wharf-api-versioning", N),
    ("I update an order's delivery address and the confirmation page just after still shows the old one, a refresh "
     "fixes it", "db-replica-lag", U),
    ("permission checks are slow, can I memoise can_view(user, doc) in a module-level dict?",
     "cache-per-request-permissions", N),
    ("add a fallback so checkout still shows a stock level when the inventory service is down", "http-circuit-breaker",
     N),
    ("should we remember a 404 from the product lookup as well?", "cache-negative", U),
    ("we wiped everything off the content delivery network during the sale and the servers behind it fell over, how "
     "should we do it next time?", "cache-cdn-surrogate-purge", N),
    ("someone uploaded a package with the same name as one of our internal ones to the public index, could our "
     "installs pick theirs up?", "pkg-private-index", N),
    ("visitors get a blank page once the app is served from a subfolder of our site", "fe-vite-base-path", N),
    ("people on slow phone connections wait ages for the product list because the reply is huge and nothing squeezes it",
     "perf-gzip-middleware", U),
    ("how soon after a SEV2 does the postmortem have to be written?", "long-oncall-handbook", N),
    ("planning the next postgres major version bump, anything to check about extensions first?",
     "long-postgres-upgrade-guide", N),
    ("how long can the e2e job run before CI kills it?", "ci-job-timeouts long-ci-pipeline-guide", N),
    ("make test passes but the tests that need postgres and redis never ran, how do I run those?",
     "long-testing-handbook test-integration-marker", N),
    ("skiff up wharf exits straight away, where do I start?", "cv-skiff-doctor cv-wharf-local", N),
    ("someone set an env var by hand on the quillbill staging deployment and it vanished after the next deploy",
     "cv-almanac-config", N),
    ("support gave me customer 4711 from the invoicing side, how do I find them in wharf?", "cv-customer-ids", N),
    ("the old consumers started rejecting every booking event after my schema change", "cv-driftwood-schema", N),
    ("I added a field to the proto in mooring but wharf's generated _pb2 doesn't have it", "cv-mooring-protos", N),
    ("how do I test both states of booking.split_payments?", "cv-lamplighter-tests", N),
    ("a belgian business customer was charged 21% VAT on their freight invoice and says that's wrong",
     "cv-quillbill-vat", N),
    ("ferryman rolled wharf back, do I still have to revert anything in git?", "cv-ferryman-rollback", N),
    ("how do I see which build of quillbill is running where, from chat?", "long-ferryman-guide", N),
    ("a partner retried POST /v2/bookings after a timeout, will they end up with two bookings?",
     "long-wharf-service-guide", N),
    ("can I call fetch directly in my new page component?", "long-frontend-conventions", N),
]

HELDOUT6_OFFTOPIC = [
    "what did a lamplighter actually do every evening in old London?",
    "did a ferryman on the Thames need a licence in the 1800s?",
    "we're renting a skiff on the lake on saturday, does everyone need a life jacket?",
    "is the old wharf in Bristol worth a visit with kids?",
    "what rooms were usually inside a castle gatehouse?",
    "does the old farmer's almanac predict the winter any better than chance?",
    "where can I buy a brass spyglass as a present for my dad who sails?",
    "my canary stopped singing after we moved house, should I worry?",
    "the kitchen drain smells awful even after boiling water, what else can I try?",
    "can I freeze leftover soup in glass jars without them cracking?",
    "the circuit breaker in the fuse box trips every time the kettle and the microwave run together",
    "how do I get my four year old to sit through a timeout without screaming?",
    "how does crop rotation keep a vegetable patch healthy?",
    "how often should I clean the lint filter in the tumble dryer?",
    "is flaky pastry the same thing as puff pastry?",
    "how long do dried chickpeas need to soak before I cook them?",
    "how do I get my post redirected to my new address when I move house?",
    "what does a pathologist look for during a postmortem examination?",
    "my brother is a junior doctor, how many nights a month is he usually on call?",
    "which premier league fixtures are on this saturday?",
    "an orange light shaped like an engine came on on my car's dashboard, can I keep driving?",
    "do compression socks really help on a long-haul flight?",
    "how long does a dog have to stay in quarantine when we move to Australia?",
    "how do I claim the VAT refund at the airport as a tourist leaving the EU?",
    "how do I find a hotel booking that lets me bring my dog?",
    "my homebrew beer tastes sour after two weeks, did it get infected?",
    "when do swallows start their migration south?",
    "how do stand-up comedians win over a cold audience?",
    "how do I get a new key onto a split keyring without breaking a nail?",
    "is cherry picking season in Kent over by August?",
    "how does a freight forwarder clear customs for a pallet going to Norway?",
    "what's the difference between a list and a tuple in python?",
    "in rust, when do I actually need to write a lifetime annotation?",
    "what model are you, and can you see my other chats?",
    "morning! coffee first, then we start",
    "haha ok that's enough for today, you've been great",
]

# -- round 7: written blind before any rule is run on it (issue 13), by a helper who had not read the rules it will
# check nor the ranker's code; rounds 1-6 were read only to avoid repeating their wording, lessons and words, and
# nothing is tuned on these. ONTOPIC: lessons no earlier round asked for, as pasted error lines, terse asks (3-5 words),
# long rambling asks, everyday words only, multi-lesson tasks, the Corvid services and two long guides. OFFTOPIC:
# everyday senses of store words no earlier round used (rollback, staging, vacuum, snapshot, bundle, budget, seed,
# replica, lag, partition, wheel, layers, prune, waves, engine, chunks, translation, comments, expiry, eviction,
# headers, scope, schedule, matrix, runners, permission, coverage, hypothesis, bisect, poisoning, consistency,
# pickles, stampede, bastion, profile, serials), small talk, questions to the assistant about itself, two other
# professions and a language question ------------------------------------------------------------------------------
HELDOUT7_PROMPTS = [
    # pasted error lines
    ('ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date '
     'with package.json', "fe-pnpm-frozen-lockfile", N),
    ('ERR_PNPM_UNSUPPORTED_ENGINE  Unsupported engine for web@0.1.0: wanted: {"node":">=20.11 <21"} (current: '
     '{"node":"v18.19.0"})', "fe-node-version-nvmrc", N),
    ("the release job fails at the create release step with: Resource not accessible by integration",
     "ci-workflow-permissions", N),
    ("AttributeError: Can't get attribute 'PriceV1' on <module 'app.pricing.models'> -- only from some pods, and only "
     "while the rollout is half done", "cache-no-pickle", N),
    ("Warning  FailedScheduling  0/6 nodes are available: 6 Insufficient cpu. the new replicaset has been Pending for "
     "twenty minutes", "dep-pending-insufficient-cpu", N),
    ("hypothesis.errors.DeadlineExceeded: Test took 412.33ms, which exceeds the deadline of 200.00ms -- CI only, fine "
     "on my laptop", "test-hypothesis-deadline", N),
    ("OSError: [Errno 24] Too many open files, from the sync worker once it has been up for a few hours",
     "http-client-reuse", N),
    ("× No solution found when resolving dependencies: Because fastapi==0.110.0 depends on starlette<0.37 and you "
     "require starlette>=0.37, we can conclude that your requirements are unsatisfiable.",
     "pkg-resolution-impossible", N),
    ("ModuleNotFoundError: No module named 'tomllib' -- a user on python 3.10 got this from our CLI",
     "pkg-python310-compat", N),
    ("ArrowInvalid: Could not open Parquet input source '<Buffer>': Parquet magic bytes not found in footer. the file "
     "is right there in tests/fixtures", "git-lfs-fixtures", N),
    # terse asks
    ("pin third party actions?", "ci-pin-actions-sha", N),
    ("clone the monorepo faster", "git-partial-clone", N),
    ("rehash old bcrypt passwords", "auth-argon2", N),
    ("dependabot PR flood", "ci-dependabot-grouping", N),
    ("how many uvicorn workers?", "perf-uvicorn-workers", N),
    ("find our slowest postgres queries", "perf-sqlalchemy-echo-slow", N),
    # long rambling asks
    ("so the api app in argo has been OutOfSync pretty much all week. it goes green after a sync and flips back the "
     "next time traffic picks up, and the diff only ever shows the replica count. someone on the team suggested "
     "turning self-heal off so it stops nagging us, which feels like the wrong fix. what should we actually do?",
     "dep-argo-outofsync-hpa", N),
    ("weird one. when a product's price changes the handler deletes the cached entry and then commits, and yet maybe "
     "one time in twenty the old price comes back and sticks for an hour. I've checked, the delete definitely runs. "
     "my theory is another request reads the row in between, does the order of those two steps matter?",
     "cache-invalidate-after-commit", N),
    ("every morning at about ten past seven the database gets hammered for a minute or so. it lines up exactly with "
     "an hour after the warm-up job that loads all the products into redis, nothing else runs then, I went through "
     "every cron. is it the expiry? how do I spread that out?", "cache-ttl-jitter", N),
    ("I set replicaCount to 6 in values-prod.yaml and ran make deploy-prod, and the pods are still at 3. helm get "
     "values says 3 as well. the Makefile passes three -f files and I honestly don't know which one wins. on top of "
     "that the env list from prod is gone and only the base variables are in the pod", "dep-helm-values-order", N),
    ("writing tests for the nightly settlement service, which calls session.commit() itself at the end. my tests "
     "pass, but then a bunch of unrelated tests later in the run fail with counts off by a few, as if my rows were "
     "still in the table. I thought every test got rolled back?", "test-transaction-rollback", N),
    # everyday words only
    ("the phone app gets stuck signing people in over and over when they open a page that belongs to another company",
     "auth-401-vs-403", U),
    ("the error tracker shows our production crashes as one long line of minified gibberish",
     "fe-sourcemaps-sentry", U),
    ("there's a page on each server with its live numbers; how do I look at it from my laptop without opening it up "
     "to the whole internet?", "dep-port-forward", U),
    ("reviewers keep asking what rcpt_tmpl and shp_cfg stand for in my branch, should I rename them?",
     "style-no-abbreviations", U),
    ("the person on duty got woken at 3am because the servers were busy with the nightly import, yet no customer "
     "noticed a thing. what should actually wake someone up?", "obs-alert-on-symptoms", U),
    ("once a new option has been switched on for every customer, how long may the old if/else stay around?",
     "style-flag-cleanup", U),
    ("the importer writes a line for every single row it reads, and the bill for keeping all that went through the "
     "roof", "obs-log-volume", N),
    # multi-lesson tasks
    ("I'm adding an admin endpoint that lets support staff change a customer's role. how do we record who changed "
     "what, and where should the permission check live?", "obs-audit-log auth-scopes-dependency", N),
    ("preparing the first release of the sdk from CI: where should the version number live, and how does the "
     "workflow log in to PyPI without a token in the secrets?", "pkg-version-metadata pkg-trusted-publishing", N),
    ("the docker build in CI takes nine minutes even when I only touch one python file. while I'm in the Dockerfile, "
     "which base image should production use?", "ci-buildx-gha-cache pkg-docker-slim long-ci-pipeline-guide", N),
    ("I'm adding a CLI command that exports to a pandas DataFrame, and the CLI already takes over a second just to "
     "print --help. how do I add pandas without making that worse?", "pkg-import-time pkg-extras-lazy", N),
    ("the mobile app downloads the whole catalog again on every refresh even when nothing changed, and turning it "
     "into json takes 300 ms of each request", "cache-etag perf-orjson-responses", N),
    ("my PR updates 14 snapshot files, anything I should do before asking for review?",
     "long-testing-handbook test-snapshot-update", N),
    # single lessons, plain
    ("argo pruned the rabbitmq volumes when I removed the statefulset from the chart and the queue's data is gone. "
     "how do we stop that from happening again?", "dep-argo-prune-pvc", N),
    ("we get a burst of 502s for about ten seconds every time the api rolls out", "dep-prestop-sleep", N),
    ("botocore started emitting a DeprecationWarning and now half the suite fails, can I just ignore warnings in the "
     "pytest config?", "test-warnings-as-errors", N),
    ("the nightly import adds a million rows through session.add and takes forty minutes", "perf-bulk-copy", N),
    ("we deleted half the events table last week and it's still 80 GB on disk", "db-repack-bloat", N),
    ("should the orders service raise HTTPException(404) when an order doesn't exist?", "style-domain-exceptions", N),
    # Corvid
    ("kubectl says forbidden when I try to read wharf's logs on staging, where else can I see them?",
     "cv-skiff-logs", N),
    ("a quillbill invoice went out with the wrong customer address, can I just delete it and issue a new one?",
     "cv-quillbill-invoice-numbers", N),
    ("my endpoint on wharf works locally with no token at all, but on staging every call is rejected. what's "
     "different?", "cv-gatehouse-headers", N),
    # a fact in one section of a long guide
    ("the new postgres cluster has caught up with the old one, is there anything about the id counters I need to do "
     "before we switch over?", "long-postgres-upgrade-guide", N),
    ("the merge queue put my PR in a batch with four others and the batch went red, do I need to do anything?",
     "long-ci-pipeline-guide", N),
]

HELDOUT7_OFFTOPIC = [
    "the supermarket has a rollback on washing powder this week, is it really cheaper than buying the big box?",
    "is home staging worth the money before we put the flat up for sale?",
    "which cordless vacuum copes best with two long-haired cats?",
    "how do I take a sharp snapshot of fireworks on my phone?",
    "should I take the broadband and tv bundle or pay for them separately?",
    "how do I stick to a grocery budget with three teenagers at home?",
    "when should I sow tomato seeds indoors if the last frost is in May?",
    "where can I get a decent replica of a Roman helmet for a school play?",
    "how do I get over jet lag after flying from Tokyo to London?",
    "can I put up a partition wall in a rented flat without asking the landlord?",
    "how long does it take to learn to throw a bowl on a potter's wheel?",
    "how many layers should I wear for skiing at minus ten?",
    "when is the right time to prune an apple tree?",
    "what's a good beach in Portugal to learn to surf on small waves?",
    "my car engine makes a ticking noise for the first minute on cold mornings, should I worry?",
    "how do I cut a pineapple into chunks without wasting half of it?",
    "which English translation of the Odyssey reads best aloud?",
    "how should I answer rude comments under my cooking videos?",
    "my passport expiry is in five months, can I still fly to Thailand?",
    "my landlord gave me an eviction notice with two weeks' warning, is that even legal in Scotland?",
    "how do I practise headers in football without getting a headache?",
    "what spotting scope should I buy for watching seabirds on the coast?",
    "can you help me make a revision schedule for my exams in June?",
    "do I need to watch the Matrix films in order?",
    "the runners on my kitchen drawer keep sticking, should I wax them?",
    "do I need planning permission for a garden shed in England?",
    "does my travel insurance coverage include a skiing accident?",
    "how do I write a hypothesis for my daughter's science fair project on bean plants?",
    "how do I bisect an angle with a compass? it's for my son's homework",
    "my dog ate a square of dark chocolate, is that poisoning or just a tummy ache?",
    "how do I get the right consistency for pancake batter?",
    "how long do homemade pickles keep in the fridge?",
    "what should you do if a herd of cows stampedes toward you on a footpath?",
    "which bastion on the Valletta city walls has the best sunset view?",
    "how do I write a dating profile that doesn't sound boring?",
    "which Dickens novels first came out as serials in magazines?",
    "how does a midwife tell which way round the baby is lying?",
    "what does a structural engineer look for when surveying an old house?",
    "what's the difference between 'affect' and 'effect'?",
    "do you remember what we talked about last week?",
    "are you a person or a program?",
    "what's your favourite colour, if you have one?",
    "hey, rough night, I barely slept",
    "lol you're funnier than my brother",
    "good night, talk tomorrow",
]
