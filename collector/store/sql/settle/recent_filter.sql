-- name: recent_filter
-- description: The fragment that limits a settle statement to traces whose last span arrived since
--   $recent (a round skips the row groups of older traces); put in place of {recent}.
-- params: $recent TIMESTAMP
-- returns: nothing (a WHERE fragment)
 AND last_received_at >= $recent
