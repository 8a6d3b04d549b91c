"""Stage 1, recall: choose what to inject above the prompt, and say what was injected."""
from rose.recall.pipeline import RecallResult, recall

__all__ = ["RecallResult", "recall"]
