"""The Gradio page: its layout, listeners, client code, and words in English and Chinese
(the fonts it lends are :mod:`hunyuan_webui.web.fonts`, which the class pages share).

A thin layer over :mod:`hunyuan_webui.service`: it holds no threads and no polling loops; texts
go through the service's front door (:meth:`hunyuan_webui.service.Translator.translate_texts`,
long ones in parts) and files through its second
(:class:`hunyuan_webui.service.operations.filejob.FileJob`)."""
