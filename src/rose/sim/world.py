"""The simulated knowledge world: families of facts, lessons that state them, and tasks that need them.

A fact is recognised in any text by its *key*, a phrase that every statement of it contains verbatim (the verbose
form in a level-0 lesson, the terse form a compression keeps, a dropped claim, a probe's approach). That is the
whole of the simulation's "understanding": a simulated agent succeeds iff every fact its task needs is in the text
it was served, and a simulated judge answers every question by which facts a text holds.

Each family's level-0 lesson holds a core fact (every task of the family needs it), specific facts needed with
falling popularity (the rare ones are what compression drops and descent recovers), filler (examples, background)
and, per fact, a rationale sentence. A *gap* fact is needed by some tasks but stated in no lesson: nothing can
rescue those, which is what a knowledge gap is. Bridge facts are stated in two families' lessons; tasks that cross
two families need them, which is what makes lessons used together (and merged).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Fact:
    key: str          # verbatim in every statement of the fact
    terse: str        # the fact alone
    why: str          # a rationale sentence (what a compression drops first)
    symptom: str      # what goes wrong when a task needs the fact and the agent lacks it
    topic: str        # how a task prompt mentions it
    kind: str = "fact"

    @property
    def verbose(self) -> str:
        return f"{self.terse} {self.why}"


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    tags: tuple[str, ...]
    ask: str                      # how a prompt about this family starts
    core: Fact
    facts: tuple[Fact, ...]       # most popular first
    gap: Fact                     # needed sometimes, in no lesson
    filler: tuple[str, ...]

    def lesson_body(self) -> str:
        lines = [f"- {self.core.verbose}"] + [f"- {f.verbose}" for f in self.facts] + [f"{x}" for x in self.filler]
        return "\n".join(lines)

    @property
    def all_facts(self) -> tuple[Fact, ...]:
        return (self.core, *self.facts)


@dataclass(frozen=True)
class Trap:
    """A harmful lesson: advice that sounds right and contradicts facts the work needs. An agent served a lesson
    stating the trap's key follows it on any task that needs one of the facts it `spoils`, and that task fails with
    the trap's symptom, whatever else the block says (rose.credit must find and withdraw such a lesson)."""

    key: str                      # verbatim in the harmful lesson's text
    spoils: tuple[str, ...]       # fact keys it contradicts
    symptom: str
    title: str
    body: str
    tags: tuple[str, ...] = ()


FAST_TESTS = Trap(
    "plain `python -m pytest -x`",
    ("`uv run pytest`", "must be reversible"),
    "the run followed the advice to skip the uv environment and the down migrations, and failed",
    "Faster local test runs",
    "- To iterate quickly, run the tests with plain `python -m pytest -x`; the uv wrapper only adds start-up time.\n"
    "- While iterating on a schema change, skip writing down migrations until the change settles; they can be added "
    "before the release.",
    ("tests", "database", "speed"))


@dataclass(frozen=True)
class Task:
    id: str
    family: str                   # the main family ("" for generic work)
    prompt: str
    needs: tuple[str, ...]        # fact keys
    kind: str = "family"          # family | cross | gap | generic


def _f(key: str, terse: str, why: str, symptom: str, topic: str, kind: str = "fact") -> Fact:
    assert key in terse, key
    return Fact(key, terse, why, symptom, topic, kind)


PORT_5433 = _f("Postgres on port 5433", "The test database is Postgres on port 5433, not 5432.",
               "Port 5432 is usually a developer's own database.",
               "the tests connected to the developer's own database on port 5432", "the test database", "parameter")
FLAGS_OFF = _f("feature flags default to off", "New feature flags default to off in production.",
               "An unfinished checkout flow once went live because a flag defaulted on.",
               "an unfinished feature went live for every user", "feature flags", "warning")

FAMILIES: tuple[Family, ...] = (
    Family(
        "retry", "Retrying remote calls", ("retry", "http", "s3"), "Work on the retry wrapper",
        _f("only idempotent calls", "Retry only idempotent calls; never retry a POST that creates something.",
           "A retried order POST once created duplicate orders.", "a retried POST created duplicate records",
           "retries", "condition"),
        (
            _f("backoff of 100ms, 400ms, 1.6s", "Use a backoff of 100ms, 400ms, 1.6s with 25% jitter.",
               "The gateway allows 10 requests per second per client and this spacing stays under it.",
               "the gateway throttled the retries with HTTP 429", "retry timing", "parameter"),
            _f("parse the S3 error body", "S3 can answer HTTP 200 with an error document: parse the S3 error body, "
               "do not trust the status code.", "Multipart completions are the usual culprit.",
               "an upload that got HTTP 200 with an error document was treated as success", "S3 uploads",
               "warning"),
            _f("retry budget of 3 attempts", "Give up after a retry budget of 3 attempts and raise the last error.",
               "Unbounded retries once hid a dead dependency for an hour.",
               "a request retried forever and hung the worker", "giving up", "parameter"),
            _f("honour Retry-After", "When a response carries a Retry-After header, honour Retry-After over the "
               "computed backoff.", "Payment providers ban clients that ignore it.",
               "the retries ignored the server's Retry-After header and the client was banned", "server hints",
               "condition"),
            _f("overall deadline of 30 seconds", "Bound the whole retry loop by an overall deadline of 30 seconds.",
               "The caller's own HTTP timeout is 35 seconds.", "the retry loop outlived the caller's timeout",
               "deadlines", "parameter"),
            _f("Idempotency-Key header", "Send an Idempotency-Key header on payment calls so a retry cannot "
               "double-charge.", "The key is the order id plus the purpose of the call.",
               "a payment was charged twice after a retry", "payment calls", "step"),
        ),
        _f("circuit breaker after 5 failures", "Open a circuit breaker after 5 failures in a minute.", "",
           "an outage cascaded because nothing stopped calling the failing service", "outages"),
        ("Example: the thumbnail service is retried, the order service is not.",
         "Background: these rules came out of the March incident review."),
    ),
    Family(
        "testing", "Running the test suite", ("tests", "pytest"), "Fix the test suite",
        _f("`uv run pytest`", "Run the tests with `uv run pytest`; plain pytest cannot import the package.",
           "The package is only installed inside the uv environment.",
           "the test run failed with ModuleNotFoundError for the package", "the test run", "step"),
        (
            _f("`-m integration`", "Integration tests only run with `-m integration` and need Docker.",
               "They are skipped by default so the unit run stays under a minute.",
               "the integration tests were silently skipped", "integration tests", "step"),
            PORT_5433,
            _f("fake clock fixture", "Never call time.sleep in tests; use the fake clock fixture.",
               "Real sleeps made the suite slow and flaky.", "the tests became slow and flaky because of real "
               "sleeps", "timing in tests", "warning"),
            _f("`--snapshot-update`", "Refresh snapshots with `--snapshot-update`, then review the diff.",
               "Hand-edited snapshots drift from what the renderer produces.",
               "the snapshot tests failed after an intended change", "snapshots", "step"),
            _f("TZ=UTC", "The tests assume TZ=UTC; set it in CI and locally.",
               "Date assertions are written in UTC.", "date tests failed off by one hour", "dates in tests",
               "parameter"),
            _f("random test order", "The suite runs in random test order, so no test may depend on another "
               "test's state.", "pytest-randomly is enabled in the config.",
               "a test passed alone and failed in the full run", "test isolation", "condition"),
        ),
        _f("suite across 4 CI workers", "Shard the suite across 4 CI workers.", "",
           "CI timed out after 60 minutes", "CI time"),
        ("Example: `uv run pytest tests/api -m integration` runs the API integration tests.",
         "Background: the suite has about 2,400 tests."),
    ),
    Family(
        "deploy", "Deploying the web app", ("deploy", "argo", "release"), "Ship the release",
        _f("Argo Rollouts", "Deploys go through Argo Rollouts; never kubectl apply to production.",
           "A manual apply once bypassed the canary.",
           "a manual kubectl apply bypassed the rollout and broke production", "the deploy", "warning"),
        (
            _f("canary at 10% for 15 minutes", "Start with a canary at 10% for 15 minutes before promoting.",
               "Error budgets are measured over 15-minute windows.", "a bad build reached all users at once",
               "the canary", "parameter"),
            _f("dedupe key is the git SHA", "The rollout dedupe key is the git SHA, so rebuilding one commit does "
               "not redeploy.", "Image tags are mutable, SHAs are not.", "the rebuilt image was never deployed",
               "redeploys", "fact"),
            _f("migrations run before the rollout", "Database migrations run before the rollout starts, as their "
               "own job.", "New pods expect the new schema.", "new pods crashed on a missing column",
               "migrations in a deploy", "step"),
            _f("`kubectl argo rollouts undo`", "Roll back with `kubectl argo rollouts undo`, not by redeploying an "
               "old tag.", "An old tag may have been rebuilt since.", "the rollback redeployed a stale image",
               "rollbacks", "step"),
            FLAGS_OFF,
            _f("deploy freeze after 16:00 on Fridays", "There is a deploy freeze after 16:00 on Fridays.",
               "Weekend on-call is one person.", "a Friday evening deploy paged the on-call", "release timing",
               "condition"),
        ),
        _f("base image digest", "Pin the base image digest.", "",
           "an upstream base image change broke the build", "base images"),
        ("Example: the March release went 10%, 50%, 100% over an hour.",
         "Background: the rollout controller runs in the platform cluster."),
    ),
    Family(
        "cache", "Caching rules", ("cache", "redis", "ttl"), "Change the caching",
        _f("tenant id in every cache key", "Put the tenant id in every cache key; a key without it leaks data "
           "across tenants.", "This was a reportable incident once.", "one tenant saw another tenant's data",
           "cache keys", "warning"),
        (
            _f("profiles for 5 minutes", "Cache user profiles for 5 minutes.",
               "Profile edits are rare and users expect them within minutes.", "profile edits took an hour to show",
               "profile caching", "parameter"),
            FLAGS_OFF,
            _f("flags for 30 seconds", "Cache feature flags for 30 seconds, never longer.",
               "A longer TTL made a rollback take 10 minutes.", "a flag rollback took 10 minutes to take effect",
               "flag caching", "parameter"),
            _f("Invalidate on write", "Invalidate on write; do not wait for the TTL.",
               "Users reload right after saving.", "users saw stale values right after saving", "invalidation",
               "step"),
            _f("single-flight lock", "Guard expensive misses with a single-flight lock to stop stampedes.",
               "The pricing query takes 2 seconds cold.", "a cache miss stampede overloaded the database",
               "cache misses", "step"),
            _f("Redis db 2", "The cache lives in Redis db 2; db 0 belongs to the job queue.",
               "They share one Redis instance.", "flushing the cache wiped the job queue", "the cache store",
               "parameter"),
        ),
        _f("values over 1 MB", "Compress values over 1 MB.", "",
           "Redis memory filled up with large values", "large values"),
        ("Example: the pricing page caches its query for 60 seconds per tenant.",
         "Background: Redis runs with maxmemory-policy allkeys-lru."),
    ),
    Family(
        "database", "Working with the database", ("database", "postgres", "migrations"), "Change the database",
        _f("must be reversible", "Every migration must be reversible: write the down step too.",
           "Rollbacks run the down steps.", "a failed deploy could not be rolled back because a migration had no "
           "down step", "migrations", "step"),
        (
            _f("the read replica", "Reports query the read replica, never the primary.",
               "Report queries scan whole tables.", "a report query slowed the primary", "reports", "condition"),
            PORT_5433,
            _f("statement timeout of 5s", "Queries run with a statement timeout of 5s; batch anything longer.",
               "Long transactions block vacuum.", "a long query was cancelled by the statement timeout",
               "long queries", "parameter"),
            _f("UUIDv7 primary keys", "New tables use UUIDv7 primary keys.", "The sync job orders by key.",
               "the new table used integer keys and broke the sync job", "new tables", "fact"),
            _f("CREATE INDEX CONCURRENTLY", "Add indexes with CREATE INDEX CONCURRENTLY on big tables.",
               "A plain CREATE INDEX locks writes.", "adding an index locked the orders table", "indexes", "step"),
            _f("soft-deleted with deleted_at", "Rows are soft-deleted with deleted_at; every query must filter "
               "it.", "Hard deletes broke the audit trail.", "deleted rows reappeared in listings",
               "deletes", "warning"),
        ),
        _f("events table by month", "Partition the events table by month.", "",
           "the events table outgrew the disk", "the events table"),
        ("Example: the orders table has 80 million rows.",
         "Background: Postgres 16 with pgbouncer in transaction mode."),
    ),
)

POPULARITY = (0.32, 0.24, 0.16, 0.12, 0.09, 0.07)   # of a family's specific facts, most popular first
TASK_MIX = {"family": 0.80, "cross": 0.09, "gap": 0.04, "generic": 0.07}
CROSS = (("testing", "database", PORT_5433.key), ("deploy", "cache", FLAGS_OFF.key))


@dataclass
class World:
    families: tuple[Family, ...] = FAMILIES
    seed: int = 7
    traps: tuple[Trap, ...] = ()   # harmful lessons this world knows how to be misled by (none by default)
    _facts: dict[str, Fact] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for fam in self.families:
            for f in (*fam.all_facts, fam.gap):
                self._facts.setdefault(f.key, f)

    def family(self, name: str) -> Family:
        return next(f for f in self.families if f.name == name)

    def fact(self, key: str) -> Fact:
        return self._facts[key]

    @property
    def facts(self) -> list[Fact]:
        return list(self._facts.values())

    def keys_in(self, text: str) -> list[str]:
        """The facts a text states (by their keys), in the world's order."""
        return [k for k in self._facts if k in text]

    def traps_in(self, text: str) -> list[Trap]:
        return [t for t in self.traps if t.key in text]

    def fact_of_claim(self, text: str) -> Fact | None:
        keys = self.keys_in(text)
        return self._facts[keys[0]] if keys else None

    # -- tasks ------------------------------------------------------------------------------------------------
    def task(self, family: str, needs: list[str], n: int, kind: str = "family") -> Task:
        fam = self.family(family) if family else None
        topics = [self._facts[k].topic for k in needs if fam is None or k != fam.core.key] or \
            ([fam.core.topic] if fam else [])
        ask = fam.ask if fam else "Tidy up the repository"
        prompt = f"{ask}: {' and '.join(topics) if topics else 'general clean-up'} (ticket {n})"
        return Task(f"t{n}", family, prompt, tuple(needs), kind)

    def sample_tasks(self, count: int, seed: int | None = None, families: list[str] | None = None) -> list[Task]:
        """A reproducible stream of tasks from a fixed pool per kind, so kinds of work recur."""
        rng = random.Random(self.seed if seed is None else seed)
        fams = [f for f in self.families if families is None or f.name in families]
        pool: dict[str, list[Task]] = {"family": [], "cross": [], "gap": [], "generic": []}
        n = 0
        for fam in fams:
            for _ in range(12):
                n += 1
                extra = rng.choices(fam.facts, weights=POPULARITY[: len(fam.facts)], k=rng.choice((1, 1, 2)))
                needs = [fam.core.key, *dict.fromkeys(f.key for f in extra)]
                pool["family"].append(self.task(fam.name, needs, n))
            n += 1
            pool["gap"].append(self.task(fam.name, [fam.core.key, fam.gap.key], n, "gap"))
        names = {f.name for f in fams}
        for a, b, key in CROSS:
            if a in names and b in names:
                for _ in range(2):
                    n += 1
                    pool["cross"].append(self.task(a, [self.family(a).core.key, self.family(b).core.key, key], n,
                                                   "cross"))
        for _ in range(3):
            n += 1
            pool["generic"].append(self.task("", [], n, "generic"))
        kinds = [k for k in TASK_MIX if pool[k]]
        out = []
        for _ in range(count):
            kind = rng.choices(kinds, weights=[TASK_MIX[k] for k in kinds])[0]
            out.append(rng.choice(pool[kind]))
        return out


def misleading(fact: Fact) -> str:
    """The text a wrong lesson about this fact states (rose.sim.agent follows it and fails): never the fact's key."""
    return f"the earlier rule about {fact.topic} was reverted"


def default_world(seed: int = 7) -> World:
    return World(seed=seed)
