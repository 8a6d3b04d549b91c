"""Hand-written source of the retrieval set; `build.py` turns it into lessons.jsonl and prompts.jsonl."""
