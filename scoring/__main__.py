"""Run the scoring command line: ``python -m scoring``."""

import sys

from scoring.cli import main

sys.exit(main())
