"""What of a score may leave the server (docs/PROBING.md): visibility, precision, probing settings, the ladder.

``visibility.visible_results`` is the one entry: ``policy`` lists what may be shown (and
the switches the attack suite turns off), ``redaction`` applies it slice by slice,
``precision`` puts coarse figures on their sample's grid, ``probing`` holds a phase's
probing settings and ``ladder`` decides which public score is shown; ``ranked_figures``
names the figures a phase ranks by. May import entries, phase_data, accounts, notify,
models and platform; never the board.
"""

from __future__ import annotations

from leaderboard.disclosure.ladder import LadderDecision, ladder_walk, rounded_to_step, submission_decision
from leaderboard.disclosure.policy import SENSITIVE_KEYS
from leaderboard.disclosure.precision import with_draw
from leaderboard.disclosure.probing import feedback_rule, probing_settings, update_probing_settings, with_probing
from leaderboard.disclosure.visibility import private_hidden, round_floats, visible_results

__all__ = [
    "LadderDecision", "SENSITIVE_KEYS", "feedback_rule", "ladder_walk", "private_hidden", "probing_settings",
    "round_floats", "rounded_to_step", "submission_decision", "update_probing_settings", "visible_results", "with_draw",
    "with_probing"
]
