"""ragfault's shared infrastructure: what the collector, the evaluators and the CLI all use, and
that imports none of them (``README.md`` beside this file)."""
