"""Stages 2-4, learning: reflection scheduling, attribution, grounded minting and consolidation.

Everything here runs detached from the user's session (rose.learn.run), except the cheap scheduling decision the
Stop hook makes and `rose add`, which reconciles what a user teaches while they wait.
"""
