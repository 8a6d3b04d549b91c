"""rose: a continual-learning memory for coding agents. Lessons learned in hooks, made cheaper by use."""

__version__ = "0.1.0"

__all__ = ["__version__"]
