"""The Gradio page: its layout, listeners, client code, and words in English and Chinese
(the fonts it lends are :mod:`hunyuan_webui.web.fonts`, which the class pages share).

A thin layer over :mod:`hunyuan_webui.service`: it holds no threads and no polling loops; long
texts and files are service operations (:mod:`hunyuan_webui.service.operations.longtext`,
:mod:`hunyuan_webui.service.operations.filejob`)."""
