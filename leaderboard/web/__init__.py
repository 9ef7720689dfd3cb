"""Everything that imports Flask: request context, security, errors as responses, templates, pages, the API.

``context`` (the runtime on the app, one ServiceContext per request), ``extensions``,
``security``, ``errors`` (domain errors -> HTML or JSON), ``templating``, ``converters``,
``forms`` and ``organizer_forms``, ``charts`` (view models of the long-tail charts);
``board_cache/`` (the caches in front of the board: where the ranking is cached);
``pages/`` (the HTML blueprints) and ``api/`` (the JSON API at /api/v1): where it is
served. An entry point: it may import any domain package, never workers or cli.
"""
