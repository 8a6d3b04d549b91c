#!/usr/bin/env python3
"""Probe the redactor by class of secret, the way people paste them: credential files, command lines, encodings.

    PYTHONPATH=src python bench/probe_redact.py [--seed 1] [--per-class 12] [--show]

Each probe is written from the format's own documentation (netrc(5), libpq's password file, the AWS CLI and Docker
config files, npm's .npmrc, MySQL client options, RFC 7617 Basic auth, RFC 6265 cookies, AWS SigV4 presigned URLs,
...), with secrets drawn from a seeded RNG. Prints recall (share of secrets gone from the output) per class and the
ordinary texts that came back changed (false positives).
"""
from __future__ import annotations

import argparse
import base64
import random
import string
import sys
import urllib.parse
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from rose.redact import redact

ALNUM = string.ascii_letters + string.digits
PUNCT = "!#%*-_.+=@^~"


def rand(rng: random.Random, n: int, chars: str = ALNUM) -> str:
    while True:
        s = "".join(rng.choice(chars) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def human_pw(rng: random.Random) -> str:
    """What people really use: words with digits and a symbol, short random strings."""
    word = rng.choice(["summer", "Dragon", "monkey", "Welcome", "qwerty", "Orange", "tiger", "Spring"])
    return rng.choice([word + str(rng.randrange(10, 9999)) + rng.choice("!#.*"),
                       rand(rng, rng.randrange(8, 14), ALNUM + PUNCT), word.capitalize() + "_" + rand(rng, 4)])


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


Probe = Callable[[random.Random], tuple[str, list[str]]]


def _netrc(rng):
    host, user, pw = rng.choice(["api.heroku.com", "git.example.org", "ftp.acme.io"]), rand(rng, 6), human_pw(rng)
    return rng.choice([
        f"machine {host} login {user} password {pw}\n",
        f"machine {host}\n\tlogin {user}\n\tpassword {pw}\n",
        f"machine {host} password {pw} login {user}\n",
        f"machine {host} login {user} account acct1 password {pw}\n",
        f"default login anonymous password {pw}\n",
        f"machine a.example.com login x password y1z2w3q4\nmachine {host}\n  login {user}\n  password {pw}\n",
    ]), [pw]


def _pgpass(rng):
    pw = human_pw(rng).replace(":", "")
    line = rng.choice([f"db.internal:5432:appdb:app:{pw}", f"localhost:*:*:postgres:{pw}",
                       f"*:*:*:replicator:{pw}", f"10.0.0.7:6432:shop:shop_rw:{pw}"])
    return rng.choice([f"{line}\n", f"$ cat ~/.pgpass\n{line}\n", f"echo '{line}' >> ~/.pgpass\n"]), [pw]


def _aws_files(rng):
    secret = rand(rng, 40, ALNUM + "+/")
    return f"[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPL3\naws_secret_access_key = {secret}\n", [secret]


def _aws_session(rng):
    session = rand(rng, 300, ALNUM + "+/") + "=="
    key_id = "ASIA" + rand(rng, 16, string.ascii_uppercase + "234567")
    return f"[tmp]\naws_access_key_id = {key_id}\naws_session_token = {session}\n", [session]


def _docker_config(rng):
    user, pw = rng.choice(["alice", "ci-bot", "deploy"]), human_pw(rng)
    auth = b64(f"{user}:{pw}")
    return rng.choice([
        (f'{{\n\t"auths": {{\n\t\t"https://index.docker.io/v1/": {{\n\t\t\t"auth": "{auth}"\n\t\t}}\n\t}}\n}}\n', [auth]),
        (f'{{"auths":{{"ghcr.io":{{"auth":"{auth}"}}}}}}', [auth]),
        (f'{{"auths": {{"registry.example.com": {{"username": "{user}", "password": "{pw}"}}}}}}', [pw]),
    ])


def _npmrc(rng):
    tok, pw = "npm_" + rand(rng, 36), human_pw(rng)
    auth = b64(f"me:{pw}")
    return rng.choice([
        (f"//registry.npmjs.org/:_authToken={tok}\n", [tok]),
        (f"//npm.pkg.github.com/:_authToken={pw}\n", [pw]),
        (f"_auth={auth}\nalways-auth=true\n", [auth]),
        (f"//registry.example.com/:_password={b64(pw)}\n//registry.example.com/:username=me\n", [b64(pw)]),
        (f"//nexus.example.com/repository/npm/:_auth={auth}\n", [auth]),
    ])


def _pip(rng):
    pw = human_pw(rng).replace("@", "")
    q = urllib.parse.quote(pw, safe="")
    return rng.choice([
        f"[global]\nindex-url = https://build:{q}@pypi.example.com/simple\n",
        "[distutils]\nindex-servers = pypi\n\n[pypi]\nrepository = https://upload.pypi.org/legacy/\n"
        f"username = __token__\npassword = {q}\n",
        f"pip install --extra-index-url https://u:{q}@nexus.example.com/simple pkg\n",
    ]), [q]


def _git_credentials(rng):
    tok = rng.choice(["ghp_" + rand(rng, 36), rand(rng, 20), human_pw(rng).replace("@", "").replace("#", "")])
    q = urllib.parse.quote(tok, safe="")
    return rng.choice([f"https://alice:{q}@github.com\n", f"https://oauth2:{q}@gitlab.example.com\n",
                       f"git clone https://x-access-token:{q}@github.com/acme/app.git\n"]), [q]


def _maven(rng):
    pw = human_pw(rng).replace("<", "").replace("&", "")
    return rng.choice([
        f"<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n      <username>deploy</username>\n"
        f"      <password>{pw}</password>\n    </server>\n  </servers>\n</settings>\n",
        f"<server><id>x</id><username>u</username><passphrase>{pw}</passphrase></server>\n",
        f"<proxy><host>p</host><password>{pw}</password></proxy>\n",
    ]), [pw]


def _gradle(rng):
    pw = human_pw(rng)
    key = rng.choice(["ossrhPassword", "signing.password", "systemProp.http.proxyPassword", "mavenPass",
                      "artifactory_password", "nexusPassword", "signingKey", "org.gradle.jvmargs.secret"])
    return f"org.gradle.parallel=true\n{key}={pw}\n", [pw]


def _dotenv(rng):
    pw = rand(rng, rng.randrange(10, 30))
    key = rng.choice(["DB_PW", "MYSQL_ROOT_PW", "PW", "ADMIN_PW", "SMTP_PASSWD", "REDIS_AUTH", "STRIPE_SK",
                      "NEXTAUTH_SECRET", "APP_KEY", "SESSION_SALT", "ENCRYPTION_SALT", "COOKIE_SIGNING",
                      "HASH_SALT", "JWT_SIGNING", "RAILS_MASTER_KEY", "DJANGO_SECRET", "PASSPHRASE", "PIN_CODE",
                      "LDAP_BIND_PW", "MONGO_INITDB_ROOT_PASSWORD", "PRIVATE_KEY_PASS", "WEBHOOK_SIGNING"])
    if key == "APP_KEY":
        pw = "base64:" + b64(rand(rng, 32))
    return rng.choice([f"{key}={pw}\n", f'{key}="{pw}"\n', f"export {key}='{pw}'\n"]), [pw]


def _kubeconfig(rng):
    key = b64("-----BEGIN RSA PRIVATE KEY-----\n" + rand(rng, 64, ALNUM + "+/") + "\n-----END RSA PRIVATE KEY-----\n")
    tok = rand(rng, 40)
    pw = human_pw(rng)
    return rng.choice([
        ("users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJU\n"
         f"    client-key-data: {key}\n", [key]),
        (f"users:\n- name: sa\n  user:\n    token: {tok}\n", [tok]),
        (f"users:\n- name: basic\n  user:\n    username: admin\n    password: {pw}\n", [pw]),
    ])


def _gcp(rng):
    body = rand(rng, 64, ALNUM + "+/")
    return ('{\n  "type": "service_account",\n  "project_id": "p",\n  "private_key": "-----BEGIN PRIVATE KEY-----\\n'
            + body + '\\n-----END PRIVATE KEY-----\\n",\n  "client_email": "sa@p.iam.gserviceaccount.com"\n}\n'), [body]


def _pem_variants(rng):
    body = rand(rng, 64, ALNUM + "+/")
    label = rng.choice(["OPENSSH PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "RSA PRIVATE KEY", "EC PRIVATE KEY"])
    block = f"-----BEGIN {label}-----\n{body}\n{rand(rng, 40, ALNUM + '+/')}\n-----END {label}-----"
    return rng.choice([
        "ssh_key: |\n  " + block.replace("\n", "\n  ") + "\n",
        '"key": "' + block.replace("\n", "\\n") + '"\n',
        '"key": "' + block.replace("\n", "\\\\n") + '"\n',  # escaped twice: JSON inside a JSON string
        "key = (\n    \"" + block.replace("\n", "\\n\"\n    \"") + "\"\n)\n",
    ]), [body]


def _mysql_cli(rng):
    pw = human_pw(rng).replace("'", "")
    return rng.choice([f"mysql -u root -p'{pw}' shop\n", f"mysql -uroot -p{pw} -h 127.0.0.1\n",
                       f"mysqldump -u admin -p{pw} --all-databases > dump.sql\n",
                       f'mysql --user=app --password="{pw}" app\n', f"mysqladmin -u root -p{pw} status\n"]), [pw]


def _cli_other(rng):
    pw = human_pw(rng).replace("'", "").replace('"', "")
    return rng.choice([
        f"PGPASSWORD={pw} psql -h db -U app\n", f"PGPASSWORD='{pw}' pg_dump -h db app > a.sql\n",
        f"sshpass -p '{pw}' scp a host:\n", f"redis-cli -h cache -a {pw} ping\n",
        f"redis-cli -a '{pw}' --no-auth-warning info\n",
        f"openssl pkcs12 -export -in c.pem -passout pass:{pw} -out c.p12\n",
        f"keytool -importcert -keystore ks.jks -storepass {pw} -file c.pem\n",
        f"ldapsearch -x -D cn=admin,dc=example,dc=org -w {pw} -b dc=example,dc=org\n",
        f"smbclient //srv/share -U alice%{pw}\n", f"sqlcmd -S db -U sa -P '{pw}' -Q 'select 1'\n",
        f"docker login -u ci -p {pw} registry.example.com\n",
        f"echo '{pw}' | docker login --username ci --password-stdin ghcr.io\n",
        f"htpasswd -b -c .htpasswd alice {pw}\n",
    ]), [pw]


def _curl(rng):
    pw, tok = human_pw(rng).replace("'", ""), rand(rng, 32)
    return rng.choice([
        (f"curl -u alice:{pw} https://api.example.com\n", [pw]),
        (f"curl -H 'X-Api-Key: {tok}' https://api.example.com\n", [tok]),
        (f'curl -H "X-Auth-Token: {tok}" https://x\n', [tok]),
        (f"curl -b 'session={tok}' https://app.example.com\n", [tok]),
        (f'curl --cookie "sid={tok}; lang=en" https://app.example.com\n', [tok]),
        (f"wget --header='Authorization: token {tok}' https://x\n", [tok]),
        (f"http POST api.example.com/x X-API-Token:{tok}\n", [tok]),
    ])


def _htpasswd(rng):
    salt, h = rand(rng, 8, ALNUM + "./"), rand(rng, 22, ALNUM + "./")
    line = rng.choice([f"alice:$apr1${salt}${h}", f"bob:$2y$05${rand(rng, 53, ALNUM + './')}",
                       f"carol:{{SHA}}{b64(rand(rng, 20))[:27]}=", f"dave:$6${salt}${rand(rng, 86, ALNUM + './')}"])
    secret = line.split(":", 1)[1]
    return rng.choice([f"{line}\n", f"$ cat /etc/nginx/.htpasswd\n{line}\n"]), [secret]


def _shadow(rng):
    h = f"$6${rand(rng, 16, ALNUM + './')}${rand(rng, 86, ALNUM + './')}"
    return f"root:{h}:19700:0:99999:7:::\n", [h]


def _url_encoded(rng):
    pw = rand(rng, 6) + rng.choice(["=", "+", "/", "@", "&"]) + rand(rng, 6)
    q = urllib.parse.quote(pw, safe="")
    return rng.choice([f"postgres://app:{q}@db:5432/app\n", f"GET /login?user=a&password={q}&next=/\n",
                       f"redirect_uri=https%3A%2F%2Fapp%2Fcb&client_secret={q}&grant_type=x\n",
                       f"body: username=alice&password={q}\n"]), [q]


def _basic(rng):
    cred = b64(f"{rng.choice(['alice', 'ci', 'admin'])}:{human_pw(rng)}")
    return rng.choice([f"Authorization: Basic {cred}\n", f"-H 'Authorization: Basic {cred}'\n",
                       f'headers = {{"Authorization": "Basic {cred}"}}\n',
                       f"> GET / HTTP/1.1\n> Host: x\n> Authorization: Basic {cred}\n"]), [cred]


def _hex(rng):
    h = rand(rng, 64, "0123456789abcdef")
    return rng.choice([f"SECRET_KEY_BASE={h}\n", f"hmac_secret: {h}\n", f'"signingKey": "{h}"\n',
                       f"webhook secret is {h}\n"]), [h]


def _split(rng):
    a, b = "ghp_" + rand(rng, 18), rand(rng, 18)
    pw1, pw2 = rand(rng, 8), rand(rng, 8)
    return rng.choice([
        (f'token = "{a}" + "{b}"\n', [a, b]),
        (f'password = ("{pw1}"\n            "{pw2}")\n', [pw1, pw2]),
        (f"const apiKey = '{pw1}' +\n  '{pw2}';\n", [pw1, pw2]),
    ])


def _escaped(rng):
    pw = rand(rng, 5) + rng.choice(['\\"', "\\'", "\\\\"]) + rand(rng, 5)
    return rng.choice([f'password = "{pw}"\n', f"{{\"password\": \"{pw}\"}}\n",
                       f'db_password: "{pw}"\n']), [pw]


def _exceptions(rng):
    pw, tok = human_pw(rng).replace("'", ""), rand(rng, 32)
    return rng.choice([
        (f"ValueError: invalid credentials {{'user': 'bob', 'password': '{pw}'}}\n", [pw]),
        ("Traceback (most recent call last):\n  File \"app.py\", line 12, in <module>\n"
         f"    db.connect(host='db', password='{pw}')\n"
         f"psycopg2.OperationalError: connection failed\n", [pw]),
        ("TypeError: Cannot read properties of undefined (reading 'x')\n"
         f"    at login (auth.js:3:9) {{ apiKey: '{tok}' }}\n", [tok]),
        (f"requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://api.x.io/v1/me?api_key={tok}\n", [tok]),
        (f"Error: Request failed: Settings(db_password=SecretStr('**********'), token='{tok}')\n", [tok]),
        (f"KeyError: 'Bearer {tok}'\n", [tok]),
    ])


def _cookies(rng):
    tok = rand(rng, 32, ALNUM + "-_")
    name = rng.choice(["connect.sid", "_myapp_session", "PHPSESSID", "__Host-next-auth.session-token", "remember_user_token",
                       "laravel_session", "JSESSIONID", "_gh_sess", "AUTH", "sb-access-token", "user_session"])
    return rng.choice([f"Cookie: {name}={tok}; theme=dark\n", f"Set-Cookie: {name}={tok}; Path=/; HttpOnly\n",
                       f"set-cookie: {name}={tok}\n", f"document.cookie = \"{name}={tok}; path=/\";\n",
                       f"-H 'cookie: {name}={tok}'\n"]), [tok]


def _query(rng):
    h, tok = rand(rng, 64, "0123456789abcdef"), rand(rng, 40, ALNUM + "-_")
    sig = urllib.parse.quote(b64(rand(rng, 32)), safe="")
    return rng.choice([
        (f"https://x.s3.amazonaws.com/a.png?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20240101T000000Z"
         f"&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature={h}\n", [h]),
        (f"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-01-01&sig={sig}\n", [sig]),
        (f"https://graph.facebook.com/me?access_token={tok}\n", [tok]),
        (f"https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Signature={h}\n", [h]),
        (f"https://d111.cloudfront.net/a.jpg?Expires=1700000000&Signature={tok}&Key-Pair-Id=K2JCJMDEHXQW5F\n", [tok]),
        (f"wss://stream.example.com/ws?token={tok}\n", [tok]),
        (f"GET /callback?code={tok}&state=xyz HTTP/1.1\n", [tok]),
        (f"https://api.example.com/v2/data?apikey={tok}&fmt=json\n", [tok]),
    ])


CLASSES: dict[str, Probe] = {
    "netrc": _netrc, "pgpass": _pgpass, "aws-files": _aws_files, "aws-session": _aws_session,
    "docker-config": _docker_config, "npmrc": _npmrc, "pip-pypirc": _pip,
    "git-credentials": _git_credentials, "maven": _maven, "gradle": _gradle, "dotenv-names": _dotenv,
    "kubeconfig": _kubeconfig, "gcp-json": _gcp, "pem-variants": _pem_variants, "mysql-cli": _mysql_cli,
    "cli-other": _cli_other, "curl": _curl, "htpasswd": _htpasswd, "shadow": _shadow,
    "url-encoded": _url_encoded, "basic-auth": _basic, "hex": _hex, "split": _split, "escaped": _escaped,
    "exceptions": _exceptions, "cookies": _cookies, "query-strings": _query,
}


def negatives(rng: random.Random) -> list[tuple[str, str]]:
    sha = rand(rng, 40, "0123456789abcdef")
    return [
        ("git-sha", f"HEAD is now at {sha[:7]} fix: token refresh\ncommit {sha}\n"),
        ("uuid", "request_id=3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c session=6d7e8f90-1a2b-4c3d-9e8f-7a6b5c4d3e2f\n"),
        ("integrity", f'"integrity": "sha512-{b64(rand(rng, 64))}"\n'),
        ("css", ".btn { color: #ff00aa; background: #1e1e2e; border: 1px solid #3c3c3c; }\n"),
        ("test-ids", "tests/test_auth.py::test_password_reset_flow[token-expired] PASSED\n"),
        ("prose-password", "The password reset flow sends a token by email; the key rotation runs nightly.\n"),
        ("code-token-var", "def refresh(token):\n    if not token:\n        return None\n    key = token.split('.')[0]\n"),
        ("mysql-flags", "mysql -u root -p shop\nmysql -h db -P 3306 -p\nmysqldump --single-transaction -p app\n"),
        ("netrc-doc", "The .netrc file holds lines like: machine <host> login <user> password <password>\n"),
        ("pgpass-doc", "Each line of ~/.pgpass is hostname:port:database:username:password\n"),
        ("times", "12:30:45 up 3 days, load 0.5; build 2024:05:01:12:00 ok\nlocalhost:5432:db opened\n"),
        ("ipv6", "listening on [fe80::1ff:fe23:4567:890a]:8080 and ::1:9000\n"),
        ("url-plain", "https://docs.example.com/a?page=2&sort=desc&lang=en#top\n"),
        ("cookie-plain", "Set-Cookie: theme=dark; Path=/; Max-Age=3600\nCookie: lang=en-US; tz=UTC\n"),
        ("curl-plain", "curl -b cookies.txt -c cookies.txt https://example.com\ncurl -u $USER:$PASS https://x\n"),
        ("redis-cli", "redis-cli -h localhost -p 6379 -n 2 ping\n"),
        ("base64-image", f"data:image/png;base64,{b64(rand(rng, 300))}\n"),
        ("passwd-file", "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"),
        ("shadow-locked", "daemon:*:19700:0:99999:7:::\nbin:!:19700::::::\n"),
        ("python-sig", "def sign(key: bytes, msg: bytes) -> str:\n    sig = hmac.new(key, msg, 'sha256').hexdigest()\n"),
        ("ssh-flags", "ssh -p 2222 -i ~/.ssh/id_ed25519 user@host\nscp -P 2222 a host:\n"),
        ("docker-config-empty", '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}\n'),
        ("npmrc-plain", "registry=https://registry.npmjs.org/\nsave-exact=true\n//registry.npmjs.org/:always-auth=false\n"),
        ("openssl", "openssl req -new -key key.pem -passin env:KEY_PASS -out req.csr\n"),
        ("sql", "SELECT id, password_hash FROM users WHERE email = 'a@b.c';\n"),
        ("version", "node v20.11.1 npm 10.2.4 python 3.12.1 key=value\n"),
    ]


def run(seed: int, per_class: int, show: bool) -> None:
    rng = random.Random(seed)
    total_hit = total = 0
    for name, probe in CLASSES.items():
        hit = n = 0
        misses = []
        for _ in range(per_class):
            text, secrets = probe(rng)
            out = redact(text)
            for s in secrets:
                n += 1
                if s in out:
                    misses.append((text, out))
                else:
                    hit += 1
        total_hit, total = total_hit + hit, total + n
        print(f"{name:16s} recall {hit / n:6.1%}  ({hit}/{n})")
        if show:
            for text, out in misses[:3]:
                print("    MISS", repr(text[:160]), "->", repr(out[:160]))
    print(f"{'ALL':16s} recall {total_hit / total:6.1%}  ({total_hit}/{total})")
    fps = [(name, text, redact(text)) for name, text in negatives(random.Random(seed))
           if redact(text) != text]
    print(f"false positives: {len(fps)}")
    for name, text, out in fps:
        print("    FP", name, repr(text[:120]), "->", repr(out[:120]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-class", type=int, default=12)
    ap.add_argument("--show", action="store_true")
    a = ap.parse_args()
    run(a.seed, a.per_class, a.show)


if __name__ == "__main__":
    main()
