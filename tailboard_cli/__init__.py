"""The ``tailboard`` command-line client: submit prediction files and read scores over the API."""

__version__ = "0.1.0"
