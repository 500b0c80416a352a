"""Training of the default MoG / MoGG routers shipped in kg_platform/models/routers."""
