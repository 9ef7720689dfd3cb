"""Tailboard's scoring library: read prediction files, validate them, compute metrics.

Pure Python over numpy and pyarrow; it never imports the web stack.
"""
