"""A conversation redacted once, as it is read: the learner's one pass of the redactor over a session.

Everything the learner derives from a session (the digest the judges read, the messages minting shows a model, the
task prompt and summary an episode records, the outcome's evidence) is then cut and budgeted from text that is
already redacted, so the redactor never sees the same text twice and no secret is ever split by a cut made before
redaction. The reader's per-message caps (rose.transcripts.reading) bound what this costs.
"""
from __future__ import annotations

from dataclasses import replace

from rose.transcripts.model import Conversation


def redacted(conversation: Conversation) -> Conversation:
    """A copy of the conversation with every message's text redacted (the same object when it already is)."""
    if conversation.redacted:
        return conversation
    from rose.redact import redact

    return replace(conversation, messages=[replace(m, text=redact(m.text)) for m in conversation.messages],
                   redacted=True)
