"""A corpus of realistic Claude Code and Codex transcripts with known facts planted in them, for bench_digest.py.

    python bench/transcript_corpus/generate.py --out /tmp/corpus [--seed 7] [--scale 1.0]

Each session is first written as an agent-neutral script (scenario.py: prompts, reasoning, tool calls with their
outputs, compactions, sub-agents), then rendered in one agent's real line format at one CLI version (claude.py,
codex.py). What the bench looks for is recorded in the manifest beside the files (`manifest.json`): each short
user correction's exact text, each failed tool call's error line (a unique token on its last line), each planted
reasoning fact, each pasted block, and the sub-agents' text that must never leak into the parent's digest.

Nothing here is copied from real transcripts: texts are drawn from small vocabularies and templates; the line
shapes follow the captured fixtures in tests/fixtures/transcripts and the notes in the project's research file.
"""
