"""Lessons: HTTP clients and retries, caching, auth and tokens. (key, title, gist, body, tags)"""

HTTP = [
    ("http-retry-idempotent",
     "Only retry idempotent requests automatically",
     "GET/PUT/DELETE retry on 502/503/504; POST retries only with an Idempotency-Key.",
     "`acme_http.Client` retries GET, PUT and DELETE on 502, 503, 504 and connection errors. A POST to "
     "/payments was retried after a read timeout and charged a customer twice. POSTs are retried only when they "
     "carry an `Idempotency-Key` header that the server honours.",
     "retries idempotency"),
    ("http-backoff-jitter",
     "Exponential backoff needs full jitter and a cap",
     "sleep = uniform(0, min(cap, base * 2**attempt)); without jitter the workers retried in lockstep.",
     "After the partner outage every worker retried at exactly 1, 2, 4, 8 s and knocked the recovering API over "
     "again. Use full jitter: `random.uniform(0, min(10, 0.2 * 2 ** attempt))`, at most 5 attempts. "
     "`tenacity.wait_random_exponential(multiplier=0.2, max=10)` is the same thing.",
     "backoff jitter tenacity"),
    ("http-retry-after",
     "Honour Retry-After on 429 and 503 responses",
     "The header is either seconds or an HTTP date; parse both and never retry sooner.",
     "GitHub and Stripe send `Retry-After` on 429. Some APIs send seconds (`Retry-After: 30`), others an HTTP "
     "date; parse the latter with `email.utils.parsedate_to_datetime`. Sleep at least that long; our exponential "
     "backoff retried after 200 ms and got the token banned for an hour.",
     "rate-limit 429 retry-after"),
    ("http-timeouts",
     "requests has no default timeout: always pass one",
     "requests.get(url) can block forever; use (connect, read) tuples. httpx defaults to 5 s everywhere.",
     "A worker hung for two days on `requests.get(url)` with no timeout. Always pass `timeout=(3.05, 27)`. httpx "
     "defaults to 5 s for connect, read, write and pool; the export API needs `httpx.Timeout(10, read=120)`. "
     "Ruff rule S113 flags requests calls without a timeout.",
     "timeouts requests httpx"),
    ("http-client-reuse",
     "Reuse one httpx.Client or requests.Session per process",
     "A client per call redoes the TLS handshake and leaks sockets ('Too many open files').",
     "Creating `httpx.Client()` inside the function cost ~60 ms of TLS handshake per call and eventually "
     "\"OSError: [Errno 24] Too many open files\". Create one client at startup (FastAPI lifespan), share it, "
     "and close it on shutdown.",
     "connection-pooling httpx"),
    ("http-circuit-breaker",
     "Wrap calls to the inventory service in the circuit breaker",
     "After 5 failures the breaker opens for 30 s and callers serve the cached stock level.",
     "When inventory was slow every checkout waited on its 10 s timeout and the thread pool filled. Calls go "
     "through `pybreaker.CircuitBreaker(fail_max=5, reset_timeout=30)`; while it is open we serve the cached "
     "stock level and log `inventory.breaker_open`.",
     "circuit-breaker resilience"),
    ("http-corporate-ca",
     "CERTIFICATE_VERIFY_FAILED behind the corporate proxy: point at the CA bundle, never verify=False",
     "The proxy re-signs TLS; export REQUESTS_CA_BUNDLE / SSL_CERT_FILE with the company root.",
     "\"SSL: CERTIFICATE_VERIFY_FAILED ... self-signed certificate in certificate chain\" on office Wi-Fi comes "
     "from the TLS-inspecting proxy. `export REQUESTS_CA_BUNDLE=/etc/ssl/certs/acme-root.pem` (requests) and "
     "`SSL_CERT_FILE` (httpx, pip, uv). Never commit `verify=False`.",
     "tls proxy certificates"),
    ("http-bounded-concurrency",
     "Bound concurrent outbound requests with a semaphore",
     "asyncio.gather over thousands of URLs opened thousands of sockets and got us banned.",
     "`asyncio.gather(*(fetch(u) for u in urls))` over 5,000 URLs opened 5,000 connections at once and the "
     "partner blocked our IP. Limit with `asyncio.Semaphore(20)` around each call or `httpx.Limits("
     "max_connections=20)`; the partner allows 25 concurrent requests.",
     "asyncio concurrency rate-limit"),
    ("http-stream-download",
     "Stream large downloads to disk instead of reading .content",
     "r.content on a 3 GB export loaded it all into memory and the pod was OOMKilled.",
     "Use `with client.stream(\"GET\", url) as r:` and write `r.iter_bytes(1 << 20)` to a temp file, then move "
     "it into place. `response.content` on the nightly 3 GB export pulled everything into memory.",
     "streaming memory downloads"),
    ("http-webhook-raw-body",
     "Verify webhook signatures against the raw request body",
     "Parsing and re-serialising JSON changes the bytes; Stripe's check then fails.",
     "Stripe verification failed with \"No signatures found matching the expected signature for payload\" "
     "because the handler used the parsed model and re-dumped it. Use `payload = await request.body()` and "
     "`stripe.Webhook.construct_event(payload, sig_header, secret)`; parse only afterwards.",
     "webhooks signatures stripe"),
    ("http-cursor-pagination",
     "Follow the cursor, not page numbers, when paging a partner API",
     "Offset paging skipped records that were inserted while we iterated.",
     "The sync job used `?page=N` and lost records whenever new ones were inserted mid-run. The partner API "
     "returns `next_cursor`; loop until it is null. For APIs with a `Link: <...>; rel=\"next\"` header, follow it "
     "via `response.links[\"next\"][\"url\"]`.",
     "pagination api sync"),
    ("http-user-agent",
     "Send a descriptive User-Agent on outbound calls",
     "The geocoding provider returns 403 for the default python-requests agent.",
     "Set `User-Agent: acme-sync/1.4 (+ops@acme.example)` on the shared client. The geocoder blocks "
     "`python-requests/2.x` with a 403 and an HTML page, and partners need the contact address to reach us "
     "before they block us.",
     "headers user-agent"),
    ("http-retry-layers",
     "Don't stack retries at several layers",
     "SDK x client x job runner retries multiplied into 27 attempts; retry in one place only.",
     "The boto-style SDK retried 3 times, our client 3 times and the task runner 3 times: 27 attempts per "
     "failure and a self-inflicted outage. Retry only in the outermost client; set the SDK's `max_retries=0` and "
     "make Celery autoretry only for non-HTTP errors.",
     "retries amplification"),
    ("http-stale-keepalive",
     "'RemoteDisconnected: Remote end closed connection without response' from stale pooled connections",
     "The load balancer drops idle connections after 60 s; expire them sooner in the client pool.",
     "The upstream load balancer closes idle keep-alive connections after 60 s and our pool reused them after "
     "90 s, giving `RemoteDisconnected` / `httpx.RemoteProtocolError: Server disconnected` on the first request "
     "after a quiet period. Set `httpx.Limits(keepalive_expiry=30)` and retry once on that error for idempotent "
     "calls.",
     "keepalive connection-pooling"),
    ("http-no-proxy",
     "Internal calls going through the HTTP proxy: set NO_PROXY for cluster and internal domains",
     "requests and httpx honour proxy env vars by default (trust_env).",
     "Calls to `orders.svc.cluster.local` timed out because `HTTPS_PROXY` was set in the image and they went via "
     "the egress proxy. Set `NO_PROXY=.svc.cluster.local,.acme.internal,localhost,127.0.0.1`; clients honour it "
     "through `trust_env=True`.",
     "proxy env networking"),
    ("http-json-decode-html",
     "A JSONDecodeError from an API usually means you received an HTML error page",
     "Check the status and log the first 200 characters before calling .json().",
     "\"json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\" came from a 502 HTML page "
     "returned by the gateway. Call `response.raise_for_status()` first and include `response.status_code` and "
     "`response.text[:200]` in the error.",
     "errors debugging json"),
    ("http-grpc-deadline",
     "gRPC calls need an explicit deadline",
     "Without timeout= a hung pricing-engine held every worker thread; expect DEADLINE_EXCEEDED and handle it.",
     "`stub.GetQuote(request)` with no deadline waited forever when pricing-engine hung, and all 40 threads "
     "blocked. Pass `timeout=2.0` on every call and handle `grpc.StatusCode.DEADLINE_EXCEEDED` as retryable once.",
     "grpc timeouts"),
    ("http-openapi-codegen",
     "Regenerate the partner API client from its spec; never hand-edit generated code",
     "make gen-clients runs openapi-python-client into clients/partner_api/; edits are overwritten.",
     "A hand fix in `clients/partner_api/models/shipment.py` disappeared on the next regeneration. Update "
     "`specs/partner.yaml`, run `make gen-clients`, and put custom behaviour in a wrapper module outside the "
     "generated package.",
     "openapi codegen clients"),
    ("http-redirect-post",
     "A 301/302 redirect turns a POST into a GET",
     "After the API moved to https the redirected POST arrived as GET and returned 405.",
     "The partner moved its API to https and answered our http POST with 301; requests followed it as a GET, "
     "and we got \"405 Method Not Allowed\". Use the final https URL. Only 307/308 preserve the method and body.",
     "redirects http"),
]

CACHING = [
    ("cache-stampede",
     "Cache stampede when a hot key expires: recompute under a lock",
     "At expiry hundreds of requests recomputed the same aggregate; one recomputes, the rest serve stale.",
     "When `category:v2:top` expired, 400 concurrent requests recomputed the same aggregate and Postgres fell "
     "over. Use `cache.get_or_set_locked(key, fn, ttl=300)`: a Redis `SET NX` lock with a 10 s expiry lets one "
     "request recompute while the others serve the stale copy kept under `key:stale`.",
     "redis stampede locking"),
    ("cache-ttl-jitter",
     "Add jitter to TTLs when setting many keys at once",
     "50k keys warmed with ttl=3600 all expired in the same second.",
     "The warm-up job wrote 50,000 product keys with `ttl=3600`, so they all expired together an hour later "
     "and load spiked. Use `ttl = 3600 + random.randint(0, 300)` for bulk writes.",
     "ttl redis expiry"),
    ("cache-key-version",
     "Put a schema version in cache keys",
     "Adding a field to the cached Product broke deserialisation of old entries; keys are product:v3:{id}.",
     "After adding `currency` to the serialised Product, old cache entries raised `KeyError: 'currency'` on read "
     "during the rollout. Keys carry a version (`product:v3:{id}`); bump it whenever the cached shape changes, "
     "and let old keys expire.",
     "serialization keys versioning"),
    ("cache-invalidate-after-commit",
     "Invalidate the cache after the transaction commits, not before",
     "Deleting the key before commit let a concurrent reader put the old row back.",
     "The handler deleted `product:v3:{id}`, then committed. In between, another request read the old row from "
     "the database and cached it again, so the stale price stayed for an hour. Register the delete with "
     "`transaction.on_commit(...)` (Django) or a SQLAlchemy `after_commit` session event.",
     "invalidation consistency"),
    ("cache-redis-eviction-sessions",
     "Users logged out at random: cache and sessions shared one Redis with allkeys-lru",
     "Eviction removed session keys under memory pressure; sessions now live on a separate noeviction Redis.",
     "Under memory pressure `allkeys-lru` evicted session keys along with cache entries and people were "
     "signed out mid-checkout. Sessions moved to `redis-sessions:6380` with `maxmemory-policy noeviction`; the "
     "cache Redis stays `allkeys-lru` with `maxmemory 2gb`.",
     "redis eviction sessions"),
    ("cache-lru-method-leak",
     "functools.lru_cache on a method keeps every instance alive",
     "The cache holds self; memory grew per request. Cache module-level functions or use cached_property.",
     "`@lru_cache` on `PriceService.rate()` stored `self` in the cache key, so every request's service object "
     "stayed reachable and memory grew until OOM. Ruff B019 flags it. Use a module-level function, "
     "`functools.cached_property`, or `cachetools` with an explicit key.",
     "python memory lru_cache"),
    ("cache-cdn-surrogate-purge",
     "Purge the CDN by surrogate key after a content change, never purge everything",
     "Fastly Surrogate-Key per product; purge_all sends the full load to origin.",
     "Responses carry `Surrogate-Key: product-123 category-9`. The CMS webhook calls `POST "
     "/service/{id}/purge/product-123`. A `purge_all` during the sale sent all traffic to origin at once and "
     "took it down.",
     "cdn fastly purge"),
    ("cache-control-assets",
     "Hashed assets are immutable; index.html must be no-cache",
     "Long max-age only for /assets/*-[hash].js; a cached index.html references chunks that no longer exist.",
     "`Cache-Control: public, max-age=31536000, immutable` only for hashed files under `/assets/`. `index.html` "
     "is served with `no-cache`; when it was cached for an hour, users got an old page pointing at deleted "
     "chunk files after each release.",
     "cache-control headers frontend"),
    ("cache-negative",
     "Cache not-found results briefly too",
     "Bots requesting non-existent SKUs bypassed the cache and hit the database every time.",
     "Crawlers requested thousands of made-up SKUs; each miss went to Postgres because only hits were cached. "
     "Store a sentinel (`NOT_FOUND`) with a 60 s TTL for misses, and don't cache 5xx errors at all.",
     "negative-cache bots"),
    ("cache-redis-scan-not-keys",
     "Never run KEYS * on production Redis; use SCAN",
     "KEYS blocked the single-threaded server for seconds with 12M keys.",
     "`KEYS product:*` froze Redis for 3 s and every request timed out. Use `redis-cli --scan --pattern "
     "'product:v2:*' | xargs -n 500 redis-cli unlink` or `scan_iter` in Python. `FLUSHALL` is disabled via "
     "`rename-command` in prod.",
     "redis ops scan"),
    ("cache-dummy-backend-local",
     "Debugging stale data locally? Switch the cache off with CACHE_BACKEND=dummy",
     "Rule the cache out first; the dummy backend makes every get a miss.",
     "Half an hour went into a 'bug' that was a cached value from yesterday's local Redis. Set "
     "`CACHE_BACKEND=dummy` in `.env` to make every lookup a miss, or `docker compose exec redis redis-cli "
     "flushdb` for the local instance only.",
     "local debugging cache"),
    ("cache-no-pickle",
     "Don't pickle objects into a shared cache; use JSON or msgpack",
     "During a rolling deploy old pickles referenced a moved class: Can't get attribute 'PriceV1'.",
     "Pickled objects carry the import path of their class. When `PriceV1` moved modules, pods running the new "
     "version failed with \"AttributeError: Can't get attribute 'PriceV1' on <module ...>\" while old pods kept "
     "writing. Cache plain dicts serialised with orjson or msgpack, with a versioned key.",
     "serialization pickle"),
    ("cache-per-request-permissions",
     "Memoise permission checks per request, never globally",
     "A module-level cache served one user's permissions to another; use a contextvar-scoped dict.",
     "A global dict keyed by object id cached permission results and showed user A's documents to user B. "
     "Permission memoisation lives in a `ContextVar` reset by middleware at the start of each request.",
     "permissions contextvars security"),
    ("cache-redis-socket-timeout",
     "Give the Redis client a short socket timeout so a slow Redis degrades instead of hanging",
     "socket_timeout=0.2 and fall through to the database on TimeoutError.",
     "When the Redis node was failing over, requests hung on the default (no) socket timeout. Use "
     "`redis.Redis(socket_timeout=0.2, socket_connect_timeout=0.2)` and treat `redis.exceptions.TimeoutError` "
     "or `ConnectionError` as a miss.",
     "redis timeouts resilience"),
    ("cache-hit-ratio-metric",
     "Emit cache hit and miss counters per key prefix",
     "cache_requests_total{prefix,result} revealed a key that embedded a timestamp and never hit.",
     "Every cache call increments `cache_requests_total{prefix=\"product:v3\", result=\"hit|miss\"}`. A hit ratio "
     "of 20% on one prefix exposed a key that included `now()`, so it never matched. Keep the prefix label "
     "coarse: never the full key.",
     "metrics hit-ratio"),
    ("cache-etag",
     "Return ETags on the catalog API and answer If-None-Match with 304",
     "Conditional requests cut catalog egress by about 70%.",
     "The catalog endpoints compute a weak ETag from `updated_at` and the item count and return 304 Not Modified "
     "when `If-None-Match` matches. Mobile clients send it automatically; egress dropped ~70%.",
     "etag http conditional"),
    ("cache-warm-after-deploy",
     "Warm the price cache before shifting traffic to a new release",
     "A cold cache after deploy made pages slow for ten minutes; warm-cache runs as a PostSync hook.",
     "Each release flushed the versioned price keys and the first ten minutes of traffic computed them from "
     "scratch. The `warm-cache` Job runs as an Argo PostSync hook and fills the top 5,000 products before the "
     "canary gets more than 10%.",
     "warmup deploy prices"),
    ("cache-crossslot",
     "CROSSSLOT errors on Redis Cluster: use hash tags for keys used together",
     "Multi-key commands need keys in the same slot; wrap the shared part in braces.",
     "`MGET cart:42 cart_items:42` failed with \"CROSSSLOT Keys in request don't hash to the same slot\" after "
     "moving to Redis Cluster. Name keys `{user:42}:cart` and `{user:42}:cart_items` so the braces decide the slot.",
     "redis cluster"),
]

AUTH = [
    ("auth-jwt-leeway",
     "JWT 'The token is not yet valid (iat)': allow a little clock leeway",
     "Clock skew between the IdP and our pods rejects fresh tokens; decode with leeway=30.",
     "PyJWT raised `ImmatureSignatureError: The token is not yet valid (iat)` for tokens minted a second ago, "
     "because a node's clock was slightly behind the IdP's. Decode with `jwt.decode(..., leeway=30)` and make "
     "sure chrony runs on the nodes.",
     "jwt clock-skew"),
    ("auth-jwks-refetch",
     "Cache the JWKS but refetch when a token has an unknown kid",
     "After the IdP rotated keys, verification failed until restart; PyJWKClient refetches on a miss.",
     "The service cached the JWKS at startup forever; after key rotation every login failed with \"Unable to "
     "find a signing key that matches\". Use `PyJWKClient(jwks_url, cache_keys=True, lifespan=3600)`, which "
     "refetches when it sees an unknown `kid`.",
     "jwks keys rotation jwt"),
    ("auth-refresh-rotation-race",
     "Two tabs refreshing at once log the user out: serialise token refresh",
     "Refresh-token rotation treats the second use as reuse and revokes the whole family.",
     "The IdP rotates refresh tokens and revokes the token family when an old one is reused. Two tabs refreshed "
     "simultaneously, the second looked like reuse, and the user was logged out. The SPA takes a lock via "
     "`navigator.locks.request('token-refresh', ...)` and shares the new token over BroadcastChannel; the IdP "
     "has a 10 s reuse grace.",
     "oauth refresh spa"),
    ("auth-client-credentials-audience",
     "Machine-to-machine tokens: client credentials grant with the audience set",
     "401 'invalid audience' means the token was minted without the target API's audience.",
     "Service tokens come from `POST /oauth/token` with `grant_type=client_credentials` and "
     "`audience=https://api.acme.internal`. Without the audience the API rejects them with 401 invalid_audience. "
     "Cache the token until 60 s before `exp`; don't fetch one per request.",
     "oauth m2m audience"),
    ("auth-samesite-lax",
     "Session lost on the OAuth callback: SameSite=Strict drops the cookie on cross-site redirects",
     "The session cookie uses SameSite=Lax, Secure and HttpOnly.",
     "After the IdP redirected back, the login state was gone and users looped on the login page, because "
     "`SameSite=Strict` cookies are not sent on a cross-site navigation. Use `SameSite=Lax; Secure; "
     "HttpOnly` for the session cookie.",
     "cookies samesite oauth"),
    ("auth-csrf-header",
     "The SPA must send the csrftoken cookie back in the X-CSRFToken header",
     "403 'CSRF Failed: CSRF token missing' on POST came from a new fetch wrapper without the header.",
     "The new `apiFetch` wrapper dropped the header and every POST got \"403 CSRF Failed: CSRF token missing\". "
     "Read the `csrftoken` cookie and send it as `X-CSRFToken`, with fetch's credentials option set to `include`. GET requests "
     "don't need it.",
     "csrf django spa"),
    ("auth-argon2",
     "Hash passwords with argon2id and rehash on login when parameters change",
     "Never roll your own hashing; passlib's needs_update triggers the rehash.",
     "Passwords use `argon2id` through `passlib.context.CryptContext(schemes=[\"argon2\", \"bcrypt\"], "
     "deprecated=\"auto\")`. Old bcrypt hashes still verify; on a successful login `ctx.needs_update(hash)` "
     "tells you to store a fresh argon2 hash.",
     "passwords argon2 hashing"),
    ("auth-scopes-dependency",
     "Check scopes in the route dependency, not inside the handler body",
     "A handler forgot its manual check; Security(require_scopes, scopes=[...]) enforces it declaratively.",
     "An endpoint that checked `\"orders:write\" in user.scopes` inside the body lost the check in a refactor. "
     "Declare it: `user: User = Security(require_scopes, scopes=[\"orders:write\"])`. A test walks the app's "
     "routes and fails on any route without a scope dependency.",
     "fastapi authorization scopes"),
    ("auth-api-keys-hashed",
     "Store only a hash of API keys and show the key once",
     "Keep sha256 of the key plus a short visible prefix for lookup and display.",
     "Customer API keys are shown once at creation. The table stores `sha256(key)` and the first 8 characters as "
     "`display_prefix` for lookup and for the settings page. Support can't recover a key; the customer creates "
     "a new one and revokes the old one.",
     "api-keys hashing"),
    ("auth-dev-login",
     "Log in locally as any user with make dev-login",
     "The bypass endpoint exists only when ENV=development and is compiled out of production builds.",
     "`make dev-login USER=alice@example.com` calls `/_dev/login` and prints a session cookie you can paste into "
     "the browser. The route is registered only when `ENV=development`; a test asserts it is absent from the "
     "production app.",
     "local dev login"),
    ("auth-redirect-uri-mismatch",
     "'redirect_uri_mismatch' means the exact callback URL is not registered",
     "Scheme, port and trailing slash all count; preview environments use the registered wildcard.",
     "The IdP compares the callback URL byte for byte: `http://localhost:3000/auth/callback/` with a trailing "
     "slash is a different URL. Preview apps use `https://pr-<n>.preview.acme.dev/auth/callback`, covered by "
     "the wildcard entry on the preview client only.",
     "oidc redirect oauth"),
    ("auth-no-token-logging",
     "Never log Authorization headers or tokens",
     "The masking filter only covers the acme logger; third-party debug logs print headers verbatim.",
     "Setting `httpx` to DEBUG printed full bearer headers into Loki. Our masking filter is attached only to the "
     "`acme` logger. Keep third-party loggers at INFO in production and never include `request.headers` in log "
     "fields.",
     "logging secrets tokens"),
    ("auth-totp-window",
     "TOTP checks accept one step of drift (valid_window=1)",
     "Phones drift by a few seconds; a strict window rejected valid codes near the 30 s boundary.",
     "`pyotp.TOTP(secret).verify(code, valid_window=1)` accepts the previous and next 30 s step. Also store the "
     "last accepted step per user and refuse a reuse of the same code.",
     "mfa totp 2fa"),
    ("auth-session-rotate-login",
     "Rotate the session id at login to prevent session fixation",
     "Keep the cart by copying data into a fresh session rather than reusing the anonymous id.",
     "The pen test showed the anonymous session id survived login. Call `request.session.cycle_key()` (Django) "
     "or issue a new id in our middleware on login and privilege changes; copy the cart across.",
     "sessions security fixation"),
    ("auth-role-change-delay",
     "Role changes take up to five minutes: permissions live in the access token claims",
     "Access tokens last 5 min; to apply a revocation now, revoke the user's sessions.",
     "Removing someone's admin role did not take effect at once because roles are embedded in the 5-minute "
     "access token. For urgent changes call `POST /admin/users/{id}/revoke-sessions`, which invalidates the "
     "refresh tokens and forces a new login.",
     "rbac roles jwt"),
    ("auth-cors-credentials",
     "CORS with credentials can't use a wildcard origin",
     "When the request includes credentials, Access-Control-Allow-Origin must echo an explicit allowed origin.",
     "The browser refused with \"The value of the 'Access-Control-Allow-Origin' header in the response must not "
     "be the wildcard '*' when the request's credentials mode is 'include'\". List the origins in "
     "`CORS_ALLOWED_ORIGINS` and send `Access-Control-Allow-Credentials: true`.",
     "cors browser credentials"),
    ("auth-github-app-token",
     "GitHub App installation tokens expire after one hour",
     "Mint a fresh installation token per job instead of caching one across long runs.",
     "The repo-sync job cached its installation token and failed with \"401 Bad credentials\" after 60 minutes. "
     "Mint it per job from the app's private key (`POST /app/installations/{id}/access_tokens`) and refresh when "
     "less than 5 minutes remain.",
     "github app tokens"),
    ("auth-ssh-proxyjump",
     "Reach private hosts through the bastion with ProxyJump, not agent forwarding",
     "ssh -A exposes your agent to the bastion; ProxyJump keeps keys local.",
     "Use `Host *.acme.internal` with `ProxyJump bastion.acme.net` in `~/.ssh/config`. Agent forwarding (`ssh "
     "-A`) lets anyone with root on the bastion use your keys while you are connected.",
     "ssh bastion"),
    ("auth-401-vs-403",
     "Return 401 for missing or invalid credentials, 403 for insufficient permission",
     "Clients refresh tokens on 401 only; a 401 for a permission problem made them loop.",
     "The mobile client retries after a token refresh on 401. Returning 401 for 'not your organisation' put it "
     "in a refresh loop. Use 403 for authenticated-but-not-allowed, and 404 when even the existence of the "
     "resource must not leak.",
     "http status api"),
    ("auth-cli-keyring",
     "The CLI keeps its tokens in the OS keyring, not in a plaintext config file",
     "keyring.set_password under the service name acme-cli; headless machines fall back to an env var.",
     "`acme login` stores the refresh token with `keyring.set_password(\"acme-cli\", profile, token)`. On "
     "headless CI machines without a keyring backend, use `ACME_TOKEN` instead; never write tokens to "
     "`~/.config/acme/config.toml`.",
     "cli keyring"),
]
