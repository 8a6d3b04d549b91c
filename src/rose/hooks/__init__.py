"""The hook side of rose: each agent's payloads in, one fail-open command (`rose hook <agent> <event>`) out."""

MAX_PAYLOAD_BYTES = 8 * 1024 * 1024   # a prompt with a pasted log is big; a runaway stream is not read whole
