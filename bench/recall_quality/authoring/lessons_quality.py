"""Lessons: testing (pytest and friends) and CI (GitHub Actions). (key, title, gist, body, tags)"""

TESTING = [
    ("test-xdist-shared-db",
     "Tests pass alone but fail under pytest -n auto: they share database state",
     "Each xdist worker gets its own schema; a test that hard-codes public. breaks the isolation.",
     "The `db` fixture creates schema `test_<worker_id>` per xdist worker and sets the search_path. A test "
     "that wrote `INSERT INTO public.accounts` bypassed that and collided with other workers. Never qualify "
     "tables with a schema in tests; use the factories.",
     "pytest xdist isolation parallel"),
    ("test-db-fixture-wait",
     "pytest seems to hang at the db fixture when the test container is down",
     "The db fixture retries for 120 s before failing; start the container or lower PYTEST_DB_WAIT.",
     "If the Postgres test container on 5434 is not running, the session-scoped `db` fixture retries its "
     "connection for 120 seconds, which looks like a hang with no output. Run `make test-db` first, or set "
     "`PYTEST_DB_WAIT=5` to fail fast. `pytest -s` shows the retry messages.",
     "pytest fixtures postgres"),
    ("test-freezegun-asyncio",
     "freezegun freezes the event loop clock: use time-machine for async tests",
     "Under @freeze_time, asyncio.wait_for never times out; time_machine.travel(tick=True) keeps time moving.",
     "With `@freeze_time` active, `loop.time()` stops, so `asyncio.wait_for` and `asyncio.sleep` never complete "
     "and the test hangs until pytest-timeout kills it. We replaced freezegun with `time_machine.travel(dt, "
     "tick=True)` everywhere; freezegun is banned by a ruff banned-api rule.",
     "pytest time asyncio freezegun"),
    ("test-order-dependent",
     "A test that fails only in the full run depends on test order: replay the random seed",
     "pytest-randomly prints the seed; rerun with it and bisect to find the polluting test.",
     "pytest-randomly shuffles tests and prints `Using --randomly-seed=1234`. Rerun with `-p randomly "
     "--randomly-seed=1234`, then bisect the preceding tests. The culprit is usually a module-level cache, a "
     "patched setting never undone, or an env var set with os.environ.",
     "pytest flaky ordering"),
    ("test-monkeypatch-env",
     "Set environment variables in tests with monkeypatch.setenv, never os.environ",
     "Direct os.environ writes leak into later tests; monkeypatch undoes them.",
     "`os.environ[\"FEATURE_X\"] = \"1\"` in one test turned the feature on for every test that ran after it. "
     "Use `monkeypatch.setenv` / `monkeypatch.delenv`, and `settings.cache_clear()` if the settings object is "
     "cached with lru_cache.",
     "pytest env monkeypatch"),
    ("test-snapshot-update",
     "Snapshot tests: update with --snapshot-update and review the diff",
     "Never blanket-update syrupy snapshots to make CI green; read the .ambr diff.",
     "Snapshots live in `__snapshots__/*.ambr`. `pytest --snapshot-update` rewrites them all, including ones "
     "that changed by accident. Update only the tests you meant to change (`-k`) and read `git diff` of the "
     "ambr files before committing.",
     "pytest snapshot syrupy"),
    ("test-patch-where-used",
     "mock.patch the name where it is looked up, not where it is defined",
     "billing does from app.email import send_email, so patch app.billing.send_email.",
     "`mock.patch(\"app.email.send_email\")` had no effect and real emails were attempted, because "
     "`app.billing` imported the function by name. Patch `app.billing.send_email`, or import the module "
     "(`from app import email`) and patch the attribute on it.",
     "mock unittest patch"),
    ("test-respx-block-network",
     "Mock outbound HTTP with respx; unit tests may not touch the network",
     "The autouse block_network fixture raises SocketBlockedError; use respx.mock(assert_all_called=True).",
     "Unit tests run with the autouse `block_network` fixture (pytest-socket) and fail with `SocketBlockedError` "
     "on any real connection. Mock httpx calls with `respx.mock(assert_all_called=True)` so unused routes fail "
     "too. Recorded responses live in `tests/cassettes/` for the few VCR tests.",
     "http mocking respx"),
    ("test-diff-coverage",
     "CI fails below 85% coverage on the changed lines",
     "diff-cover compares coverage.xml to origin/main; total coverage is not what fails the build.",
     "The `coverage` job runs `diff-cover coverage.xml --compare-branch=origin/main --fail-under=85`. Overall "
     "coverage can be fine while your diff is not. Fetch main (`git fetch origin main`) before running it "
     "locally, or the comparison is against a stale base.",
     "coverage ci diff-cover"),
    ("test-factory-boy",
     "Build test data with factory_boy factories, not hand-written dicts",
     "Factories in tests/factories.py use Sequence for unique fields so tests don't hit unique constraints.",
     "`OrderFactory(status=\"paid\")` builds a valid order with its customer through SubFactory. Unique columns "
     "like email use `factory.Sequence(lambda n: f\"user{n}@example.com\")`; hand-written dicts kept violating "
     "`users_email_key`. Add new factories to `tests/factories.py`.",
     "fixtures factories test-data"),
    ("test-asyncio-strict",
     "pytest-asyncio runs in strict mode: mark async tests explicitly",
     "An unmarked async test is skipped with a warning, or silently passes without running.",
     "With `asyncio_mode = \"strict\"` an `async def test_...` without `@pytest.mark.asyncio` is not awaited; "
     "you get \"PytestUnhandledCoroutineWarning\" (an error here since warnings are errors). Async fixtures need "
     "`@pytest_asyncio.fixture`. Session-wide loops need `loop_scope=\"session\"` on both the fixture and test.",
     "pytest asyncio"),
    ("test-tmp-path",
     "Write test output to tmp_path, never into the repository",
     "Files written next to the tests leaked between runs and broke the git-clean check.",
     "A test that wrote `output.csv` in the working directory made the next run read stale data and left the "
     "tree dirty, failing CI's `git diff --exit-code` step. Use the `tmp_path` fixture (or "
     "`tmp_path_factory` for session scope).",
     "pytest filesystem tmp_path"),
    ("test-playwright-waits",
     "Playwright end-to-end tests: wait on locators, never sleep",
     "Fixed timeouts flaked on slow CI runners; use expect() auto-waiting and keep traces on failure.",
     "`page.wait_for_timeout(2000)` passed locally and flaked on CI's slower runners. Use web-first assertions "
     "such as `expect(page.get_by_role(\"button\", name=\"Save\")).to_be_enabled()`. Run with `--tracing "
     "retain-on-failure`; the trace zip is uploaded as a CI artifact and opens with `playwright show-trace`.",
     "playwright e2e flaky"),
    ("test-parametrize-ids",
     "Give pytest.param cases readable ids",
     "test_price[3-7-True] tells nobody anything; ids= or pytest.param(..., id=...) does.",
     "Failures printed as `test_discount[case7]` made triage slow. Use `pytest.param(100, 0.2, 80, "
     "id=\"twenty-percent\")` or an `ids=` function. Readable ids also make `-k` selection work.",
     "pytest parametrize readability"),
    ("test-integration-marker",
     "Integration tests carry @pytest.mark.integration and are skipped by default",
     "Run them with -m integration and the compose stack up; --strict-markers rejects typos.",
     "The default `addopts` has `-m \"not integration\"`. Integration tests need `docker compose up` (API, "
     "Postgres, Redis) and run with `pytest -m integration`. With `--strict-markers`, a misspelt "
     "`@pytest.mark.intergration` is an error rather than a silently ignored mark.",
     "pytest markers integration"),
    ("test-hypothesis-deadline",
     "Hypothesis DeadlineExceeded on CI: disable the deadline for database-backed properties",
     "The 200 ms per-example deadline is meant for pure functions; db properties set deadline=None.",
     "Property tests that touch the database passed locally and failed on CI with `DeadlineExceeded` because "
     "the first example is slow. Use `@settings(deadline=None, max_examples=50)` on those; keep the deadline for "
     "pure functions. The `ci` Hypothesis profile is loaded in conftest.",
     "hypothesis property-based"),
    ("test-warnings-as-errors",
     "Warnings are errors in the test configuration: fix deprecations, don't filter them wholesale",
     "filterwarnings = error; if a third-party warning must be silenced, filter that module narrowly.",
     "`filterwarnings = [\"error\"]` in pyproject makes a DeprecationWarning fail the test. Fix our own code. For "
     "a third-party warning add a narrow entry like `\"ignore::DeprecationWarning:botocore.*\"` with a comment "
     "and a link to the upstream issue.",
     "pytest warnings deprecation"),
    ("test-scope-mismatch",
     "ScopeMismatch: a session-scoped fixture can't use a function-scoped one",
     "Give the dependency a wider scope or build the resource with tmp_path_factory / monkeypatch.context().",
     "\"ScopeMismatch: You tried to access the function scoped fixture tmp_path with a session scoped request "
     "object.\" Use `tmp_path_factory.mktemp(...)` in session fixtures, and `pytest.MonkeyPatch.context()` "
     "instead of the function-scoped `monkeypatch`.",
     "pytest fixtures scope"),
    ("test-golden-crlf",
     "Golden-file tests fail on Windows runners because of CRLF line endings",
     "Pin eol=lf for golden files in .gitattributes and read them with newline=''.",
     "The Windows job failed every golden comparison although the files looked identical: git converted them "
     "to CRLF on checkout. `.gitattributes` has `tests/golden/** text eol=lf`; open files with `newline=\"\"` "
     "when comparing.",
     "windows line-endings golden"),
    ("test-caplog",
     "Assert on log records with caplog, not capsys",
     "Our logging goes through handlers, not stdout; caplog.records has the structured fields.",
     "capsys saw nothing because log output goes to handlers. Use `caplog.set_level(logging.INFO, "
     "logger=\"acme\")` and assert on `caplog.records` (record.levelname, record.getMessage()). For structlog, "
     "use `structlog.testing.capture_logs()`.",
     "pytest logging caplog"),
    ("test-jest-fake-timers",
     "Jest fake timers with promises: use advanceTimersByTimeAsync",
     "Sync timer advancing doesn't flush awaited promises, so the debounced save never fires.",
     "With `jest.useFakeTimers()`, `jest.advanceTimersByTime(500)` ran the timer but the awaited fetch inside "
     "never resolved and the test timed out. Use `await jest.advanceTimersByTimeAsync(500)` (Jest 29.5+), and "
     "restore with `jest.useRealTimers()` in afterEach.",
     "jest timers frontend"),
    ("test-timeout-durations",
     "pytest-timeout kills a hung test at 60 s; unit tests should take well under a second",
     "timeout = 60 in the config; --durations=20 finds the slow ones.",
     "`timeout = 60` is set in pytest.ini, and the failure shows a traceback of every thread at the moment of "
     "the kill, which is the fastest way to see where it was stuck. Unit tests should finish in under a second; "
     "`pytest --durations=20` lists the slowest.",
     "pytest timeout slow"),
]

CI = [
    ("ci-cache-key-lockfile",
     "Key the CI dependency cache on the lockfile hash",
     "A cache keyed on requirements.txt missed lockfile changes and restored stale packages.",
     "`key: uv-${{ runner.os }}-${{ hashFiles('uv.lock') }}` with a `restore-keys: uv-${{ runner.os }}-` "
     "fallback. The old key hashed requirements.txt, which no longer changes, so CI kept testing against "
     "outdated dependencies. setup-uv's `enable-cache: true` does this for you.",
     "github-actions cache dependencies"),
    ("ci-concurrency-cancel",
     "Cancel superseded PR runs with a concurrency group, but never on main",
     "cancel-in-progress saves runner minutes on PRs; on main it would cancel half-finished deploys.",
     "`concurrency: {group: ${{ github.workflow }}-${{ github.ref }}, cancel-in-progress: ${{ github.ref != "
     "'refs/heads/main' }}}`. Cancelling a deploy workflow on main mid-way left a Helm release pending once.",
     "github-actions concurrency"),
    ("ci-fork-secrets",
     "Secrets are empty on pull requests from forks; don't switch to pull_request_target",
     "pull_request_target with a checkout of the PR head hands secrets to untrusted code.",
     "Contributor PRs from forks run without secrets, so the integration job fails with an empty API key. "
     "Skip that job when `github.event.pull_request.head.repo.fork` is true. Never use `pull_request_target` "
     "together with `actions/checkout` of the PR's head ref: that runs untrusted code with our secrets.",
     "github-actions secrets security forks"),
    ("ci-runner-disk-full",
     "'No space left on device' on hosted runners during docker builds",
     "Hosted runners have ~14 GB free; remove preinstalled toolchains or prune buildx.",
     "The image build died with \"no space left on device\". Free ~20 GB first with `sudo rm -rf "
     "/usr/share/dotnet /opt/ghc /usr/local/lib/android` and run `docker buildx prune -f` between builds. Large "
     "test fixtures restored from the cache also count.",
     "github-actions docker disk"),
    ("ci-required-check-rename",
     "Renaming a CI job leaves the PR waiting on the old required check forever",
     "'Expected - Waiting for status to be reported': update the required checks in branch protection.",
     "After renaming the `test` job to `tests (3.12)`, every PR showed \"Expected — Waiting for status to be "
     "reported\" and could not merge. Branch protection still required the old name. An admin has to update "
     "the required status checks in the repository settings in the same change.",
     "branch-protection github-actions"),
    ("ci-matrix-fail-fast",
     "Set fail-fast: false on the Python version matrix",
     "With the default, one failing version cancels the others and hides whether the failure is version-specific.",
     "`strategy: {fail-fast: false, matrix: {python: [\"3.10\", \"3.11\", \"3.12\", \"3.13\"]}}`. The default "
     "cancelled the 3.10 job when 3.13 failed, so nobody could tell the bug was 3.13-only.",
     "github-actions matrix"),
    ("ci-artifact-names",
     "upload-artifact v4 needs a unique name per matrix job",
     "'Conflict: an artifact with this name already exists' - include the matrix values in the name.",
     "Since `actions/upload-artifact@v4` artifacts are immutable, and two matrix jobs uploading `junit` fail "
     "with \"Conflict: an artifact with this name already exists on this workflow run\". Use `name: "
     "junit-${{ matrix.python }}`, `retention-days: 7`, and merge with `actions/download-artifact` pattern.",
     "github-actions artifacts"),
    ("ci-buildx-gha-cache",
     "Cache docker layers in CI with the buildx gha cache and a lockfile-first Dockerfile",
     "cache-from/to type=gha; copy the lockfile and install before copying the source.",
     "`docker/build-push-action` with `cache-from: type=gha` and `cache-to: type=gha,mode=max` cut the image "
     "build from 9 to 2 minutes. It only helps if the Dockerfile copies `pyproject.toml uv.lock` and installs "
     "dependencies before `COPY src/`, so code changes don't invalidate the dependency layer.",
     "docker buildx cache"),
    ("ci-workflow-permissions",
     "Declare minimal permissions per workflow; 'Resource not accessible by integration' means one is missing",
     "The default GITHUB_TOKEN is read-only in our org; releases need contents: write, ghcr pushes packages: write.",
     "Org policy makes GITHUB_TOKEN read-only. The release job failed with \"Resource not accessible by "
     "integration\" until it declared `permissions: {contents: write}`; pushing images to ghcr.io needs "
     "`packages: write`, commenting on PRs `pull-requests: write`. Declare them per job.",
     "github-token permissions"),
    ("ci-pin-actions-sha",
     "Pin third-party GitHub Actions to a full commit SHA",
     "Tags can be moved by whoever controls the action; Dependabot keeps SHA pins current.",
     "After the tj-actions/changed-files compromise, all third-party actions are pinned like `uses: "
     "some/action@<40-char-sha> # v4.1.2`. Actions under `actions/` and our own org may use tags. Dependabot's "
     "github-actions ecosystem updates the pins weekly.",
     "supply-chain security github-actions"),
    ("ci-schedule-utc",
     "Workflow cron schedules run in UTC and stop after 60 days without repository activity",
     "A 'nightly' job at 0 2 * * * runs at 02:00 UTC; scheduled workflows on quiet repos get disabled.",
     "`on: schedule: - cron: \"0 2 * * *\"` is 02:00 UTC, i.e. 03:00 or 04:00 in Amsterdam. GitHub disables "
     "scheduled workflows in repositories with no activity for 60 days; the nightly dependency audit silently "
     "stopped on the archived SDK repo. Scheduled runs can also start 10-30 minutes late.",
     "schedule cron github-actions"),
    ("ci-pre-commit",
     "CI runs pre-commit on all files: install the hooks locally",
     "ruff, ruff-format, mypy and check-yaml run in CI exactly as in .pre-commit-config.yaml.",
     "The `lint` job runs `pre-commit run --all-files --show-diff-on-failure`. Run `pre-commit install` once "
     "after cloning so the same hooks run on commit. Hook versions are pinned in `.pre-commit-config.yaml`; "
     "bump them with `pre-commit autoupdate` in its own PR.",
     "pre-commit lint"),
    ("ci-quarantine-flaky",
     "Don't add automatic reruns for a flaky test: quarantine it with an owner",
     "pytest-rerunfailures hides real races; the quarantine marker runs the test in a non-blocking job.",
     "Mark it `@pytest.mark.quarantine(reason=..., issue=\"PLAT-123\")`; the main job deselects quarantined tests "
     "and a separate non-blocking job runs them. The owner has one sprint to fix or delete it. `--reruns` is "
     "not allowed in the required jobs.",
     "flaky policy quarantine"),
    ("ci-service-healthcheck",
     "CI service containers need a health check or tests start before Postgres is ready",
     "Add --health-cmd pg_isready to the service options; jobs wait for healthy services.",
     "The first tests failed with \"connection refused\" about one run in five. Postgres service containers "
     "need `options: --health-cmd \"pg_isready -U postgres\" --health-interval 5s --health-timeout 5s "
     "--health-retries 10`; the runner then waits until the service is healthy. Map it to 5434 like local tests.",
     "github-actions services postgres"),
    ("ci-multiline-env",
     "Multiline values into GITHUB_ENV need a heredoc delimiter",
     "echo KEY=value only takes one line; use KEY<<EOF ... EOF with a random delimiter.",
     "Writing a PEM certificate with `echo \"CERT=$CERT\" >> $GITHUB_ENV` truncated it at the first newline. Use "
     "`{ echo \"CERT<<$DELIM\"; echo \"$CERT\"; echo \"$DELIM\"; } >> \"$GITHUB_ENV\"` where DELIM is random "
     "(`openssl rand -hex 8`) so content can't end the block.",
     "github-actions env"),
    ("ci-runner-labels",
     "ARM64 and GPU jobs run on self-hosted runners labelled acme-arm64 / acme-gpu",
     "A job 'Waiting for a runner to pick up this job' forever usually has a misspelt label.",
     "`runs-on: [self-hosted, acme-arm64]`. A typo such as `acme-arm` queues the job indefinitely with \"Waiting "
     "for a runner to pick up this job...\". The GPU pool scales to zero at night, so the first GPU job of the "
     "morning waits about five minutes.",
     "runners arm64 self-hosted"),
    ("ci-job-timeouts",
     "Set timeout-minutes on every CI job",
     "The default is 360 minutes; a hung integration job burned six hours of runner time.",
     "A deadlocked integration test kept a runner busy for the default 360 minutes, blocking the merge queue. "
     "Every job sets `timeout-minutes` (lint 10, tests 30, e2e 45). Pair it with pytest-timeout so the log shows "
     "where it hung.",
     "github-actions timeout"),
    ("ci-path-filters",
     "Workflow-level path filters skip required checks; filter inside the job instead",
     "A skipped workflow never reports, so the required check blocks docs-only PRs.",
     "With `on: pull_request: paths: ['src/**']` a docs-only PR never gets the required `tests` status and cannot "
     "merge. Run the workflow always and use `dorny/paths-filter` in a first job; later jobs use `if:` on its "
     "outputs and report success when skipped.",
     "paths monorepo github-actions"),
]
