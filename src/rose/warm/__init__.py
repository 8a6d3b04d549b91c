"""The warm helper: one long-lived process per user and environment that keeps rose imported, the embedding model
loaded and the vectors in memory, so the per-prompt hook is a thin client (client.py) and the work happens in a
process that is already warm (server.py). Everything works without it: it is only faster.
"""
