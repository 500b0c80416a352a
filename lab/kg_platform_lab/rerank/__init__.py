"""Fitting the late rerank's per-strategy weights (``kgp lab rerank collect`` / ``fit``)."""
