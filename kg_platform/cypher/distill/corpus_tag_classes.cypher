// The tag classes proposed for a corpus (JSON list of {name, description}), if any.
OPTIONAL MATCH (k:Corpus {name: $corpus})
RETURN k.tag_classes AS classes, k.tag_classes_v AS version
