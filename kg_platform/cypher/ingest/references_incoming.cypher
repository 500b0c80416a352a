// The stored REFERENCES edges that reach the given sources (whose title is new or changed).
UNWIND $ids AS bid
MATCH (a:Source)-[r:REFERENCES]->(b:Source {id: bid})
RETURN a.id AS a, b.id AS b, r.mentions AS mentions
