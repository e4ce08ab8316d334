"""Benchmarks and soaks, outside the runtime package: ``python -m benchmarks.bench --help``.

``bench.py`` measures serving throughput against the old WebUI and ``transformers serve``
(docs/PERFORMANCE.md); ``classroom.py`` runs 30 simulated students with an engine crash
(docs/RELIABILITY.md); ``gpu.py`` is the one prepared run on a lent GPU (the 7B shape against
its bandwidth ceiling; docs/PERFORMANCE.md, "On a GPU"). ``peers.py`` starts the systems compared
and builds random checkpoints of the real architecture; ``clients.py`` speaks each system's
protocol; ``report.py`` turns samples into tables.
"""
