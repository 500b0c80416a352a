// REFERENCES edges that leave the given sources (the sources of a retrieval's results): where
// one result's source names another's title, and how many other sources each one names.
// $ids: source ids; $limit: edges listed per source toward sources outside the results.
UNWIND $ids AS sid
MATCH (a:Source {id: sid})-[r:REFERENCES]->(b:Source)
WITH a, r, b, b.id IN $ids AS inside
ORDER BY inside DESC, r.mentions DESC, b.title
WITH a, collect({id: b.id, title: b.title, mentions: r.mentions, inside: inside}) AS named
RETURN a.id AS id, a.title AS title,
       [x IN named WHERE x.inside] AS inside,
       [x IN named WHERE NOT x.inside][0..$limit] AS outside,
       size([x IN named WHERE NOT x.inside]) AS outside_total
