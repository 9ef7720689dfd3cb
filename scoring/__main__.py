"""Run the scoring command line: ``python -m scoring``."""

import sys

from scoring.cli import main, refuse_pandas

refuse_pandas()
sys.exit(main())
