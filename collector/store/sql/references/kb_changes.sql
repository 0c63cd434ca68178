-- name: kb_changes
-- description: Record in kb_changes what loading the documents registered as _kb changes (run before
--   they replace the stored ones): a document's content, version or validity, or a document added to a
--   registry that had some, so the cases it affects can be listed for re-running (queries/kb_affected.sql).
-- params: none
-- returns: nothing
INSERT INTO kb_changes (doc_id, change, old_version, new_version, changed_at)
SELECT n.doc_id,
       concat_ws(',',
           CASE WHEN o.doc_id IS NULL THEN 'added' END,
           CASE WHEN o.doc_id IS NOT NULL AND o.content IS DISTINCT FROM n.content THEN 'content' END,
           CASE WHEN o.doc_id IS NOT NULL AND o.version IS DISTINCT FROM n.version THEN 'version' END,
           CASE WHEN o.doc_id IS NOT NULL AND (o.valid_from IS DISTINCT FROM n.valid_from
                OR o.valid_to IS DISTINCT FROM n.valid_to OR o.superseded_by IS DISTINCT FROM n.superseded_by)
                THEN 'validity' END),
       o.version, n.version, n.loaded_at
FROM _kb n LEFT JOIN kb_documents o ON o.doc_id = n.doc_id
WHERE (o.doc_id IS NULL AND EXISTS (SELECT 1 FROM kb_documents))
   OR (o.doc_id IS NOT NULL AND (o.content IS DISTINCT FROM n.content OR o.version IS DISTINCT FROM n.version
       OR o.valid_from IS DISTINCT FROM n.valid_from OR o.valid_to IS DISTINCT FROM n.valid_to
       OR o.superseded_by IS DISTINCT FROM n.superseded_by))
