"""Hidden label files (docs/FORMATS.md, Hidden label file): ``load_labels`` parses, checks and builds a ``LabelSet``.

The pipeline: ``fast`` (pyarrow) or ``careful`` (line by line) parses the file into
raw columns (``raw``); ``check`` applies every field's rule (``rules``) once, whichever
parser ran; ``build`` makes the label set (``labelset``); ``cache`` keeps it on disk
under a key (``cache_key``) that covers the code of this package.
"""

from __future__ import annotations

from scoring.labels.labelset import LabelSet, Membership
from scoring.labels.loader import load_labels
from scoring.types import BUCKET_NAMES, HEAD, NO_BUCKET, TAIL, TORSO

__all__ = ["BUCKET_NAMES", "HEAD", "NO_BUCKET", "TAIL", "TORSO", "LabelSet", "Membership", "load_labels"]
