"""The sentences a board states: how it ranks, which feedback rule applies, what a statistical tie means."""

from __future__ import annotations

from leaderboard.board.cells import shown_split
from leaderboard.board.layout import BoardLayout, path_label
from leaderboard.disclosure import probing_settings
from leaderboard.models import Phase
from scoring import higher_is_better

SPLIT_WORDS = {"public": "the public split", "private": "the private split", "all": "all items"}
EXACT_RULE = ("The ranking value and its interval are exact, rounded to 4 decimals; other figures computed on hidden "
              "labels are coarse, shown with ± their step: rounded to it with random noise, about a step from the "
              "exact figure (within two steps 93 times in 100), so that no single answer can be read off them.")
LADDER_RULE = ("Public scores follow the ladder: an entry's shown score changes only when a new submission of its "
               "team beats the team's shown best by more than the ladder step, and is then rounded to a multiple of "
               "the step; the final ranking after the phase closes uses exact scores.")
STAT_RANK_NOTE = ("Entries that share a statistical rank are statistically tied: no other entry of the group has a 95% "
                  "interval entirely better than theirs, so their order may be chance. p is the exact McNemar test "
                  "against the entry ranked just above, on the same items (shown for accuracy and group accuracy).")


def rule_sentence(phase: Phase, layout: BoardLayout, *, board: str, view_index: int) -> str:
    """Return the ranking rule of one view on one board, as the page and the API state it."""
    view = layout.views[view_index]
    higher = higher_is_better(view.metric)
    split = shown_split(phase, board)
    rule = (f"Each entry's best submission is ranked by {path_label(view.metric)} ({view.metric}) on "
            f"{SPLIT_WORDS[split]} ({'higher' if higher else 'lower'} is better); ties go to the earlier "
            "submission, then to the lower submission id. An entry is a team, or a participant without a team, "
            "with one method. Baselines are shown for reference and take no rank.")
    ladder = probing_settings(phase).ladder and board == "open"
    rule += " " + (LADDER_RULE if ladder else EXACT_RULE)
    limit = (phase.task_config or {}).get("final_selections")
    if isinstance(limit, int) and not isinstance(limit, bool):
        when = "This ranking uses" if board == "closed" else "After the phase closes, the ranking uses"
        rule += (f" {when} each team's final selections (at most {limit}), or for a team that selected none its "
                 f"{limit} best submissions by public score; an entry with none of them is not ranked.")
    return rule
