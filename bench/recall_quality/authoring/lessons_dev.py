"""Lessons: frontend build, git workflow, Python packaging. (key, title, gist, body, tags)"""

FRONTEND = [
    ("fe-vite-env-prefix",
     "Vite exposes only VITE_-prefixed env vars, baked in at build time",
     "import.meta.env.API_URL is undefined; rename to VITE_API_URL and rebuild.",
     "`import.meta.env.API_URL` was `undefined` in the bundle. Vite exposes only variables starting with "
     "`VITE_`, and replaces them at build time, so changing the value in the container's env after the build "
     "does nothing. Runtime config goes through `/config.json` fetched at boot.",
     "vite env config"),
    ("fe-chunk-load-error",
     "'ChunkLoadError: Loading chunk 42 failed' after a release: old tabs request deleted chunks",
     "Keep previous builds' assets for a week and reload once when a lazy import fails.",
     "Users with the app open during a deploy clicked a route whose chunk no longer existed. The upload step "
     "syncs to the bucket without `--delete` so old hashed files stay 7 days, and the router catches "
     "`ChunkLoadError` / 'Failed to fetch dynamically imported module' and does one `location.reload()`.",
     "webpack chunks deploy"),
    ("fe-hydration-mismatch",
     "React hydration mismatch from dates rendered on the server",
     "'Text content does not match server-rendered HTML': format times on the client or pass the user's zone.",
     "The server renders in UTC, the browser in the user's zone, so `new Date().toLocaleString()` differs and "
     "React warns \"Text content does not match server-rendered HTML\" then re-renders the tree. Format "
     "timestamps in a client-only component (`useEffect`), or render with the timezone from the user profile.",
     "react ssr hydration"),
    ("fe-node-version-nvmrc",
     "Use the Node version in .nvmrc (20.11)",
     "npm/pnpm on Node 18 fails with 'Unsupported engine'; nvm use or corepack fix it.",
     "The repo's `.nvmrc` says 20.11 and `engines.node` is `>=20.11 <21`. On Node 18, install fails with "
     "\"ERR_PNPM_UNSUPPORTED_ENGINE\". Run `nvm use` (or `fnm use`) in the repo; CI reads the same file via "
     "`actions/setup-node` `node-version-file: .nvmrc`.",
     "node nvm engines"),
    ("fe-pnpm-frozen-lockfile",
     "The frontend uses pnpm: never commit package-lock.json",
     "ERR_PNPM_OUTDATED_LOCKFILE in CI means pnpm-lock.yaml wasn't updated with package.json.",
     "CI runs `pnpm install --frozen-lockfile`. \"ERR_PNPM_OUTDATED_LOCKFILE Cannot install with frozen-lockfile "
     "because pnpm-lock.yaml is not up to date\" means you changed package.json without running `pnpm install`. "
     "A stray package-lock.json from `npm install` must be deleted, not committed.",
     "pnpm lockfile"),
    ("fe-bundle-budget",
     "CI fails when the main bundle exceeds 250 kB gzipped",
     "size-limit guards the entry chunk; heavy libraries go behind dynamic import().",
     "`pnpm size` (size-limit) runs in CI with a 250 kB gzip budget for `dist/assets/index-*.js`. The last "
     "breach was moment.js with all locales; we use date-fns now, import lodash-es functions individually, and "
     "load the chart library with `import()` on the reports route only.",
     "bundle size-limit"),
    ("fe-css-modules-camelcase",
     "CSS modules: use camelCase names in TypeScript imports",
     "styles.submitButton for .submit-button requires localsConvention camelCaseOnly in vite.config.ts.",
     "`styles['submit-button']` worked but `styles.submitButton` was undefined until `css.modules."
     "localsConvention: 'camelCaseOnly'` was set in `vite.config.ts`. Typed imports come from "
     "`typescript-plugin-css-modules`.",
     "css-modules vite"),
    ("fe-tailwind-dynamic-classes",
     "Tailwind drops class names built by string concatenation",
     "bg-${color}-500 never appears in the source scan; use a map of full class names or a safelist.",
     "The badge colours vanished in production because `bg-${color}-500` is assembled at runtime and Tailwind's "
     "content scan never sees the full class. Use a lookup object `{ red: 'bg-red-500', ... }` or add a "
     "`safelist` pattern in `tailwind.config.ts`.",
     "tailwind css"),
    ("fe-exhaustive-deps",
     "Don't silence react-hooks/exhaustive-deps: fix the dependency",
     "A disabled lint rule hid a stale closure that saved the previous form values.",
     "An `// eslint-disable-next-line react-hooks/exhaustive-deps` hid a stale closure: the autosave effect "
     "captured the first render's values. Add the dependency, or move the function inside the effect, or wrap "
     "it in `useCallback`. The rule is set to error in `.eslintrc`.",
     "eslint react hooks"),
    ("fe-storybook-msw",
     "Storybook stories mock the API with MSW handlers",
     "Stories must not call a real backend; handlers live in .storybook/handlers.ts.",
     "Stories that fetched from the dev API broke Chromatic builds. Register request mocks with "
     "`msw-storybook-addon`: shared handlers in `.storybook/handlers.ts`, per-story overrides in "
     "`parameters.msw.handlers`.",
     "storybook msw mocking"),
    ("fe-ts-strict",
     "TypeScript runs with strict and noUncheckedIndexedAccess: don't escape with 'as any'",
     "Narrow the type or validate at the boundary with zod; 'as any' is rejected by lint.",
     "`tsconfig.json` has `strict: true` and `noUncheckedIndexedAccess: true`, so `arr[0]` is `T | undefined`. "
     "`@typescript-eslint/no-explicit-any` is an error. Validate API responses with the zod schemas in "
     "`src/api/schemas.ts` instead of casting.",
     "typescript strict"),
    ("fe-sourcemaps-sentry",
     "Upload source maps to Sentry during release and don't serve them publicly",
     "sentry-cli uploads maps for the release sha; delete *.map before syncing to the bucket.",
     "The release job runs `sentry-cli sourcemaps upload --release $GIT_SHA dist/` and then deletes "
     "`dist/**/*.map` before `gsutil rsync`. Public maps exposed our source; missing maps made Sentry stack "
     "traces unreadable.",
     "sentry sourcemaps release"),
    ("fe-dev-proxy",
     "The dev server proxies /api to localhost:8000; CORS errors locally mean you used an absolute URL",
     "Call relative /api paths in the frontend so the vite proxy applies.",
     "`vite.config.ts` sets `server.proxy: { '/api': 'http://localhost:8000' }`. If the browser console shows a "
     "CORS error in local development, the code is calling `http://localhost:8000/api/...` directly instead of "
     "the relative `/api/...` path.",
     "vite proxy cors"),
    ("fe-i18n-strings",
     "All user-facing strings go through t('namespace.key')",
     "Hard-coded strings fail the i18n lint; extract keys with pnpm i18n:extract.",
     "The lint rule `i18next/no-literal-string` fails on JSX text. Use `t('checkout.payButton')`, run "
     "`pnpm i18n:extract` to add keys to `locales/en/*.json`, and leave other languages to the translation "
     "sync. Plurals use the `_one` / `_other` suffixes.",
     "i18n translations"),
    ("fe-image-cdn",
     "Serve product images through the image CDN with width parameters",
     "Full-size originals made the listing page 12 MB; request ?w=400&fm=webp and use srcset.",
     "The product grid loaded 4000px originals. Build URLs with `imageUrl(src, { w: 400 })`, which adds "
     "`?w=400&fm=webp&q=75`, and pass a `srcset` with 1x/2x widths. Add `loading=\"lazy\"` below the fold.",
     "images performance"),
    ("fe-react-query-stale",
     "React Query's staleTime defaults to 0: set it per query",
     "With staleTime 0, every window focus refetched the whole catalog.",
     "Each tab switch refetched all queries because data is stale immediately by default. Catalog queries use "
     "`staleTime: 60_000`, user settings `Infinity` with explicit invalidation after a mutation via "
     "`queryClient.invalidateQueries({ queryKey: ['settings'] })`.",
     "react-query fetching"),
    ("fe-vitest-jsdom",
     "Vitest component tests need the jsdom environment",
     "'ReferenceError: document is not defined' means the test ran in the node environment.",
     "Component tests failed with \"ReferenceError: document is not defined\". Set `test.environment: 'jsdom'` "
     "in `vitest.config.ts` (or `// @vitest-environment jsdom` at the top of a file) and load "
     "`@testing-library/jest-dom` in `setupFiles`.",
     "vitest jsdom testing"),
    ("fe-vite-base-path",
     "Assets 404 when the app is served under a sub-path: set base in vite.config",
     "The admin app lives at /admin/; without base: '/admin/' it requested /assets/... at the root.",
     "Deployed under `https://acme.dev/admin/`, the page was blank and the network tab showed 404s for "
     "`/assets/index-abc.js`. Set `base: '/admin/'` in `vite.config.ts` and `basename` on the router.",
     "vite base-path routing"),
    ("fe-heap-out-of-memory",
     "'JavaScript heap out of memory' during the production build",
     "Raise Node's heap with NODE_OPTIONS=--max-old-space-size=4096 in the build step.",
     "The build died with \"FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\" "
     "after adding source maps for every chunk. Set `NODE_OPTIONS=--max-old-space-size=4096` in the build "
     "script and CI; the runner has 7 GB.",
     "node memory build"),
    ("fe-a11y-labels",
     "Every form input needs an accessible label; axe runs in component tests",
     "jest-axe / vitest-axe fails tests on unlabeled inputs and low-contrast buttons.",
     "Component tests call `expect(await axe(container)).toHaveNoViolations()`. Placeholders are not labels: use "
     "`<label htmlFor>` or `aria-label`. The design system's `TextField` requires a `label` prop for this.",
     "a11y accessibility"),
]

GIT = [
    ("git-rebase-linear",
     "Rebase feature branches on main; no merge commits in PRs",
     "main requires linear history; pull with --rebase and squash-merge through the UI.",
     "Branch protection requires a linear history, so a PR containing merge commits cannot merge. Update your "
     "branch with `git fetch origin && git rebase origin/main` (set `git config pull.rebase true`). PRs are "
     "squash-merged.",
     "rebase history"),
    ("git-force-with-lease",
     "After a rebase push with --force-with-lease, never --force",
     "A plain --force overwrote a reviewer's fixup commit on the shared branch.",
     "`git push --force` silently discarded a commit a colleague had pushed to the same branch. "
     "`git push --force-with-lease` refuses if the remote moved since your last fetch. Alias it: "
     "`git config --global alias.pushf 'push --force-with-lease'`.",
     "push force"),
    ("git-conventional-commits",
     "Commit messages follow Conventional Commits; the scope is the top-level package",
     "release-please builds the changelog and version bump from feat:/fix: prefixes.",
     "Write `feat(billing): add proration` or `fix(api): handle empty cart`. `feat` bumps the minor version, "
     "`fix` the patch, `feat!` or a `BREAKING CHANGE:` footer the major. The squash commit title is what "
     "counts, so fix the PR title.",
     "commits conventions changelog"),
    ("git-signed-commits",
     "main requires signed commits: sign with your SSH key",
     "'Commits must have verified signatures': set gpg.format ssh and upload the key as a signing key.",
     "Pushes were rejected with \"Commits must have verified signatures\". Run `git config --global gpg.format "
     "ssh`, `git config --global user.signingkey ~/.ssh/id_ed25519.pub`, `git config --global commit.gpgsign "
     "true`, and add the key on GitHub as a Signing key (not only an authentication key).",
     "signing ssh"),
    ("git-lfs-fixtures",
     "Binary test fixtures over 1 MB go into Git LFS",
     "A test reading an LFS pointer file instead of the real parquet means LFS wasn't pulled.",
     "`git lfs track \"tests/fixtures/*.parquet\"` and commit the `.gitattributes` change. If a test fails with "
     "\"Could not open Parquet input source ... magic bytes not found\", you have the pointer file: run "
     "`git lfs pull`. CI checkout needs `lfs: true`.",
     "lfs binaries fixtures"),
    ("git-bisect-run",
     "Find the commit that introduced a regression with git bisect run",
     "Give bisect a failing test as the oracle and let it run unattended.",
     "`git bisect start HEAD v2.3.0` then `git bisect run pytest tests/test_pricing.py -x -q`. Exit code 125 "
     "marks a commit as untestable (e.g. `|| exit 125` when the build fails). `git bisect reset` when done.",
     "bisect debugging regression"),
    ("git-worktree",
     "Use git worktree for a second checkout instead of stashing",
     "Review or hotfix in a separate folder without disturbing the work in progress.",
     "`git worktree add ../api-hotfix origin/release/2.4` gives a second working tree sharing the same "
     "objects. Each worktree needs its own virtualenv. Remove with `git worktree remove ../api-hotfix`.",
     "worktree"),
    ("git-no-verify",
     "Never bypass hooks with --no-verify to get a commit through",
     "The hook that fails locally fails in CI too; fix what it reports.",
     "`git commit --no-verify` pushed code that failed the same ruff and mypy checks in CI and blocked the "
     "merge queue. If a hook is broken itself, fix the hook in `.pre-commit-config.yaml` in a separate PR.",
     "hooks pre-commit"),
    ("git-leaked-secret",
     "A secret was committed: rotate it first, rewrite history second",
     "Once pushed, assume it's compromised; a revert commit doesn't remove it from history.",
     "Revoke and rotate the credential immediately, then tell #security. Reverting leaves it in history and in "
     "every clone. History can be cleaned later with `git filter-repo --replace-text`, coordinated with "
     "everyone who has the repo. GitHub push protection should have blocked it: check why it didn't.",
     "secrets incident"),
    ("git-branch-naming",
     "Branch names are <initials>/<TICKET>-<slug>",
     "jd/PAY-123-refund-webhook links the PR to Jira automatically.",
     "Name branches like `jd/PAY-123-refund-webhook`. The Jira integration links PRs by the ticket key in the "
     "branch name, and the deploy bot posts preview URLs to that ticket. Branches without a ticket use "
     "`jd/chore-<slug>`.",
     "branches conventions jira"),
    ("git-submodule-protos",
     "After pulling, update the protos submodule",
     "Stale generated code or 'fatal: not a git repository' in protos/ means the submodule wasn't initialised.",
     "Run `git submodule update --init --recursive` after cloning and after pulls that move the `protos` "
     "pointer. Set `git config submodule.recurse true` so pull does it for you. Regenerate code afterwards.",
     "submodules protos"),
    ("git-codeowners",
     "Changes under migrations/ and infra/ need a CODEOWNERS review",
     "The platform team owns infra/, the data team owns migrations/; request them early.",
     "`.github/CODEOWNERS` maps `migrations/` to @acme/data and `infra/` to @acme/platform. Their approval is "
     "required, and their review queue is about a day, so open a draft early and tag them.",
     "codeowners review"),
    ("git-rerere",
     "Turn on rerere when repeatedly rebasing a long-lived branch",
     "Git remembers how you resolved a conflict and replays the resolution next time.",
     "`git config --global rerere.enabled true`. Rebasing the 3-week migration branch onto main each morning "
     "kept producing the same conflicts in `settings.py`; with rerere they resolve themselves after the first "
     "time. Check the result with `git diff` anyway.",
     "conflicts rerere"),
    ("git-env-ignored",
     ".env files are ignored; .env.example documents every variable",
     "Add new variables to .env.example with a safe placeholder in the same PR.",
     "`.env` is in `.gitignore` and must never be committed. When you introduce a variable, add it to "
     "`.env.example` with a dummy value and a comment; the settings test fails if a required variable is "
     "missing there.",
     "env gitignore configuration"),
    ("git-small-prs",
     "Keep pull requests under ~400 changed lines; stack them when larger",
     "Big PRs get shallow reviews; base each PR on the previous branch.",
     "Reviews of 1,500-line PRs missed a dropped permission check. Split the work and stack: PR 2 targets PR 1's "
     "branch; `git rebase --update-refs` keeps the stack consistent after changes to the bottom branch.",
     "pull-requests review"),
    ("git-autocrlf",
     "On Windows set core.autocrlf=input to avoid committing CRLF",
     "CRLF commits made shell scripts fail in Linux containers with '/bin/bash^M: bad interpreter'.",
     "Scripts committed from Windows with CRLF failed in the container with \"/bin/bash^M: bad interpreter: No "
     "such file or directory\". Set `git config --global core.autocrlf input`; `.gitattributes` forces "
     "`*.sh text eol=lf`.",
     "line-endings windows"),
    ("git-release-tags",
     "Release tags vX.Y.Z are created by release-please; never tag by hand",
     "Manual tags desync the changelog and the version in pyproject.",
     "Merging the release-please PR creates the tag `vX.Y.Z` and the GitHub release. A hand-made tag once "
     "skipped the changelog update and published a wheel whose version didn't match its tag.",
     "tags release"),
    ("git-partial-clone",
     "Clone the monorepo with --filter=blob:none",
     "A full clone is 9 GB; a blobless clone fetches file contents on demand.",
     "`git clone --filter=blob:none git@github.com:acme/mono.git` takes a minute instead of twenty. Combine with "
     "`git sparse-checkout set services/api libs/common` if you only work on a few folders.",
     "clone monorepo"),
    ("git-reflog-recover",
     "Lost commits after a bad reset: find them in the reflog",
     "git reflog lists where HEAD has been; branch from the sha before the reset.",
     "After `git reset --hard origin/main` wiped two local commits: `git reflog` shows `HEAD@{2}: commit: ...`; "
     "run `git branch rescue <sha>`. Unreferenced commits survive about 30 days before gc.",
     "reflog recovery"),
    ("git-hotfix-cherry-pick",
     "Hotfixes land on main first, then cherry-pick -x to the release branch",
     "Fixing only the release branch lets the bug come back in the next release.",
     "Merge the fix to main, then `git cherry-pick -x <sha>` onto `release/2.4` and open a PR there. The `-x` "
     "records the source commit. A fix made only on the release branch regressed in 2.5.",
     "hotfix release cherry-pick"),
]

PACKAGING = [
    ("pkg-uv-lock",
     "Dependencies are managed with uv: uv add, then commit uv.lock",
     "Never pip install into the project venv; CI runs uv sync --frozen.",
     "`uv add httpx` updates `pyproject.toml` and `uv.lock` together. `pip install` into `.venv` makes your "
     "environment differ from everyone else's and from CI, which runs `uv sync --frozen` and fails if the lock "
     "is out of date.",
     "uv lockfile dependencies"),
    ("pkg-src-layout-editable",
     "'ModuleNotFoundError: No module named acme' in tests: install the package editable",
     "With the src layout, the package is importable only once installed; don't hack sys.path in conftest.",
     "The code lives in `src/acme/`, so running pytest from a fresh checkout fails to import it. `uv sync` (or "
     "`pip install -e .`) installs it editable. Adding `sys.path.insert(0, 'src')` to conftest hides packaging "
     "bugs such as missing package data.",
     "src-layout imports"),
    ("pkg-version-metadata",
     "The version lives only in pyproject; read it with importlib.metadata",
     "A __version__ constant drifted from the released version twice.",
     "Keep `version = \"2.4.1\"` in pyproject only (release-please bumps it). At runtime use "
     "`importlib.metadata.version(\"acme-api\")`. The old hard-coded `__version__` in `__init__.py` lagged behind "
     "twice and confused support.",
     "version metadata"),
    ("pkg-extras-lazy",
     "Heavy optional dependencies go behind extras and lazy imports",
     "pip install acme-sdk[pandas]; import inside the function and raise a helpful error if missing.",
     "The SDK declares `pandas = [\"pandas>=2\"]` under `[project.optional-dependencies]`. `to_dataframe()` "
     "imports pandas inside the function and raises `ImportError(\"install acme-sdk[pandas]\")` if absent, so "
     "the base install stays light.",
     "extras optional-dependencies"),
    ("pkg-private-index",
     "Internal packages come from the private index only (dependency confusion)",
     "Pin acme-* packages to the internal index with an explicit uv index; never --extra-index-url.",
     "With `--extra-index-url`, pip picks the highest version across indexes, so a public `acme-common` 99.0 "
     "would win. Configure `[[tool.uv.index]] name = \"acme\" ... explicit = true` and map internal packages in "
     "`[tool.uv.sources]`.",
     "index security pypi"),
    ("pkg-manylinux-wheels",
     "Build Linux wheels of the C extension with cibuildwheel, never on a dev laptop",
     "A wheel built on Ubuntu 24.04 failed on Amazon Linux with 'GLIBC_2.38 not found'.",
     "The `fastgeo` extension wheel built locally linked against the new glibc and crashed on import on the "
     "batch workers: \"version `GLIBC_2.38' not found\". Release wheels are built in CI by cibuildwheel in "
     "manylinux_2_28 containers.",
     "wheels manylinux cibuildwheel"),
    ("pkg-python310-compat",
     "Code must run on Python 3.10: no tomllib or ExceptionGroup without a fallback",
     "tomllib is 3.11+; depend on tomli for python_version < '3.11'.",
     "The CLI broke for users on 3.10 with \"ModuleNotFoundError: No module named 'tomllib'\". Use "
     "`tomli; python_version < \"3.11\"` and `try: import tomllib except ModuleNotFoundError: import tomli as "
     "tomllib`. The CI matrix includes 3.10 for that reason.",
     "compatibility python-versions"),
    ("pkg-entry-point-path",
     "'command not found' after installing the CLI: the venv's bin directory isn't on PATH",
     "[project.scripts] creates the launcher in the environment's bin; use uv tool install or pipx for global CLIs.",
     "The launcher is created in `.venv/bin/acme`. Activate the venv or run `uv run acme`. For a CLI you want "
     "everywhere, `uv tool install .` or `pipx install .` put it in `~/.local/bin`.",
     "scripts cli"),
    ("pkg-package-data",
     "Non-Python files are missing from the wheel unless declared as package data",
     "Templates worked in the editable install but raised FileNotFoundError from the built wheel.",
     "Production raised `FileNotFoundError: .../acme/templates/email.html` although it worked locally: the "
     "editable install reads from the source tree. Declare `[tool.setuptools.package-data] acme = "
     "[\"templates/*.html\"]` and check with `unzip -l dist/*.whl`; load files with `importlib.resources`.",
     "package-data wheel"),
    ("pkg-upper-bounds",
     "Libraries don't pin upper bounds; applications lock everything",
     "An upper cap in the SDK made it uninstallable next to newer pydantic in customers' apps.",
     "The SDK's `pydantic<2.6` conflicted with customers' newer pydantic. Libraries declare minimums (`>=2.4`) "
     "and test the latest in CI; applications pin exact versions through the lockfile.",
     "versions pinning"),
    ("pkg-namespace-package",
     "The acme namespace directory must not contain an __init__.py",
     "An __init__.py in src/acme/ of one distribution hides the other acme.* distributions.",
     "`acme-common` and `acme-billing` both install into the `acme` namespace (PEP 420). When one shipped "
     "`acme/__init__.py`, `import acme.billing` failed wherever both were installed. Only the leaf packages have "
     "an `__init__.py`.",
     "namespace imports"),
    ("pkg-trusted-publishing",
     "Publish to PyPI with trusted publishing from the release workflow",
     "No PyPI API tokens in secrets; the workflow gets an OIDC identity through the id-token write permission.",
     "The release job has `permissions: id-token: write` and uses `pypa/gh-action-pypi-publish`; PyPI is "
     "configured to trust `acme/sdk` + `release.yml` + environment `pypi`. Remove any old PyPI tokens from the "
     "repository secrets.",
     "pypi publishing release"),
    ("pkg-py-typed",
     "Ship a py.typed marker so downstream type checkers use our annotations",
     "Without it, mypy in consumer projects treats the SDK as untyped.",
     "Customers' mypy reported `Skipping analyzing \"acme_sdk\": module is installed, but missing library stubs "
     "or py.typed marker`. Add an empty `src/acme_sdk/py.typed` and list it in package data.",
     "typing mypy"),
    ("pkg-venv-bad-interpreter",
     "After a Homebrew Python upgrade the venv breaks: recreate it",
     "'bad interpreter: No such file or directory' from .venv/bin scripts; delete .venv and sync again.",
     "`brew upgrade` removed the Python the venv was linked to; every script failed with \"bad interpreter: No "
     "such file or directory\". `rm -rf .venv && uv sync`. Using uv-managed Pythons (`uv python install 3.12`) "
     "avoids it.",
     "venv homebrew"),
    ("pkg-resolution-impossible",
     "Dependency conflict: find who constrains the package before forcing versions",
     "uv tree --invert --package shows every requirement on a package.",
     "\"No solution found when resolving dependencies\" / pip's `ResolutionImpossible`. Run "
     "`uv tree --invert --package pydantic` to see which packages constrain it; usually one stale pin. Never "
     "use `--no-deps` to push through.",
     "resolver conflicts"),
    ("pkg-pydantic-v2",
     "Pydantic v2 code: model_dump and field_validator, no pydantic.v1 shim in new code",
     "The v1 compatibility import is allowed only in modules not yet migrated.",
     "Use `.model_dump()` / `.model_validate()` instead of `.dict()` / `.parse_obj()`, `@field_validator` instead "
     "of `@validator`, and `model_config = ConfigDict(...)` instead of `class Config`. `from pydantic.v1 import "
     "...` is banned in new modules by a ruff rule.",
     "pydantic migration"),
    ("pkg-docker-slim",
     "Production images: python:3.12-slim with a builder stage",
     "Compile wheels in the builder, copy only the venv; don't ship gcc.",
     "The old image based on `python:3.12` was 1.1 GB. Now a builder stage installs `build-essential libpq-dev` "
     "and runs `uv sync --frozen --no-dev`; the final stage copies `/app/.venv` onto `python:3.12-slim` with "
     "only `libpq5`. Image size is 180 MB.",
     "docker images"),
    ("pkg-import-time",
     "Keep CLI startup fast: import heavy modules inside the functions that need them",
     "python -X importtime showed pandas costing 400 ms on every invocation.",
     "`acme --help` took 1.2 s. `python -X importtime -c 'import acme.cli' 2> imports.log` plus `tuna imports.log` "
     "showed pandas and boto3 imported at module level. Import them inside the commands that use them.",
     "startup cli"),
    ("pkg-build-requires",
     "'No module named setuptools_scm' when building: it belongs in build-system.requires",
     "Build dependencies are installed in an isolated env; runtime dependencies don't count.",
     "`python -m build` failed because `setuptools_scm` was only in the dev dependencies. Build-time needs go in "
     "`[build-system] requires = [\"setuptools>=68\", \"setuptools_scm>=8\"]`. `--no-isolation` hides the problem "
     "locally.",
     "build setuptools"),
]
