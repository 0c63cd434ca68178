"""The judge tier: an OpenAI-compatible LLM judge for claims, citations, required facts and
refusals, with its cache, budget, call log and calibration against human labels.

- ``settings``: the ``[judge]`` config table (``JudgeSettings``).
- ``client``: HTTP, strict JSON, retries, rate limit, budget, a record per call.
- ``judge``: the tasks (prompt files in ``evaluators/prompts/``) and the DuckDB-backed cache.
- ``answer_support``, ``citation_support``, ``fact_coverage``, ``claim_recall``, ``context_utilization``,
  ``refusal``: the judge-tier evaluators (entry points), pure over ``EvalInput`` and its ``judge``.
- ``service``: ``build_judge_runner`` for the scheduler; ``calibration`` and ``api``: human labels,
  agreement, bias and drift.
"""
