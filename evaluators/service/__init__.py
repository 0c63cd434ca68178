"""The service that runs evaluators: loading specs, the scheduler and its rounds, the judge
tier, sampling, the pools, gold cases and feedback, and their HTTP routes. An evaluator author
imports none of it: the SDK is ``evaluators.base`` (``evaluators/README.md``)."""
