"""Retrieval strategies, one module each: what ranks the candidates of a question.

Each module registers its strategies with :func:`kg_platform.retrieval.base.register_strategy`
(``baselines``: ``bm25``, ``vector``, ``hybrid``; ``mog``; ``mogg``; ``propagate``; ``entity``;
``atomic``; ``auto``). ``router`` runs the MoG/MoGG routers and ``question_keys`` finds the
entities a question names.
"""
