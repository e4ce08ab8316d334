"""Documents over HTTP: DeepL's document API and the JSON API's ``/v1/documents``.

Both hand the uploaded file to :class:`~hunyuan_webui.service.operations.documents.DocumentJobs`
(the file translators of :mod:`hunyuan_webui.files`, in the background, bounded, kept
``--files-ttl`` seconds, never written to disk) and read it back:

- DeepL's, so that ``deepl.Translator(key, server_url=...).translate_document`` works unchanged:
  ``POST /v2/document`` (multipart: ``file``, ``target_lang``, ``source_lang``...) ->
  ``{"document_id", "document_key"}``; ``POST /v2/document/{id}`` with ``document_key`` ->
  ``{"status": queued|translating|done|error, "seconds_remaining", "billed_characters"}``;
  ``POST /v2/document/{id}/result`` with ``document_key`` -> the file (503 until it is done).
- The JSON API's: ``POST /v1/documents`` (multipart: ``file``, ``target_lang``, ``source_lang``)
  -> ``{"id", "status", ...}``; ``GET /v1/documents/{id}`` (status and progress);
  ``GET /v1/documents/{id}/result`` (the file); ``DELETE /v1/documents/{id}`` (cancel).

A document belongs to the key that uploaded it (else to the uploading address); DeepL's also
needs its ``document_key``. Characters are counted against the caller like any translation.
``schemas.py`` holds the upload, ``mapping.py`` the way onto the service's file jobs and back,
``routes.py`` the routes.
"""
