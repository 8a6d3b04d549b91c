"""POST JSON with the standard library and translate every way it can fail into a JudgeFailure.

    HTTP 4xx/5xx, a broken response    -> http (status kept, the API's error message quoted)
    socket timeout                     -> timeout
    refused, DNS, TLS, reset           -> unreachable
    a 2xx body that is not JSON        -> unparseable

`timeout_s` bounds the connect and every read (urllib's semantics); a server that trickles bytes forever is not
cut off at exactly `timeout_s`, but one that stalls is.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from rose.text import load_json
from rose.judge.errors import FailureKind, JudgeFailure

USER_AGENT = "rose-judge/1"


def post_json(url: str, body: dict[str, Any], headers: dict[str, str], timeout_s: float) -> tuple[Any, str, int]:
    """-> (parsed JSON, raw text, ms)."""
    data = json.dumps(body, ensure_ascii=False).encode("utf-8")
    request = urllib.request.Request(url, data=data, method="POST", headers={
        "content-type": "application/json", "accept": "application/json", "user-agent": USER_AGENT, **headers})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - URL from config
            raw = response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        text = _read(exc)
        raise JudgeFailure(FailureKind.HTTP, f"HTTP {exc.code} from {url}: {_error_message(text)}",
                           status=exc.code) from None
    except TimeoutError:
        raise JudgeFailure(FailureKind.TIMEOUT, f"no answer from {url} within {timeout_s:g}s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (socket.timeout, TimeoutError)):
            raise JudgeFailure(FailureKind.TIMEOUT, f"no answer from {url} within {timeout_s:g}s") from None
        raise JudgeFailure(FailureKind.UNREACHABLE, f"{url}: {exc.reason}") from None
    except (ConnectionError, OSError) as exc:
        raise JudgeFailure(FailureKind.UNREACHABLE, f"{url}: {exc}") from None
    except http.client.HTTPException as exc:  # a response cut short or malformed
        raise JudgeFailure(FailureKind.HTTP, f"broken response from {url}: {exc!r}") from None
    ms = int((time.monotonic() - start) * 1000)
    try:
        return load_json(raw), raw, ms
    except ValueError:
        raise JudgeFailure(FailureKind.UNPARSEABLE, f"{url} answered non-JSON: {raw[:200]!r}") from None


def _read(exc: urllib.error.HTTPError) -> str:
    try:
        return exc.read().decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        exc.close()


def _error_message(text: str) -> str:
    """The API's own error message when the body is the usual {"error": {"message": ...}} shape."""
    try:
        body = load_json(text)
    except ValueError:
        return text[:300] or "(empty body)"
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    return text[:300]
