"""The recall trace: what one recall decided and why, key by key (`rose trace` prints it, `rose recall --json`
returns it, tests read it). A typed record of plain JSON values, so it stays a dict on the wire; every key is
optional because a recall that stops at a gate (recall off, an empty store, a store that fits) fills only the first.
"""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # a TypedDict only for the type checker: at run time a trace is the dict it always was, and the
    from typing import Any, TypedDict   # prompt hook does not import typing for it

    class Trace(TypedDict, total=False):
        prompt: str                          # the prompt as recall saw it (cut to MAX_PROMPT_CHARS)
        selector_configured: str             # recall.selector
        gate: str                            # why recall filtered, served everything, or nothing
        store: dict[str, Any]                # servable lessons, their tokens, the budget
        dense: str                           # DenseStatus of the dense half
        lexical_list: list[list[Any]]        # [scope, id, score] of the lexical hits
        dense_list: list[list[Any]]          # [scope, id, cosine] of the dense hits
        routing_rules: list[str]             # the selection rules in force
        candidates: list[dict[str, Any]]     # each candidate's evidence (Candidate.trace)
        selection: dict[str, Any]            # which selector chose what
        selector_ran: str                    # the selector that answered (after fallbacks)
        fallbacks: list[str]                 # "fork -> judge: why", in order
        verdicts: list[dict[str, str]]       # every verdict given
        second_pass: dict[str, Any]          # progressive disclosure's query and its candidates
        cold: list[dict[str, str]]           # cold records an exact match paged in (rose.retention.paging)
        left_out: int                        # chosen but over the budget
        withheld: list[str]                  # held back this session to measure them (rose.credit)
        pack: list[dict[str, Any]]           # what was packed: id, tier, tokens, reason
        block: str                           # the injected block
        notice: str                          # the notice line
else:
    Trace = dict
