"""The WSGI app for bench/oracle_attacks.py: the real app, with issue 17's defence off when ORACLE_DEFENCE_OFF is set.

``gunicorn -c deploy/gunicorn.conf.py --pythonpath bench oracle_app:app``. The switches are
module constants of disclosure/visibility.py, so only the serving process can flip them: each
worker imports this module and flips them before it builds the app.
"""

import os

from leaderboard import create_app
from leaderboard.disclosure import policy

if os.environ.get("ORACLE_DEFENCE_OFF"):
    policy.FRESH_DRAWS = False  # offsets keyed on the slice's exact figures: the equality oracle
    policy.OVERALL_BOUNDED = False  # every overall rate exact, also for files answering a few items

app = create_app()
