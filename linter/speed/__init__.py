"""What makes a large run fast: a process pool, parse-ahead, the cache. The flow hands these
callables and records; nothing here imports the flow back."""
