-- name: drop_kb
-- description: Delete the stored knowledge-base documents of the ids registered as _kb, before
--   insert_kb writes them again (a reloaded document replaces the old one, on both backends).
-- params: none
-- returns: nothing
DELETE FROM kb_documents WHERE doc_id IN (SELECT doc_id FROM _kb)
