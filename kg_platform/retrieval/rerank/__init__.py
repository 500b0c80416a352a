"""What runs after a strategy: the rerank models and the selections that cut their ranking.

``late_interaction`` (MaxSim over the embedder's word-piece states), ``query_head`` (its trained
query head), ``structure`` (the document rerank), ``weights`` (their per-strategy weights),
``selection`` (``none`` / ``late`` / ``sage``: rerank, then cut) and ``text_cache``.
"""
