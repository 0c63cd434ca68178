-- name: insert_kb
-- description: Insert the knowledge-base documents registered as _kb (drop_kb deleted the stored ones first).
-- params: none
-- returns: nothing
INSERT INTO kb_documents (doc_id, version, valid_from, valid_to, superseded_by, acl, title, content,
                          metadata, loaded_at)
SELECT doc_id, version, valid_from, valid_to, superseded_by, acl, title, content, metadata, loaded_at
FROM _kb
