"""The Gradio page: its layout, listeners, client code, words in English and Chinese, and fonts.

A thin layer over :mod:`hunyuan_webui.service`: it holds no threads and no polling loops; long
texts and files are service operations (:mod:`hunyuan_webui.service.operations.longtext`,
:mod:`hunyuan_webui.service.operations.filejob`)."""
