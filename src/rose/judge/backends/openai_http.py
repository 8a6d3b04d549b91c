"""Any OpenAI-compatible chat endpoint as a judge: Ollama, vLLM, llama.cpp's server, LM Studio, OpenAI.

    POST {agent.openai_base_url}/chat/completions
    Authorization: Bearer ${agent.openai_api_key_env}        (only when that variable is set and non-empty)
    {"model": agent.model,
     "messages": [{"role": "user", "content": PROMPT + the schema as text}],
     "response_format": {"type": "json_schema",
                         "json_schema": {"name": CALL, "schema": STRICT_SCHEMA, "strict": true}}}

The answer is `choices[0].message.content` parsed as JSON; `usage.prompt_tokens` / `completion_tokens` are recorded.
A `refusal` is a failure of its own kind. The schema is also appended to the prompt as text, because some compatible
servers accept `response_format` and ignore it. Config holds the NAME of the key's variable, never the key.
"""
from __future__ import annotations

import json
from collections.abc import Mapping

from rose.text import load_json
from rose.config import AgentSettings
from rose.judge import schema as sch
from rose.judge.backends import _http
from rose.judge.backends.base import Backend, BackendReply, BackendRequest
from rose.judge.errors import FailureKind, JudgeFailure


class OpenAIHttp(Backend):
    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                 env: Mapping[str, str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.env = env

    def body(self, request: BackendRequest) -> dict:
        strict = sch.strict_form(request.schema)
        prompt = (request.prompt + "\nThe JSON object must match this JSON schema:\n"
                  + json.dumps(strict, separators=(",", ":")) + "\n")
        return {"model": self.model,
                "messages": [{"role": "user", "content": prompt}],
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": request.call, "schema": strict, "strict": True}}}

    def headers(self) -> dict[str, str]:
        from rose import environment

        source = environment.current() if self.env is None else self.env
        key = source.get(self.api_key_env, "") if self.api_key_env else ""
        return {"authorization": f"Bearer {key}"} if key else {}

    def complete(self, request: BackendRequest) -> BackendReply:
        if not self.model:
            raise JudgeFailure(FailureKind.CONFIG, "agent.model is empty; the openai backend needs a model name "
                                                   "(`rose config set agent.model NAME`)")
        result, raw, _ms = _http.post_json(f"{self.base_url}/chat/completions", self.body(request), self.headers(),
                                           request.timeout_s)
        try:
            message = result["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise JudgeFailure(FailureKind.UNPARSEABLE, f"no choices[0].message in {raw[:200]!r}") from None
        usage = result.get("usage") if isinstance(result.get("usage"), dict) else {}
        counts = dict(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"))
        if message.get("refusal"):
            raise JudgeFailure(FailureKind.REFUSED, str(message["refusal"])[:300])
        content = message.get("content")
        if isinstance(content, list):  # some servers return content parts
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str) or not content.strip():
            raise JudgeFailure(FailureKind.UNPARSEABLE, "empty message content")
        try:
            data = load_json(_unfence(content))
        except ValueError:
            raise JudgeFailure(FailureKind.UNPARSEABLE, f"content is not JSON: {content[:200]!r}") from None
        return BackendReply(data=data, raw=content, **counts)


def _unfence(text: str) -> str:
    """Strip a ```json fence that some local models wrap their JSON in even under a schema."""
    t = text.strip()
    if t.startswith("```"):
        t = t.split("\n", 1)[1] if "\n" in t else ""
        if t.rstrip().endswith("```"):
            t = t.rstrip()[:-3]
    return t


def from_settings(agent: AgentSettings) -> OpenAIHttp:
    return OpenAIHttp(agent.openai_base_url, agent.model, api_key_env=agent.openai_api_key_env)
