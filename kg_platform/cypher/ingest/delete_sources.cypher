// Remove the given Source nodes themselves (after delete_source_content); used by --prune.
UNWIND $source_ids AS sid
MATCH (s:Source {id: sid})
DETACH DELETE s
