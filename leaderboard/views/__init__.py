"""Blueprints: thin handlers that parse input, call one service and render or serialize."""
