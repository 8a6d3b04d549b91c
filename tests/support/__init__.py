"""Test helpers shared by rose's test suites.

- `mock_model_server`: a scriptable local HTTP server speaking the Anthropic Messages, OpenAI Responses and
  OpenAI Chat Completions wire formats, bound to 127.0.0.1 only.
- `agent_clis`: run the real, pinned `claude` and `codex` CLIs offline against that server, in a temporary HOME.

See docs/testing-real-clis.md.
"""
