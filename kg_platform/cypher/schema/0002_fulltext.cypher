// Fulltext (Lucene BM25) indexes. MoG needs the top-k_r chunks of each granularity level,
// so every level has its own label L1..L6 and its own index.
CREATE FULLTEXT INDEX chunk_text_l1 IF NOT EXISTS FOR (n:L1) ON EACH [n.text];
CREATE FULLTEXT INDEX chunk_text_l2 IF NOT EXISTS FOR (n:L2) ON EACH [n.text];
CREATE FULLTEXT INDEX chunk_text_l3 IF NOT EXISTS FOR (n:L3) ON EACH [n.text];
CREATE FULLTEXT INDEX chunk_text_l4 IF NOT EXISTS FOR (n:L4) ON EACH [n.text];
CREATE FULLTEXT INDEX chunk_text_l5 IF NOT EXISTS FOR (n:L5) ON EACH [n.text];
CREATE FULLTEXT INDEX chunk_text_l6 IF NOT EXISTS FOR (n:L6) ON EACH [n.text];
CREATE FULLTEXT INDEX piece_text IF NOT EXISTS FOR (n:Piece) ON EACH [n.text];
CREATE FULLTEXT INDEX atomic_question_text IF NOT EXISTS FOR (n:AtomicQuestion) ON EACH [n.text];
CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name];
CREATE FULLTEXT INDEX tag_name IF NOT EXISTS FOR (n:Tag) ON EACH [n.name];
