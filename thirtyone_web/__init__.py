"""The web app (app layer): play against the project's agents, watch them, step through replays.

``thirtyone serve`` runs it (the ``web`` extra: ``pip install "thirtyone-env[web]"``); ``create_app``
builds the Starlette app; the page and its assets ship in ``static/`` (no CDN, no build step).
"""

from thirtyone_web.app import create_app, serve

__all__ = ["create_app", "serve"]
