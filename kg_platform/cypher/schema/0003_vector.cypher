// Vector indexes (cosine). {dimension} is replaced by the embedder's dimension (an integer the
// platform reads from the model, never user text): index OPTIONS cannot take parameters.
// Neo4j returns (1 + cos) / 2 as the score; convert with cos = 2*score - 1.
CREATE VECTOR INDEX chunk_embedding_l1 IF NOT EXISTS FOR (n:L1) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX chunk_embedding_l2 IF NOT EXISTS FOR (n:L2) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX chunk_embedding_l3 IF NOT EXISTS FOR (n:L3) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX chunk_embedding_l4 IF NOT EXISTS FOR (n:L4) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX chunk_embedding_l5 IF NOT EXISTS FOR (n:L5) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX chunk_embedding_l6 IF NOT EXISTS FOR (n:L6) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX piece_embedding IF NOT EXISTS FOR (n:Piece) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX section_embedding IF NOT EXISTS FOR (n:Section) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX source_embedding IF NOT EXISTS FOR (n:Source) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX atomic_question_embedding IF NOT EXISTS FOR (n:AtomicQuestion) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:Entity) ON n.embedding OPTIONS {indexConfig: {`vector.dimensions`: {dimension}, `vector.similarity_function`: 'cosine'}};
