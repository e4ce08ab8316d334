"""LibreTranslate's routes (``POST /translate``, ``GET|POST /languages``, ``POST /detect``), so its
clients and browser extensions work unchanged. Its clients send forms, JSON or query strings, and
may carry the key in the body (``api_key``). ``schemas.py`` holds the parameters and the error
shape, ``mapping.py`` the way onto the service's front door, ``routes.py`` the routes.
"""
