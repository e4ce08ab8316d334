"""A class: the teacher writes once, every student reads it in their own language.

Its own light pages (``static/``: plain HTML, CSS and JavaScript, not Gradio), its routes
(:mod:`~hunyuan_webui.web.classroom.routes`) and the students' event streams
(:mod:`~hunyuan_webui.web.classroom.stream`) over :mod:`hunyuan_webui.service.rooms`."""

PAGE_PREFIXES = ("/class",)  # a class's pages and calls take the page's access policy
