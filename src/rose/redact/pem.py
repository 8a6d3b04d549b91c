"""Private keys: PEM blocks (RSA, EC, DSA, OPENSSH, PGP, ENCRYPTED, PKCS#8, SSH2), BEGIN through END, also with
JSON-escaped ``\\n`` (GCP service-account files); a block cut off before END is redacted through its last
key-material line. PuTTY ``Private-Lines``. Only *private* key markers: certificates and public keys are public.
"""
from __future__ import annotations

import re

from rose.redact.core import PRIO_KEY, Candidate

_PEM_BEGIN_RE = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END_RE = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_LINE_SEP = r"(?:[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*)+"
# The rest of a key whose END line is missing (truncated output): line-separated base64 or header lines.
_PEM_BODY_RE = re.compile(
    r"(?:" + _PEM_LINE_SEP + r"(?:[A-Za-z][A-Za-z0-9-]*:[^\n\\]*|[A-Za-z0-9+/=]+)"
    r"(?=[ \t]*(?:\r?\n|\\[rn]|$|[\"',}\]])))*")
_PEM_MAX = 65536
_PEM_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/=]{24,}")
_PUTTY_RE = re.compile(r"Private-Lines:[ \t]*[0-9]+[ \t]*\r?\n(?P<s>(?:[A-Za-z0-9+/=]+[ \t]*(?:\r?\n|$))+)")


# A PEM block base64-encoded again (Kubernetes tls.key, Helm values, CI variables): LS0tLS1CRUdJTi is "-----BEGIN".
_WRAPPED_PEM_RE = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,65536}={0,2}")


def _wrapped_private(run: str) -> bool:
    import base64
    import binascii
    head = run[:96]
    try:
        raw = base64.b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return b"PRIVATE KEY" in raw


def find(text: str, out: list[Candidate]) -> None:
    if "LS0tLS1CRUdJTi" in text:
        for m in _WRAPPED_PEM_RE.finditer(text):
            if _wrapped_private(m.group()):
                out.append((m.start(), m.end(), PRIO_KEY, "private-key"))
    if "PRIVATE KEY" in text:
        covered = -1
        end_m: re.Match[str] | None = None
        searched = False
        for m in _PEM_BEGIN_RE.finditer(text):
            if m.start() < covered:
                continue
            if not searched or (end_m is not None and end_m.start() < m.end()):
                end_m = _PEM_END_RE.search(text, m.end())  # the next END, shared by every BEGIN before it
                searched = True
            if (end_m is not None and end_m.start() - m.end() <= _PEM_MAX
                    and text.find("-----BEGIN", m.end(), end_m.start()) == -1):
                end = end_m.end()  # whatever lies between BEGIN and END goes, whatever its layout
            else:
                body = _PEM_BODY_RE.match(text, m.end(), m.end() + _PEM_MAX)
                end = body.end() if body else m.end()
            if _PEM_MATERIAL_RE.search(text, m.end(), end):  # not a mention of the markers in prose
                out.append((m.start(), end, PRIO_KEY, "private-key"))
                covered = end
    if "Private-Lines:" in text:
        for m in _PUTTY_RE.finditer(text):
            out.append((m.start("s"), m.end("s"), PRIO_KEY, "private-key"))


