// Store a corpus's tag classes (auto-tagging step 1, PIKE-RAG paper) on its Corpus node.
MERGE (k:Corpus {name: $corpus})
SET k.tag_classes = $classes, k.tag_classes_v = $version
