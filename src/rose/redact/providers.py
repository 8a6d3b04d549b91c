"""Provider tokens with a recognisable shape, as data: one row per documented token format.

A row is ``(kind, prefix, body, flags)``: the literal prefix the provider puts on its tokens, a regex for the rest
(alphabet and length range, or a fixed structure), and flags:

* ``b``: the prefix must start a token (no word character before it). Prefixes shorter than 4 characters or made
  of letters and digits only always need this (``sk-``, ``AKIA``); distinctive ones (``sk-ant-``, ``ghp_``,
  ``glpat-``) are found even glued to other text (``xxxxsk-ant-api03-...``).
* ``s``: stricter still, nor a base64 character before it (``+ / =``): short alphanumeric prefixes such as
  ``EAA`` or ``AQVN`` would otherwise turn up inside base64 blobs (images, lockfile hashes).
* ``m``: the token must mix letters and digits (rules out ``sk-this-is-a-long-identifier``).
* ``x``: no right boundary (the body pattern ends the token itself).

Every row gets a right boundary (no letter or digit right after the body) unless ``x``. The scan is one regex
over the prefixes (a trie, so one character per branch point) and a few ``match`` calls at each hit, so the cost
does not grow with the number of rows. Formats whose distinctive part sits in the middle or the end of
the token (Terraform's ``.atlasv1.``, Azure's key signatures, Mailchimp's ``-us12``), or that have no literal at
all but a fixed structure (Discord bot tokens, Asana PATs), are ``ANCHORED`` rows: an anchor regex starting with a
literal, and a pattern matched backwards from it.

Providers whose keys have no prefix and no structure (Cohere, Mistral, Datadog, Algolia, ...) cannot be told from
a hash by their shape; they are caught through their context (``COHERE_API_KEY=...``) in ``keywords``.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from rose.redact.core import PRIO_PROVIDER, Candidate, at_boundary, trie_pattern

AN = "A-Za-z0-9"
U = r"A-Za-z0-9_\-"  # base64url
B = "A-Za-z0-9+/"   # base64
H = "a-f0-9"
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

Row = tuple[str, str, str, str]
ROWS: list[Row] = [
    # -- AI and model providers
    ("anthropic-api-key", "sk-ant-", rf"[{U}]{{20,}}", ""),
    ("openrouter-api-key", "sk-or-v1-", rf"[{AN}]{{20,}}", ""),
    ("openai-api-key", "sk-proj-", rf"[{U}]{{20,}}", ""),
    ("openai-api-key", "sk-svcacct-", rf"[{U}]{{20,}}", ""),
    ("openai-api-key", "sk-admin-", rf"[{U}]{{20,}}", ""),
    ("openai-api-key", "sk-", rf"[{U}]{{20,}}", "m"),  # also DeepSeek, Stability, Helicone ...
    ("api-key", "sk_", rf"[{U}]{{24,}}", "m"),  # ElevenLabs, Freemius, Checkout, Clerk ...
    ("google-api-key", "AIza", rf"[{U}]{{30,}}", ""),
    ("google-oauth-token", "ya29.", rf"[{U}]{{20,}}", ""),
    ("google-client-secret", "GOCSPX-", rf"[{U}]{{20,}}", ""),
    ("huggingface-token", "hf_", rf"[{AN}]{{30,}}", ""),
    ("huggingface-token", "api_org_", rf"[{AN}]{{30,}}", ""),
    ("groq-api-key", "gsk_", rf"[{AN}]{{32,}}", ""),
    ("xai-api-key", "xai-", rf"[{AN}]{{32,}}", "b"),
    ("replicate-api-token", "r8_", rf"[{AN}]{{30,}}", ""),
    ("perplexity-api-key", "pplx-", rf"[{AN}]{{32,}}", ""),
    ("langsmith-api-key", "lsv2_", rf"[a-z]{{2}}_[{AN}_]{{30,}}", ""),
    ("tavily-api-key", "tvly-", rf"[{AN}-]{{30,}}", ""),
    ("pinecone-api-key", "pcsk_", rf"[{AN}_]{{30,}}", ""),
    ("fireworks-api-key", "fw_", rf"[{AN}]{{20,}}", "m"),
    ("together-api-key", "tgp_v1_", rf"[{U}]{{30,}}", ""),
    ("nvidia-api-key", "nvapi-", rf"[{U}]{{40,}}", ""),
    ("cerebras-api-key", "csk-", rf"[{AN}]{{40,}}", "m"),
    ("voyage-api-key", "pa-", rf"[{U}]{{40,}}", "bm"),
    ("anyscale-api-key", "esecret_", rf"[{AN}]{{20,}}", ""),
    # -- code hosting, CI/CD, registries
    *[("github-token", p, rf"[{AN}]{{30,}}", "") for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
    ("github-token", "github_pat_", rf"[{AN}_]{{30,}}", ""),
    *[("gitlab-token", p, rf"[{U}.]{{20,}}", "") for p in (
        "glpat-", "gldt-", "glptt-", "glrt-", "glrtr-", "gloas-", "glcbt-", "glimt-", "glsoat-", "glffct-",
        "glagent-", "glft-", "glwt-", "gltst-")],
    ("gitlab-token", "GR1348941", rf"[{U}]{{20,}}", ""),
    ("bitbucket-token", "ATBB", rf"[{AN}]{{28,}}", ""),
    ("atlassian-token", "ATATT3", rf"[{U}=]{{50,}}", ""),
    ("atlassian-token", "ATCTT3", rf"[{U}=]{{50,}}", ""),
    ("sourcegraph-token", "sgp_", rf"[{AN}_]{{32,}}", ""),  # also Segment public API tokens
    ("sourcegraph-token", "sgph_", rf"[{AN}_]{{32,}}", ""),
    ("circleci-token", "CCIPAT_", rf"[{U}]{{30,}}", ""),
    ("circleci-token", "CCIPRJ_", rf"[{U}]{{30,}}", ""),
    ("buildkite-token", "bkua_", rf"[{AN}]{{30,}}", ""),
    ("harness-token", "pat.", rf"[{U}]{{20,24}}\.[{AN}]{{24}}\.[{AN}]{{20}}", "b"),
    ("harness-token", "sat.", rf"[{U}]{{20,24}}\.[{AN}]{{24}}\.[{AN}]{{20}}", "b"),
    ("jfrog-token", "AKCp", rf"[{AN}]{{60,}}", "b"),
    ("jfrog-token", "cmVmdGtu", rf"[{AN}]{{40,}}", "b"),  # base64 of "reftkn": JFrog reference tokens
    ("octopus-api-key", "API-", r"[A-Z0-9]{25,32}", "b"),
    ("npm-token", "npm_", rf"[{AN}]{{30,}}", ""),
    ("pypi-token", "pypi-AgE", rf"[{U}]{{30,}}", ""),
    ("rubygems-token", "rubygems_", rf"[{H}]{{40,}}", ""),
    ("nuget-api-key", "oy2", r"[a-z0-9]{43}", "b"),
    ("clojars-token", "CLOJARS_", rf"[{AN}]{{40,}}", ""),
    ("crates-token", "cio", rf"[{AN}]{{32}}", "bm"),
    ("docker-token", "dckr_pat_", rf"[{U}]{{20,}}", ""),
    ("docker-token", "dckr_oat_", rf"[{U}]{{20,}}", ""),
    ("sonarqube-token", "squ_", rf"[{H}]{{40}}", ""),
    ("sonarqube-token", "sqp_", rf"[{H}]{{40}}", ""),
    ("sonarqube-token", "sqa_", rf"[{H}]{{40}}", ""),
    ("codacy-token", "cdy_", rf"[{AN}]{{30,}}", ""),
    # -- clouds and infrastructure
    *[("aws-access-key", p, r"[A-Z0-9]{16}", "b") for p in (
        "AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AIPA", "ANPA", "ANVA", "APKA", "AROA")],
    ("aws-access-key", "A3T", r"[A-Z0-9][A-Z0-9]{16}", "b"),
    ("aws-bedrock-key", "ABSK", rf"[{B}]{{60,}}={{0,2}}", "s"),  # long-term: base64 of "BedrockAPIKey-..."
    ("aws-bedrock-key", "bedrock-api-key-", rf"[{B}]{{40,}}={{0,2}}", ""),
    ("alibaba-access-key", "LTAI", rf"[{AN}]{{12,28}}", "bm"),
    ("tencent-secret-id", "AKID", rf"[{AN}]{{30,34}}", "bm"),
    ("yandex-token", "AQVN", rf"[{U}]{{30,40}}", "s"),
    ("yandex-token", "YCAJE", rf"[{U}]{{30,40}}", "s"),
    ("yandex-token", "YCM", rf"[{U}]{{38,}}", "sm"),
    ("yandex-token", "y0_", rf"[{U}]{{40,}}", "b"),
    ("yandex-token", "y1_", rf"[{U}]{{40,}}", "b"),
    ("yandex-token", "y2_", rf"[{U}]{{40,}}", "b"),
    ("yandex-token", "y3_", rf"[{U}]{{40,}}", "b"),
    ("yandex-token", "t1.", rf"[{U}.]{{80,}}", "b"),
    *[("digitalocean-token", p, rf"[{H}]{{64}}", "") for p in ("dop_v1_", "doo_v1_", "dor_v1_")],
    ("cloudflare-origin-ca-key", "v1.0-", rf"[{H}]{{24}}-[{H}]{{146}}", "b"),
    ("heroku-api-key", "HRKU-", rf"[{U}]{{30,}}", ""),
    ("fly-token", "fo1_", rf"[{U}]{{30,}}", ""),
    ("fly-token", "fm1a_", rf"[{B}_=-]{{40,}}", ""),
    ("fly-token", "fm1r_", rf"[{B}_=-]{{40,}}", ""),
    ("fly-token", "fm2_", rf"[{B}_=-]{{40,}}", ""),
    ("netlify-token", "nfp_", rf"[{AN}]{{30,}}", ""),
    ("netlify-token", "nfc_", rf"[{AN}]{{30,}}", ""),
    ("netlify-token", "nfo_", rf"[{AN}]{{30,}}", ""),
    ("render-api-key", "rnd_", rf"[{AN}]{{30,}}", "m"),
    ("scalingo-token", "tk-us-", rf"[{U}]{{40,}}", ""),
    *[("vault-token", p, rf"[{U}]{{24,}}", "") for p in ("hvs.", "hvb.", "hvr.")],
    ("vault-token", "s.", rf"[{AN}]{{24}}", "bm"),  # legacy service tokens
    ("vault-token", "b.", rf"[{AN}]{{24}}", "bm"),
    *[("doppler-token", p, rf"[{AN}.]{{40,}}", "") for p in (
        "dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.")],
    ("pulumi-token", "pul-", rf"[{H}]{{40}}", "b"),
    ("databricks-token", "dapi", rf"[{H}]{{32}}(?:-[0-9]+)?", "bm"),
    ("databricks-token", "dose", rf"[{H}]{{32}}(?:-[0-9]+)?", "bm"),
    ("tailscale-key", "tskey-", rf"[a-z]+-[{AN}]{{6,}}-[{AN}]{{16,}}", ""),
    ("defined-networking-key", "dnkey-", r"[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}", ""),
    ("openshift-token", "sha256~", rf"[{U}]{{40,}}", ""),
    ("prefect-api-key", "pnu_", rf"[{AN}]{{30,}}", ""),
    ("infracost-api-key", "ico-", rf"[{AN}]{{30,}}", "b"),
    ("age-secret-key", "AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}", ""),
    ("onepassword-token", "ops_eyJ", rf"[{B}_=-]{{100,}}", ""),
    ("onepassword-secret-key", "A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{6}-[A-Z0-9]{5}|[A-Z0-9]{11})(?:-[A-Z0-9]{5}){3}",
     "b"),
    ("terraform-token", "atlasv1.", rf"[{U}=]{{60,}}", "x"),  # full token is matched by the anchored row too
    ("planetscale-token", "pscale_tkn_", rf"[{U}.]{{32,}}", ""),
    ("planetscale-token", "pscale_pw_", rf"[{U}.]{{32,}}", ""),
    ("planetscale-token", "pscale_oauth_", rf"[{U}.]{{32,}}", ""),
    ("neon-api-key", "napi_", rf"[{AN}]{{40,}}", ""),
    ("supabase-token", "sbp_", rf"[{H}]{{40,}}", ""),
    ("supabase-token", "sbp_oauth_", rf"[{H}]{{40,}}", ""),
    ("supabase-token", "sb_secret_", rf"[{U}]{{20,}}", ""),
    ("xata-api-key", "xau_", rf"[{AN}]{{30,}}", ""),
    # -- payments and commerce
    *[("stripe-key", f"{a}_{b}_", rf"[{AN}]{{10,}}", "") for a in ("sk", "rk", "pk") for b in (
        "live", "test", "prod", "org", "sbox")],
    ("stripe-key", "whsec_", rf"[{B}=]{{20,}}", ""),
    ("square-token", "sq0atp-", rf"[{U}]{{22,}}", ""),
    ("square-token", "sq0csp-", rf"[{U}]{{40,}}", ""),
    ("square-token", "EAAA", rf"[{U}]{{60,}}", "sm"),
    ("facebook-token", "EAA", rf"[{AN}]{{60,}}", "sm"),
    ("instagram-token", "IGQV", rf"[{U}]{{100,}}", "s"),
    ("paypal-token", "access_token$production$", rf"[{AN}]{{16}}\$[{H}]{{32}}", ""),
    ("paypal-token", "access_token$sandbox$", rf"[{AN}]{{16}}\$[{H}]{{32}}", ""),
    ("razorpay-key", "rzp_live_", rf"[{AN}]{{14,}}", ""),
    ("razorpay-key", "rzp_test_", rf"[{AN}]{{14,}}", ""),
    ("flutterwave-key", "FLWSECK_TEST-", rf"[{H}]{{32}}-X", "x"),
    ("flutterwave-key", "FLWSECK-", rf"[{H}]{{32}}-X", "x"),
    ("flutterwave-key", "FLWPUBK_TEST-", rf"[{H}]{{32}}-X", "x"),
    ("flutterwave-key", "FLWPUBK-", rf"[{H}]{{32}}-X", "x"),
    ("flutterwave-key", "FLWSECK_TEST", rf"[{H}]{{12}}", ""),
    *[("shopify-token", p, r"[a-fA-F0-9]{32}", "") for p in ("shpat_", "shpca_", "shppa_", "shpss_")],
    ("easypost-api-key", "EZAK", rf"[{AN}]{{40,64}}", "bm"),
    ("easypost-api-key", "EZTK", rf"[{AN}]{{40,64}}", "bm"),
    ("shippo-token", "shippo_live_", rf"[{H}]{{40}}", ""),
    ("shippo-token", "shippo_test_", rf"[{H}]{{40}}", ""),
    ("duffel-token", "duffel_live_", rf"[{U}]{{40,}}", ""),
    ("duffel-token", "duffel_test_", rf"[{U}]{{40,}}", ""),
    ("payment-api-key", "live_", rf"[{U}]{{30,40}}", "bm"),  # Mollie, GoCardless, Lob
    ("payment-api-key", "test_", rf"[{AN}]{{30,40}}", "bm"),
    ("payment-api-key", "live_pub_", rf"[{H}]{{31}}", "b"),
    ("payment-api-key", "test_pub_", rf"[{H}]{{31}}", "b"),
    ("plaid-token", "access-production-", UUID, ""),
    ("plaid-token", "access-development-", UUID, ""),
    ("plaid-token", "access-sandbox-", UUID, ""),
    # -- messaging, email, collaboration
    ("slack-token", "xox", rf"[a-z](?:\.xox[a-z])?-[{AN}-]{{10,}}", ""),
    ("slack-token", "xoxe.xox", rf"[a-z]-[{AN}-]{{10,}}", ""),
    ("slack-token", "xapp-", rf"[0-9]-[{AN}-]{{10,}}", ""),
    ("sendgrid-api-key", "SG.", rf"[{U}]{{16,32}}\.[{U}]{{16,64}}", ""),
    ("twilio-api-key", "SK", r"[0-9a-fA-F]{32}", "bm"),
    ("twilio-account-sid", "AC", r"[0-9a-f]{32}", "bm"),
    ("mailgun-api-key", "key-", rf"[{AN}]{{32}}", "bm"),
    ("brevo-api-key", "xkeysib-", rf"[{H}]{{64}}-[{AN}]{{16}}", ""),
    ("brevo-api-key", "xsmtpsib-", rf"[{H}]{{64}}-[{AN}]{{16}}", ""),
    ("mandrill-api-key", "md-", rf"[{U}]{{22}}", "bm"),
    ("intercom-token", "dG9rOj", rf"[{B}]{{40,}}={{0,2}}", "b"),  # base64 of "tok:"
    ("hubspot-token", "pat-na1-", UUID, ""),
    ("hubspot-token", "pat-eu1-", UUID, ""),
    ("hubspot-token", "pat-ap1-", UUID, ""),
    ("airtable-token", "pat", rf"[{AN}]{{14}}\.[{H}]{{64}}", "b"),
    ("notion-token", "ntn_", rf"[{AN}]{{30,}}", ""),
    ("notion-token", "secret_", rf"[{AN}]{{40,}}", "bm"),
    ("linear-api-key", "lin_api_", rf"[{AN}]{{30,}}", ""),
    ("linear-api-key", "lin_oauth_", rf"[{AN}]{{30,}}", ""),
    ("clickup-token", "pk_", r"[0-9]{5,12}_[A-Z0-9]{32}", "b"),
    ("trello-token", "ATTA", rf"[{AN}]{{60,}}", "b"),
    ("figma-token", "figd_", rf"[{U}]{{30,}}", ""),
    ("figma-token", "figu_", rf"[{U}]{{30,}}", ""),
    ("figma-token", "figo_", rf"[{U}]{{30,}}", ""),
    ("typeform-token", "tfp_", rf"[{U}.=]{{40,}}", ""),
    ("contentful-token", "CFPAT-", rf"[{U}]{{40,}}", ""),
    ("postman-api-key", "PMAK-", r"[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", ""),
    ("pinterest-token", "pina_", rf"[{AN}]{{60,}}", ""),
    ("twitter-bearer-token", "AAAAAAAAAAAAAAAAAAAAA", rf"[{AN}%]{{30,}}", ""),
    ("dropbox-token", "sl.", rf"[{U}]{{120,}}", "b"),
    ("dropbox-token", "sl.u.", rf"[{U}]{{120,}}", "b"),
    ("salesforce-token", "00D", rf"[{AN}]{{12,15}}![{AN}._]{{60,}}", "b"),
    ("mapbox-token", "sk.eyJ", rf"[{U}.]{{50,}}", ""),
    ("frameio-token", "fio-u-", rf"[{U}]{{40,}}", ""),
    ("intra42-secret", "s-s4t2ud-", rf"[{H}]{{64}}", ""),
    ("intra42-secret", "s-s4t2af-", rf"[{H}]{{64}}", ""),
    ("adafruit-key", "aio_", rf"[{AN}]{{28}}", ""),
    ("readme-api-key", "rdme_", rf"[{AN}]{{60,}}", ""),
    ("settlemint-token", "sm_pat_", rf"[{AN}]{{16,}}", ""),
    ("settlemint-token", "sm_aat_", rf"[{AN}]{{16,}}", ""),
    ("settlemint-token", "sm_sat_", rf"[{AN}]{{16,}}", ""),
    # -- observability and product tools
    ("sentry-token", "sntrys_", rf"[{B}=_]{{40,}}", ""),
    ("sentry-token", "sntryu_", rf"[{H}]{{40,}}", ""),
    ("grafana-token", "glc_", rf"[{B}=]{{32,}}", ""),
    ("grafana-token", "glsa_", rf"[{AN}]{{32}}_[A-Fa-f0-9]{{8}}", ""),
    ("grafana-token", "eyJrIjoi", rf"[{B}_=-]{{40,}}", "b"),  # base64 of {"k":" (legacy API keys)
    *[("newrelic-api-key", f"NR{p}-", rf"[{U}]{{19,40}}", "b") for p in ("AK", "AA", "II", "IQ", "JS", "RA", "SP")],
    ("dynatrace-token", "dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}", ""),
    ("dynatrace-token", "dt0s01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}", ""),
    ("honeycomb-key", "hcaik_", rf"[{AN}]{{40,}}", ""),
    ("honeycomb-key", "hcxik_", rf"[{AN}]{{40,}}", ""),
    ("honeycomb-key", "hcamk_", rf"[{AN}]{{40,}}", ""),
    ("honeycomb-key", "hcxlk_", rf"[{AN}]{{40,}}", ""),
    *[("launchdarkly-key", p, UUID, "b") for p in ("sdk-", "mob-", "api-")],
    ("firebase-server-key", "AAAA", rf"[{U}]{{7}}:[{U}]{{100,}}", "b"),
    ("authress-key", "sc_", r"[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}", "b"),
    ("authress-key", "ext_", r"[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}", "b"),
    ("authress-key", "authress_", r"[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
     "b"),
    ("adobe-client-secret", "p8e-", rf"[{AN}]{{32}}", "bm"),
    ("mailgun-api-key", "pubkey-", rf"[{H}]{{32}}", ""),
    ("stytch-secret", "secret-live-", rf"[{U}=]{{20,}}", ""),
    ("stytch-secret", "secret-test-", rf"[{U}=]{{20,}}", ""),
]

# Tokens whose distinctive part is in the middle or at the end: (kind, anchor regex starting with a literal, the
# part before the anchor matched backwards from it to a token boundary, boundary needed?).
ANCHORED: list[tuple[str, str, str, bool]] = [
    ("terraform-token", r"\.atlasv1\.[A-Za-z0-9_=-]{60,}", r"[A-Za-z0-9]{14}$", True),
    ("azure-client-secret", r"Q~[A-Za-z0-9_~.-]{31,34}", r"[A-Za-z0-9_~.]{3}[0-9]$", True),
    # Telegram tokens are often glued to a path (https://api.telegram.org/bot<id>:AA...): no boundary needed
    ("telegram-bot-token", r":AA[A-Za-z0-9_-]{30,}", r"(?<![0-9])[0-9]{8,10}$", False),
    ("mailchimp-api-key", r"-us[0-9]{1,2}(?![0-9])", r"[0-9a-f]{32}$", True),
    ("google-oauth-token", r"//0[0-9A-Za-z_-]{30,}", r"1$", True),
    ("openai-api-key", r"T3BlbkFJ[A-Za-z0-9_-]{20,}", r"sk-[A-Za-z0-9_-]*$", True),
    ("maxmind-license-key", r"_mmk(?![A-Za-z0-9])", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}$", True),
    # Dropbox long-lived tokens: 11 characters, ten A's, 43 base64url characters
    ("dropbox-token", r"AAAAAAAAAA[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", r"[A-Za-z0-9]{11}$", True),
    # Azure identifiable keys: a service signature inside an 86-character base64 key ending "=="; Functions
    # keys carry "AzFu" after 44 characters.
    *[("azure-key", re.escape(sig) + r"[A-Za-z0-9+/]{5,12}==", r"[A-Za-z0-9+/]{70,80}$", True) for sig in (
        "+ASt", "+ABa", "+AMC", "+ASb", "+AEh", "+ARm", "AzCa", "AzSe", "ACDb", "AIoT", "APIM", "+ACR", "AZEG")],
    ("azure-function-key", r"AzFu[A-Za-z0-9_-]{4,8}==", r"[A-Za-z0-9_-]{44}$", True),
    ("new-relic-license-key", r"NRAL(?![A-Za-z0-9])", r"[a-fA-F0-9]{36}$", True),
    ("twitter-access-token", r"-[A-Za-z0-9]{40}(?![A-Za-z0-9])", r"(?<![0-9])[0-9]{15,25}$", True),
]

# Fixed structures with no literal prefix, anchored on their punctuation (the regex engine jumps between literals):
# Discord bot tokens (base64 of the bot's snowflake id, a 6-character timestamp, an HMAC), Asana personal access
# tokens (1/<16 digits>:<32 hex>, 2/<16 digits>/<16 digits>:<32 hex>), Mailgun private keys (32, 8, 8 hex).
ANCHORED += [
    ("discord-bot-token", r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
     r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}$", False),
    ("asana-token", r":[0-9a-f]{32}(?![A-Za-z0-9])", r"(?<![0-9/])[0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?$", False),
    ("mailgun-api-key", r"-[0-9a-f]{8}-[0-9a-f]{8}(?![A-Za-z0-9-])", r"(?<![A-Za-z0-9-])[0-9a-f]{32}$", False),
]


# Distinctive prefixes that still must start a token: otherwise they also occur inside ordinary words.
_BOUNDARY_ALWAYS = frozenset({"key-", "secret_", "xai-", "pul-", "pat.", "sat.", "live_", "test_", "API-"})


@functools.lru_cache(maxsize=1)
def _compiled() -> tuple[re.Pattern[str], dict[str, list[tuple]], list[tuple]]:
    specs = []
    for kind, prefix, body, flags in ROWS:
        tail = "" if "x" in flags else "(?![A-Za-z0-9])"
        boundary = "s" if "s" in flags else ("b" if ("b" in flags or len(prefix) < 4 or prefix.isalnum()
                                                     or prefix in _BOUNDARY_ALWAYS) else "")
        check: Callable[[str], bool] | None = _mixed if "m" in flags else None
        specs.append((prefix, kind, re.compile(re.escape(prefix) + body + tail), check, boundary))
    prefixes = {s[0] for s in specs}
    anchors = {p for p in prefixes if not any(o != p and p.startswith(o) for o in prefixes)}
    table = {a: sorted((s for s in specs if s[0].startswith(a)), key=lambda s: -len(s[0])) for a in anchors}
    anchored = [(kind, re.compile(a), re.compile(back), need, _leading_literal(a)) for kind, a, back, need in ANCHORED]
    return re.compile(trie_pattern(anchors)), table, anchored


def _leading_literal(pattern: str) -> str:
    """The literal every match of `pattern` begins with ("" if none): where it does not occur, the pattern cannot
    match, so its scan is skipped (exact, and most texts hold none of them: ~30 scans a text otherwise)."""
    sre_parse, sre_constants = _parser()
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return ""   # a literal that does not match only itself
    lead = []
    for op, arg in parsed:
        if op is not sre_constants.LITERAL:
            break
        lead.append(chr(arg))
    return "".join(lead)


def _parser() -> tuple:
    import importlib

    try:   # the regex parser's own reading (private modules: 3.11 moved them, 3.10 has them at the top)
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


def _reach(pattern: str) -> tuple[set[str], int] | None:
    """Every character a match of `pattern` can consume, and the fewest characters a match consumes, read from the
    regex parser's own tree; None for a pattern holding anything else than literals, ranges, repeats, groups,
    alternations and zero-width assertions (a case-insensitive flag, a class like \\w or [^...], a dot): then no
    scan is skipped for it."""
    sre_parse, c = _parser()
    parsed = sre_parse.parse(pattern)
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    chars: set[str] = set()

    def least(items) -> int | None:   # noqa: ANN001 - the parser's private SubPattern
        total = 0
        for op, arg in items:
            if op is c.LITERAL:
                chars.add(chr(arg))
                total += 1
            elif op is c.IN:
                for item_op, item in arg:
                    if item_op is c.LITERAL:
                        chars.add(chr(item))
                    elif item_op is c.RANGE:
                        chars.update(chr(x) for x in range(item[0], item[1] + 1))
                    else:
                        return None   # NEGATE, CATEGORY: not a set of characters read here
                total += 1
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                inner = least(arg[2])
                if inner is None:
                    return None
                total += arg[0] * inner
            elif op is c.SUBPATTERN:
                inner = least(arg[3])
                if inner is None or arg[1] or arg[2]:   # a group that sets or clears flags: not read here
                    return None
                total += inner
            elif op is c.BRANCH:
                widths = [least(alt) for alt in arg[1]]
                if any(w is None for w in widths):
                    return None
                total += min(w for w in widths if w is not None)
            elif op in (c.ASSERT, c.ASSERT_NOT, c.AT):
                continue   # consumes nothing (its own characters are not part of the match)
            else:
                return None
        return total

    width = least(parsed)
    return None if width is None else (chars, width)


def _run_gate(reaches: list[tuple[set[str], int] | None]) -> tuple[re.Pattern[str], set[str]] | None:
    """A regex for the runs of text that can hold a match of any of these patterns, and their characters: a match
    consumes only its own characters, at least its fewest of them, so it lies inside a run at least the fewest
    width over all of them long, of characters from the union of their sets. None (no gate) when one of them
    cannot be read."""
    if not reaches:
        return None
    chars: set[str] = set()
    widths = []
    for reach in reaches:
        if reach is None:
            return None
        chars |= reach[0]
        widths.append(reach[1])
    if min(widths) < 2:
        return None
    cls = "".join(re.escape(ch) for ch in sorted(chars))
    return re.compile(f"(?<![{cls}])[{cls}]{{{min(widths)},}}"), chars   # each run whole, from start to end


@functools.lru_cache(maxsize=1)
def _gates() -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    """The runs where a row can match (the prefix scan looks only inside them) and the runs an anchored finding
    needs (none in the text: no anchored rule is scanned). A row's match starts at its prefix and consumes it, and
    every prefix's characters are in the runs' set, so a prefix met outside those runs starts no match and the
    scan inside each run meets the hits a scan of the whole text meets there; an anchored finding holds a match of
    its anchor and one of its backward pattern, each a run of its own characters (the longer of the two counts).
    tests/test_redact_gates.py holds the gated detector equal to the ungated one."""
    _anchor_re, table, _anchored = _compiled()
    bodies: dict[str, tuple[set[str], int] | None] = {}   # 85 bodies for 257 rows: each parsed once (~40 us each)
    row_reaches: list[tuple[set[str], int] | None] = []
    for _kind, prefix, body, _flags in ROWS:   # a row's regex: its prefix's literal, its body, a lookahead
        reach = bodies[body] = bodies[body] if body in bodies else _reach(body)
        row_reaches.append(None if reach is None else (reach[0] | set(prefix), reach[1] + len(prefix)))
    rows = _run_gate(row_reaches)
    if rows is not None and not all(set(anchor) <= rows[1] for anchor in table):
        rows = None   # a prefix with a character outside the runs: it could straddle one (never so here)
    reaches: list[tuple[set[str], int] | None] = []
    for _kind, anchor, back, _need in ANCHORED:
        a, b = _reach(anchor), _reach(back)
        reaches.append(None if a is None or b is None else (a[0] | b[0], max(a[1], b[1])))
    anchored = _run_gate(reaches)
    return None if rows is None else rows[0], None if anchored is None else anchored[0]


def kinds() -> set[str]:
    return {r[0] for r in ROWS} | {a[0] for a in ANCHORED}


_DIGITS = frozenset("0123456789")
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-")


def _mixed(token: str) -> bool:
    return any(c in _DIGITS for c in token) and any(c.isalpha() for c in token)


def _hits(anchor_re: re.Pattern[str], runs: re.Pattern[str] | None, text: str) -> Iterator[re.Match[str]]:
    """The prefix scan's hits: over the whole text without a gate, else inside each run that can hold a row's
    match (a plain scan of prose costs about 45 ns a character; the runs' scan a third of that)."""
    if runs is None:
        yield from anchor_re.finditer(text)
        return
    for run in runs.finditer(text):
        yield from anchor_re.finditer(text, run.start(), run.end())


def find(text: str, out: list[Candidate]) -> None:
    anchor_re, table, anchored = _compiled()
    row_runs, anchored_runs = _gates()
    last_end = -1
    failed_until: dict[int, int] = {}  # spec id -> end of a run it already failed to validate on
    for hit in _hits(anchor_re, row_runs, text):
        pos = hit.start()
        if pos < last_end:
            continue
        loose = at_boundary(text, pos)
        strict = pos == 0 or text[pos - 1] not in _BASE64_CHARS or (loose and text[pos - 1] == "=")
        for spec in table[hit.group()]:
            prefix, kind, pattern, check, boundary = spec
            if (boundary == "b" and not loose) or (boundary == "s" and not strict):
                continue
            if not text.startswith(prefix, pos) or pos < failed_until.get(id(spec), -1):
                continue
            tm = pattern.match(text, pos)
            if tm is None:
                continue
            if check is not None and not check(tm.group()):
                failed_until[id(spec)] = tm.end()  # any later hit inside this run is a substring: fails too
                continue
            out.append((pos, tm.end(), PRIO_PROVIDER, kind))
            last_end = tm.end()
            break
    if anchored_runs is not None and anchored_runs.search(text) is None:
        return   # no run long enough for any anchored finding (most prose)
    for kind, pattern, back, need, lead in anchored:
        if lead not in text:
            continue
        for am in pattern.finditer(text):
            bm = back.search(text, max(0, am.start() - 96), am.start())
            if bm is not None and (not need or at_boundary(text, bm.start())):
                out.append((bm.start(), am.end(), PRIO_PROVIDER, kind))
