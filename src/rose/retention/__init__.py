"""Long-run retention: the hot store stays small and sharp as it grows, and nothing is ever lost.

    rules.py      the decision rules, pure functions over named constants (the runtime and the benchmark share them)
    maintain.py   the maintenance pass the learner runs after its work (never on the prompt path)
    manage.py     what `rose list / show / delete / clear / archive / restore` compute
    The cold archive itself is a store primitive: rose.store.archive (layout and catalog) and Store.archive/restore.

Nothing is imported here: rose.store.index reads rose.retention.rules on the prompt path, which must stay lean.
"""
