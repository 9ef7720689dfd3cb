"""Run the client as ``python -m tailboard_cli``."""

import sys

from tailboard_cli.main import main

sys.exit(main())
