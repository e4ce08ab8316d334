"""The bottom layer: plain values every other layer may use, and nothing that does work.

Decoding options (:mod:`.decoding`), the engine kinds (:mod:`.kinds`), what an engine is configured
with (:mod:`.config`) and what a checkpoint is (:mod:`.spec`). Nothing here imports from the
package except :mod:`hunyuan_webui.errors`; so the engines, the model registry and the settings
can all depend on these without depending on each other.
"""
