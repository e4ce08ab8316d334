"""The protocols the app speaks: the JSON API (``v1``), OpenAI's, DeepL's and LibreTranslate's,
the extensions' small JSON shapes, the documents APIs, OpenAI's transcriptions (``audio``) and
the operational routes (``ops``).

Each protocol is a package of three parts, as vLLM's entrypoints are:

- ``schemas.py``: what its clients send and read: the request bodies or parameters, the answers'
  shapes where they are not plain dicts, and the protocol's error shape (with the
  :class:`~hunyuan_webui.web.responses.ShapedErrorRoute` that answers every error of its routes
  in that shape);
- ``mapping.py``: the way onto the service's front door and back: a request as
  :class:`~hunyuan_webui.service.TranslationRequest` objects for
  :meth:`~hunyuan_webui.service.Translator.translate_texts` (files: the service's
  :class:`~hunyuan_webui.service.operations.filejob.FileJob`), the results as the protocol's
  answers. No HTTP in it beyond what the answer is made of;
- ``routes.py``: thin module-level route handlers on a module-level ``APIRouter``, which read
  what they work with from the app through :data:`~hunyuan_webui.web.deps.EdgeDep`
  (``app.state.edge``: the translator, metrics, access policy, redactor, documents) and the
  caller through :data:`~hunyuan_webui.web.deps.CallerDep`, never from a closure; it ends with
  the protocol's :class:`~hunyuan_webui.web.protocols.protocol.Protocol` record.

How to add a protocol (``audio/`` is the newest, and a small example):

1. make ``web/protocols/<name>/`` with ``__init__.py`` (a docstring: what clients speak it and
   what it answers), ``schemas.py``, ``mapping.py`` and ``routes.py`` as above; a route that
   translates calls ``edge.translator.translate_texts`` (or ``atranslate_texts`` /
   ``atranslate_many`` on the event loop) and nothing behind it (``scripts/check_structure.py``
   refuses the long-text and job modules and ``.engine``);
2. end ``routes.py`` with ``PROTOCOL = Protocol(name, router, ...)``: its open routes (no key),
   the routes that read their key from the body or the query, and the path prefixes whose
   refusals at the Gatekeeper take its error shape;
3. add ``<name>.routes.PROTOCOL`` to :data:`PROTOCOLS` below. The app includes its routes, the
   access policy learns its open and body-key routes, the Gatekeeper its error shape; no URL is
   written anywhere else. ``tests/http/test_protocol_layout.py`` checks that every route handler
   is a module-level function.

``ops.py`` (health, readiness, metrics, cache, model) takes no body and maps nothing onto the
front door, so it is one module.
"""

from hunyuan_webui.web.protocols import ops
from hunyuan_webui.web.protocols.audio import routes as audio
from hunyuan_webui.web.protocols.deepl import routes as deepl
from hunyuan_webui.web.protocols.documents import routes as documents
from hunyuan_webui.web.protocols.extensions import routes as extensions
from hunyuan_webui.web.protocols.libretranslate import routes as libretranslate
from hunyuan_webui.web.protocols.openai import routes as openai_protocol
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.protocols.v1 import routes as v1

# The one list of protocols the app speaks (see :mod:`hunyuan_webui.web.protocols.protocol`).
PROTOCOLS: tuple[Protocol, ...] = (ops.PROTOCOL, v1.PROTOCOL, libretranslate.PROTOCOL,
                                   openai_protocol.PROTOCOL, deepl.PROTOCOL, extensions.PROTOCOL,
                                   documents.PROTOCOL, documents.DEEPL_PROTOCOL, audio.PROTOCOL)
