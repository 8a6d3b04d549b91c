"""The Anthropic Messages API as a judge, with the answer forced through a tool whose input schema is the call's.

    POST {agent.anthropic_base_url}/v1/messages
    x-api-key: ${agent.anthropic_api_key_env}    anthropic-version: 2023-06-01
    {"model": agent.model or DEFAULT_MODEL, "max_tokens": MAX_TOKENS,
     "messages": [{"role": "user", "content": PROMPT}],
     "tools": [{"name": "StructuredOutput", "description": ..., "input_schema": SCHEMA}],
     "tool_choice": {"type": "tool", "name": "StructuredOutput"}}

The answer is the `input` of the `tool_use` block (the same tool name claude -p --json-schema uses). Usage
`input_tokens` / `output_tokens` are recorded; the API reports no cost.
"""
from __future__ import annotations

import json
from collections.abc import Mapping

from rose.config import AgentSettings
from rose.judge.backends import _http
from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure

DEFAULT_MODEL = "claude-haiku-4-5"   # judgments are short and frequent: the small model, unless configured
MAX_TOKENS = 8192                    # the largest answers (compress, extract) stay well under this
API_VERSION = "2023-06-01"
TOOL = "StructuredOutput"


class AnthropicHttp(Backend):
    name = "anthropic"

    def __init__(self, base_url: str, model: str = "", *, api_key_env: str = "ANTHROPIC_API_KEY",
                 env: Mapping[str, str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.model = model or DEFAULT_MODEL
        self.api_key_env = api_key_env
        self.env = env

    @property
    def url(self) -> str:
        return self.base_url + ("/messages" if self.base_url.endswith("/v1") else "/v1/messages")

    def body(self, request: BackendRequest) -> dict:
        return {"model": self.model, "max_tokens": MAX_TOKENS,
                "messages": [{"role": "user", "content": request.prompt}],
                "tools": [{"name": TOOL, "description": f"Give the answer to the '{request.call}' question.",
                           "input_schema": request.schema}],
                "tool_choice": {"type": "tool", "name": TOOL}}

    def headers(self) -> dict[str, str]:
        from rose import environment

        source = environment.current() if self.env is None else self.env
        key = source.get(self.api_key_env, "") if self.api_key_env else ""
        return {"anthropic-version": API_VERSION, **({"x-api-key": key} if key else {})}

    def complete(self, request: BackendRequest) -> BackendReply:
        result, raw, _ms = _http.post_json(self.url, self.body(request), self.headers(), request.timeout_s)
        if not isinstance(result, dict):
            raise JudgeFailure(FailureKind.UNPARSEABLE, f"not a message: {raw[:200]!r}")
        if result.get("type") == "error":
            error = result.get("error") or {}
            raise JudgeFailure(FailureKind.MODEL_ERROR, str(error.get("message") or error)[:300])
        usage = given if isinstance(given := result.get("usage"), dict) else {}
        counts = dict(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"))
        blocks = [b for b in result.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not blocks:
            why = f"stop_reason {result.get('stop_reason')!r}"
            if result.get("stop_reason") == "refusal":
                raise JudgeFailure(FailureKind.REFUSED, why)
            raise JudgeFailure(FailureKind.UNPARSEABLE, f"no tool_use block ({why})")
        if result.get("stop_reason") == "max_tokens":
            raise JudgeFailure(FailureKind.UNPARSEABLE, "the answer was cut off at max_tokens")
        data = blocks[0].get("input")
        return BackendReply(data=data, raw=json.dumps(data, ensure_ascii=False), **counts)


def from_settings(agent: AgentSettings) -> AnthropicHttp:
    return AnthropicHttp(agent.anthropic_base_url, agent.model, api_key_env=agent.anthropic_api_key_env)
