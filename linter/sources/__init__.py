"""The parsers: each reads one kind of file into a located model (manifest, shell, Python, version
pins) and knows nothing of the rules."""
