"""Knowing what helps: per-lesson causal credit by randomized withholding (docs/credit.md).

    decide.py     Beta posteriors per arm and the verdict (pure functions; the benchmark runs the same code)
    withhold.py   the prompt path: which lessons that would be served are withheld this session (cheap, no model)
    record.py     the learner: each session's arms and outcome into the usage log; harmful lessons withdrawn
    report.py     `rose credit` and the credit lines of `rose status`

Nothing here asks a model: the outcome comes from the episode (execution evidence where there is any, the `assess`
judgment otherwise), and everything else is counting.
"""
