"""The HTML pages: one blueprint per audience, thin handlers that parse input, call one domain function, render.

``public`` (competitions, phases, uploads, the ranking and its curves), ``auth``,
``organizer``, ``bundles`` (a competition bundle's upload, preview and confirmation),
``operations`` (jobs, audit log, moderation), ``participation``, ``teams``
and ``tokens``; ``board_args`` reads a ranking page's query string. The composition root
registers each ``bp``.
"""
