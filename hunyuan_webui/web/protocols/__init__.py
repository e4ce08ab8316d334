"""The protocols the app speaks, a module each: its schemas, error shape, key rule and routes
together. The JSON API (v1), OpenAI's, DeepL's and LibreTranslate's, the extensions' small JSON
shapes, and the operational routes (ops)."""
