"""The openai and anthropic backends against the local mock model server (127.0.0.1): what they send, what they read,
and every failure mapped to its kind."""
from __future__ import annotations

import socket

import pytest

from rose.config import AgentSettings, Backend
from rose.judge import FailureKind, Judge, JudgeFailure, calls, make_backend
from rose.judge.backends.anthropic_http import DEFAULT_MODEL, AnthropicHttp
from rose.judge.backends.openai_http import OpenAIHttp
from rose.judge.schema import strict_form
from tests.support.mock_model_server import HELD, Delay, Error, Structured, Text

from .samples import by_name

S = by_name()


def openai(mock, **kw) -> OpenAIHttp:
    return OpenAIHttp(mock.openai_base_url, kw.pop("model", "qwen2.5:7b"), api_key_env="ROSE_TEST_OPENAI_KEY",
                      env=kw.pop("env", {"ROSE_TEST_OPENAI_KEY": "sk-test-openai"}), **kw)


def anthropic(mock, **kw) -> AnthropicHttp:
    return AnthropicHttp(mock.anthropic_base_url, kw.pop("model", ""), api_key_env="ROSE_TEST_ANTHROPIC_KEY",
                         env=kw.pop("env", {"ROSE_TEST_ANTHROPIC_KEY": "sk-ant-test"}), **kw)


BACKENDS = {"openai": openai, "anthropic": anthropic}


# -- openai --------------------------------------------------------------------------------------------------------

def test_openai_sends_a_strict_json_schema_and_reads_the_structured_answer(mock):
    s = S["relevance"]
    mock.enqueue(Structured(s.good, input_tokens=321, output_tokens=45))
    judge = Judge(openai(mock), timeout_s=60)
    answer = judge.ask(calls.RELEVANCE, s.request, stage="recall")
    assert answer.ids(calls.Verdict.DESCEND) == ["n_cc03"]
    [req] = mock.model_requests("chat")
    assert req.path == "/v1/chat/completions" and req.headers["authorization"] == "Bearer sk-test-openai"
    body = req.body
    assert body["model"] == "qwen2.5:7b"
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"] == {"name": "relevance", "schema": strict_form(calls.RELEVANCE.schema), "strict": True}
    assert "untrusted data" in body["messages"][0]["content"]
    assert "must match this JSON schema" in body["messages"][0]["content"]


def test_openai_reports_tokens(mock):
    mock.enqueue(Structured(S["scope"].good, input_tokens=321, output_tokens=45))
    reply = openai(mock).complete(_request("scope"))
    assert (reply.input_tokens, reply.output_tokens, reply.cost_usd) == (321, 45, None)


def test_openai_sends_no_authorization_when_the_named_variable_is_unset(mock):
    mock.enqueue(Structured(S["scope"].good))
    openai(mock, env={}).complete(_request("scope"))
    assert "authorization" not in mock.model_requests()[0].headers


def test_openai_without_a_model_is_a_config_failure(mock):
    with pytest.raises(JudgeFailure) as err:
        openai(mock, model="").complete(_request("scope"))
    assert err.value.kind is FailureKind.CONFIG and not mock.requests


def test_openai_unwraps_a_fenced_answer_and_rejects_prose(mock):
    mock.enqueue(Text("```json\n" + '{"scope": "project", "reason": "r"}' + "\n```"), Text("Sure! It's global."))
    assert openai(mock).complete(_request("scope")).data == {"scope": "project", "reason": "r"}
    with pytest.raises(JudgeFailure) as err:
        openai(mock).complete(_request("scope"))
    assert err.value.kind is FailureKind.UNPARSEABLE


def test_openai_refusal_is_its_own_failure(mock):
    mock.handler = None
    mock.enqueue(Error(200, {"choices": [{"message": {"role": "assistant", "content": None,
                                                      "refusal": "I can't help with that."}}]}))
    with pytest.raises(JudgeFailure) as err:
        openai(mock).complete(_request("scope"))
    assert err.value.kind is FailureKind.REFUSED and "can't help" in err.value.detail


# -- anthropic -----------------------------------------------------------------------------------------------------

def test_anthropic_forces_the_tool_and_reads_its_input(mock):
    s = S["assess"]
    mock.enqueue(Structured(s.good, input_tokens=900, output_tokens=60))
    judge = Judge(anthropic(mock), timeout_s=60)
    answer = judge.ask(calls.ASSESS, s.request, stage="attribution")
    assert answer.used == ["n_aa01"]
    [req] = mock.model_requests("anthropic")
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "sk-ant-test" and req.headers["anthropic-version"] == "2023-06-01"
    body = req.body
    assert body["model"] == DEFAULT_MODEL and body["max_tokens"] > 0 and not body.get("stream")
    assert body["tools"] == [{"name": "StructuredOutput", "description": "Give the answer to the 'assess' question.",
                              "input_schema": calls.ASSESS.schema}]
    assert body["tool_choice"] == {"type": "tool", "name": "StructuredOutput"}
    assert body["messages"][0]["role"] == "user" and "untrusted data" in body["messages"][0]["content"]


def test_anthropic_reports_tokens_and_honours_the_configured_model(mock):
    mock.enqueue(Structured(S["scope"].good, input_tokens=900, output_tokens=60))
    reply = anthropic(mock, model="claude-sonnet-4-5").complete(_request("scope"))
    assert (reply.input_tokens, reply.output_tokens) == (900, 60)
    assert mock.model_requests()[0].body["model"] == "claude-sonnet-4-5"


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_anthropic_base_url_with_or_without_v1(mock, suffix: str):
    """The same endpoint is reached whether the configured base URL names /v1 or not: the request lands on the
    mock's /v1/messages, and only there."""
    assert AnthropicHttp("https://api.anthropic.com").url == "https://api.anthropic.com/v1/messages"
    mock.enqueue(Structured(S["scope"].good))
    backend = AnthropicHttp(mock.anthropic_base_url + suffix, "", api_key_env="ROSE_TEST_ANTHROPIC_KEY",
                            env={"ROSE_TEST_ANTHROPIC_KEY": "sk-ant-test"})
    Judge(backend, timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    [request] = mock.model_requests()
    assert request.path == "/v1/messages" and request.api == "anthropic"


def test_anthropic_without_a_tool_use_block_is_unparseable(mock):
    mock.enqueue(Text("I think it's global"))
    with pytest.raises(JudgeFailure) as err:
        anthropic(mock).complete(_request("scope"))
    assert err.value.kind is FailureKind.UNPARSEABLE


# -- shared failure mapping ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BACKENDS)
@pytest.mark.parametrize("status", [400, 401, 404, 429, 500, 503])
def test_http_errors_are_http_failures_with_the_status(mock, name, status):
    mock.enqueue(Error(status, "mock says no"))
    with pytest.raises(JudgeFailure) as err:
        Judge(BACKENDS[name](mock), timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.HTTP and err.value.status == status
    assert "mock says no" in str(err.value)
    assert len(mock.model_requests()) == 1  # not retried


@pytest.mark.parametrize("name", BACKENDS)
def test_a_reply_slower_than_the_timeout_is_a_timeout(mock, name):
    mock.enqueue(Delay(HELD, Structured(S["scope"].good)))  # no answer before the mock closes: never a race to win
    with pytest.raises(JudgeFailure) as err:
        Judge(BACKENDS[name](mock), timeout_s=0.5).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.TIMEOUT


@pytest.mark.parametrize("name", BACKENDS)
def test_a_schema_breaking_answer_is_retried_once_then_fails(mock, name):
    mock.enqueue(Structured({"scope": "local", "reason": "x"}), Structured({"scope": "everywhere", "reason": "x"}))
    with pytest.raises(JudgeFailure) as err:
        Judge(BACKENDS[name](mock), timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert err.value.kind is FailureKind.SCHEMA and "'everywhere' is not one of" in str(err.value)
    first, second = mock.model_requests()
    assert "previous answer was rejected" in second.body_text and "'local' is not one of" in second.body_text


@pytest.mark.parametrize("name", BACKENDS)
def test_a_schema_breaking_answer_then_a_good_one_succeeds(mock, name):
    mock.enqueue(Structured({"scope": "local", "reason": "x"}), Structured(S["scope"].good))
    answer = Judge(BACKENDS[name](mock), timeout_s=60).ask(calls.SCOPE, S["scope"].request, stage="consolidation")
    assert answer.scope.value == "global" and len(mock.model_requests()) == 2


@pytest.mark.parametrize("name", BACKENDS)
def test_nothing_listening_is_unreachable(mock, name):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = (OpenAIHttp(f"http://127.0.0.1:{port}/v1", "m") if name == "openai"
               else AnthropicHttp(f"http://127.0.0.1:{port}"))
    with pytest.raises(JudgeFailure) as err:
        backend.complete(_request("scope"))
    assert err.value.kind is FailureKind.UNREACHABLE


@pytest.fixture
def html_server():
    """A server that answers every POST with 200 and an HTML page (a captive portal, a misrouted proxy)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = b"<html>gateway</html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("name", BACKENDS)
def test_a_non_json_body_is_unparseable(html_server, name):
    backend = OpenAIHttp(html_server + "/v1", "m") if name == "openai" else AnthropicHttp(html_server)
    with pytest.raises(JudgeFailure) as err:
        backend.complete(_request("scope"))
    assert err.value.kind is FailureKind.UNPARSEABLE and "gateway" in err.value.detail


def test_an_api_error_object_in_a_200_is_a_model_error_or_unparseable(mock):
    mock.enqueue(Error(200, "overloaded"), Error(200, "overloaded"))
    with pytest.raises(JudgeFailure) as err:
        anthropic(mock).complete(_request("scope"))
    assert err.value.kind is FailureKind.MODEL_ERROR and "overloaded" in err.value.detail
    with pytest.raises(JudgeFailure) as err:
        openai(mock).complete(_request("scope"))
    assert err.value.kind is FailureKind.UNPARSEABLE


def test_http_backends_come_from_settings_with_the_key_read_from_the_named_variable(mock, monkeypatch):
    monkeypatch.setenv("MY_LOCAL_KEY", "k-123")
    backend = make_backend(AgentSettings(backend=Backend.OPENAI, model="llama3", openai_base_url=mock.openai_base_url,
                                         openai_api_key_env="MY_LOCAL_KEY"))
    assert isinstance(backend, OpenAIHttp)
    mock.enqueue(Structured(S["scope"].good))
    backend.complete(_request("scope"))
    assert mock.model_requests()[0].headers["authorization"] == "Bearer k-123"

    monkeypatch.setenv("MY_ANT_KEY", "a-456")
    backend = make_backend(AgentSettings(backend=Backend.ANTHROPIC, anthropic_base_url=mock.anthropic_base_url,
                                         anthropic_api_key_env="MY_ANT_KEY"))
    assert isinstance(backend, AnthropicHttp)
    mock.enqueue(Structured(S["scope"].good))
    backend.complete(_request("scope"))
    assert mock.model_requests()[1].headers["x-api-key"] == "a-456"


def _request(name: str):
    from rose.judge import BackendRequest

    s = S[name]
    return BackendRequest(call=name, prompt=s.call.render(s.request), schema=s.call.schema, timeout_s=60)
