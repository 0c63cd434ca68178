"""ragfault evaluators: the framework (base, matching, registry, runner), the built-in cheap tier
(``builtin/``), the lexical checker, the LLM judge tier (``judge/``) and live-traffic scheduling."""
