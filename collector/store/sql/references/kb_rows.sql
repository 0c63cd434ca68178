-- name: kb_rows
-- description: Every knowledge-base document as stored.
-- params: none
-- returns: doc_id, version, valid_from, valid_to, superseded_by, acl, title, content, metadata
SELECT doc_id, version, valid_from, valid_to, superseded_by, acl, title, content, metadata FROM kb_documents
