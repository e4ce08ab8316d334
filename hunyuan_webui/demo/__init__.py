"""The tiny demo models: their phrase table (:mod:`.phrases`), chat formats (:mod:`.formats`),
the shipped checkpoints (:mod:`.model`), the GGUF copy for llama.cpp (:mod:`.gguf`) and the
trainer (:mod:`.training`), which is imported only to build a checkpoint."""
