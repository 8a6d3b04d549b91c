"""JSON Web Tokens, bare or base64-wrapped.

A JWT is ``eyJ<b64url header>.<b64url payload>[.<signature>]`` (JWE has two more segments): the ``eyJ`` is the
base64 of ``{"``, so the shape is fixed whatever the issuer (OAuth id/access tokens, Kubernetes service-account
tokens, Supabase keys, ...). Tools and Kubernetes often base64 the whole token again: it then starts ``ZXlK`` (the
base64 of ``eyJ``); such a run is decoded and kept only if it really is a JWT.
"""
from __future__ import annotations

import base64
import binascii
import re

from rose.redact.core import PRIO_JWT, Candidate

# The lookbehinds sit after the literal (keeping the fast literal search) and reject starts inside a run.
_JWT_RE = re.compile(r"eyJ(?:(?<![A-Za-z0-9_-]eyJ)|(?<=\\[nrtbf]eyJ))"
                     r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){0,3}")
_WRAPPED_RE = re.compile(r"ZXlK(?<![A-Za-z0-9+/]ZXlK)[A-Za-z0-9+/]{40,16384}={0,2}(?![A-Za-z0-9+/])")
_DECODED_JWT_RE = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")


def _wrapped_jwt(run: str) -> bool:
    try:
        raw = base64.b64decode(run[:200] + "=" * (-len(run[:200]) % 4) if len(run) > 200 else
                               run + "=" * (-len(run) % 4))
    except (binascii.Error, ValueError):
        return False
    return _DECODED_JWT_RE.match(raw.decode("ascii", "replace")) is not None


def find(text: str, out: list[Candidate]) -> None:
    if "eyJ" in text:
        for m in _JWT_RE.finditer(text):
            out.append((m.start(), m.end(), PRIO_JWT, "jwt"))
    if "ZXlK" in text:
        for m in _WRAPPED_RE.finditer(text):
            if _wrapped_jwt(m.group()):
                out.append((m.start(), m.end(), PRIO_JWT, "jwt"))
