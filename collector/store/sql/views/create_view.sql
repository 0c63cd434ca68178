-- name: create_view
-- description: (Re)create one view of the bundled queries (a queries/ file with a -- view: line):
--   {view} its name, {body} its statement.
-- params: none
-- returns: nothing
CREATE OR REPLACE VIEW {view} AS {body}
