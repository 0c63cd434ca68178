-- name: loaded_docs
-- description: A fragment of registry_texts (a knowledge-base load): only the documents just loaded
--   (registered as _kb).
-- params: none
-- returns: nothing
AND k.doc_id IN (SELECT doc_id FROM _kb)
