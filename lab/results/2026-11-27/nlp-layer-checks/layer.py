"""clear CORPUS | stats CORPUS: drop a corpus's entity layer, or print its size."""

import json
import sys
from kg_platform.config import get_settings
from kg_platform.graph.client import GraphClient

cmd, corpus = sys.argv[1], sys.argv[2]
with GraphClient.from_settings(get_settings()) as g, g.driver.session() as ses:
    if cmd == "clear":
        ses.run(
            "MATCH (e:Entity) WHERE e.corpus = $c CALL (e) { DETACH DELETE e } IN TRANSACTIONS OF 2000 ROWS",
            c=corpus,
        ).consume()
        ses.run(
            "MATCH (c:Chunk) WHERE c.corpus = $c AND c.entities_v IS NOT NULL CALL (c) { REMOVE c.entities_v } IN TRANSACTIONS OF 5000 ROWS",
            c=corpus,
        ).consume()
    else:
        r = ses.run(
            "MATCH (e:Entity) WHERE e.corpus = $c RETURN count(e) AS entities, sum(size(e.aliases)) AS aliases, count(DISTINCT e.key) AS keys",
            c=corpus,
        ).single()
        print(json.dumps({"corpus": corpus, **dict(r)}))
