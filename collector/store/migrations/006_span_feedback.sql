-- Migration 006: spans say whether they may carry feedback.
--
-- Evaluation reads feedback (OpenInference annotations and evaluations, GenAI evaluation events)
-- from the spans of the traces it evaluates. Finding them meant a LIKE over the attributes of every
-- span, prompts included, for every trace evaluated. Spans are now marked when they are decoded,
-- from their attribute keys and event names (collector.ingest.batch.carries_feedback). Spans stored before
-- this migration keep NULL: not marked either way, so they are still searched.
ALTER TABLE spans ADD COLUMN feedback BOOLEAN;
