"""Run the scoring command line: ``python -m scoring`` (exit codes 0, 2, 3; see scoring.cli)."""

from scoring.cli import refuse_pandas, run_and_exit

refuse_pandas()
run_and_exit()
