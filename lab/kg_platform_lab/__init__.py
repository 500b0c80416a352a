"""The lab: evaluation, benchmarks, training and data collection, kept apart from the product.

The lab depends on the product (:mod:`kg_platform` minus this package) and never the other way:
``tests/unit/test_layering.py`` imports every product module with the lab made unimportable.
Its commands join ``kgp`` through the ``kg_platform.cli`` entry-point group.

- ``evaluation``: QA datasets, metrics, the harness behind ``kgp lab eval``, reports and plots;
- ``bench``: ingestion, growth, retrieval-latency and concurrent-load benchmarks;
- ``sage``: the SAGE segmenter's training data and trainer;
- ``decomposer``: PIKE-RAG decomposer training data (Algorithms 2 and 3);
- ``cli``: the ``kgp`` sub-commands of all of the above.
"""
