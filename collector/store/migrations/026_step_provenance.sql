-- Migration 026: which reader or rule produced each field of a step.
--
-- `provenance` is a JSON object of field -> source: the convention reader that read it
-- (`openinference`, `traceloop`, `haystack`, `vercel_ai`, `genai`), a rule of the structural layer
-- with the key it read (`shape:documents@search.output`, `shape:text@event[llm.prompt].content`,
-- `shape:text@log[llm.response].body` for a span event or a log record joined to the span), a
-- mapping entry (`mapping:<name>@<key>`), the project's own attributes (`ragfault`), or a reader's
-- decision to leave a field empty (`traceloop:...`). Fields are the step's columns (`query_text`,
-- `input_text`, `output_text`, `step_type`, `model`, ...) and `docs` / `docs.<stage>` for its
-- documents. NULL: nothing was read (a step of type `other`), or the step was stored before this
-- migration.

ALTER TABLE steps ADD COLUMN provenance JSON;
