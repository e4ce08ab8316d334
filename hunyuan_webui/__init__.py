"""Hunyuan-MT web translator: a streaming, batching, caching browser UI and API for Tencent's
Hunyuan-MT model family.

Layers, one way: ``engine`` (tokens, no Gradio or HTTP) -> ``service`` (validation, detection,
segmentation, cache) -> ``ui`` (Gradio) and ``api`` (FastAPI) as thin edges; ``app`` wires them.
Importing the package never loads weights or starts a server.
"""

__version__ = "0.1.0"
