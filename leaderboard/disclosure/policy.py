"""What of a results object may leave the server (docs/PROBING.md): the allow lists, the switches, the notes.

Organizers see everything. For anyone else:

- While a phase with a private split is not closed, only ``splits.public`` is shown (the
  top-level object mixes private items into every number), and nothing in it may tell
  which answered items are public: the figures that count answered public items
  (``answered``, ``answer_rate``, ``selective_accuracy``, ``ece``, ``aurc``,
  ``risk_coverage``), the per-slice ``n`` and ``correct``, and the bounds of curve bins
  are left out; ``file`` says how many items the whole file answered instead.
- A slice (breakdown value, popularity bucket, curve bin, pair table) is shown only with
  at least ``min_slice_items`` answered items (counted over the whole file while the
  private split is hidden: whether a slice appears must not count public items);
  calibration figures and curves only with 100. Such a slice shows no counts and its
  figures, intervals included, on the grid its answered items support, dithered with
  offsets drawn from the submission's own answers (disclosure/precision.py): an exact
  slice figure is a differencing oracle, open or closed, and offsets drawn from the
  exact figures an equality oracle.
- Exact (4 decimals) are only the figures the phase ranks by (its views' metrics) where
  their slice is shown, and ``overall``'s ``n``, ``answered`` and ``answer_rate`` (the
  participant's own file). Every other figure of ``overall`` is on its grid like a
  slice's, and ``correct`` is not shown. A file answering fewer than ``min_slice_items``
  items shows no figure of ``overall`` at all: two or three answered items with one exact
  figure would tell their labels. ``ece``, ``aurc``, risk-coverage points and reliability
  bins are on the grid, points and bins at least max(min_slice_items, N/20) items apart.
- Built-in baselines follow these rules like any upload (their slices too: an all-yes
  baseline shows what anyone's all-yes upload would). Under ``public_feedback: ladder``
  the public figures follow the ladder (disclosure/probing.py).

Only known keys are passed on: a key added to the result object later stays hidden
until it is listed here. disclosure/redaction.py applies these rules and disclosure/visibility.py
is the one entry (``visible_results``); the switches below are read as ``policy.NAME`` each
time a result is redacted, so the attack suite's control runs can turn them off.
docs/PROBING.md explains each rule with the attack it stops.
"""

from __future__ import annotations

DECIMALS = 4
CURVE_MIN_ANSWERED = 100
"""docs/PROBING.md: ece, aurc and curves of a slice need this many answered items."""
CALIBRATION_DECIMALS = 2
"""ece and aurc reach participants to 2 decimals: with chosen confidences, 4 decimals of ece x answered
decode about five labels per upload even at 100 answered items (docs/PROBING.md)."""
SLICE_KEYS = frozenset({"accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "macro_f1_fixed",
                        "avg_macro_f1", "group_accuracy", "ece", "aurc", "risk_coverage", "n", "answered", "correct",
                        "ci"})
CURVE_KEYS = frozenset({"ece", "aurc", "risk_coverage"})
MEMBERSHIP_KEYS = frozenset({"answered", "answer_rate", "selective_accuracy", "ece", "aurc", "risk_coverage",
                             "n", "correct"})
COUNT_KEYS = frozenset({"answered", "correct"})
RATE_KEYS = frozenset({"accuracy", "answer_rate", "selective_accuracy", "f1", "macro_f1", "macro_f1_fixed",
                       "avg_macro_f1", "group_accuracy"})
SHARES = ("both_correct", "head_only", "tail_only", "neither")
SAMPLE_PRECISION = True
"""Slices, calibration figures and curves reach participants on their sample's grid (disclosure/precision.py);
the attack suite's control runs turn it off."""
FRESH_DRAWS = True
"""Dither offsets come from the submission's answers (any change draws afresh); the attack suite's control runs
turn it off (offsets from the slice's exact figures: equal counts show equal figures, an equality oracle)."""
OVERALL_BOUNDED = True
"""Only ranked figures and the file's own counts are exact in ``overall``, the rest on its grid, and a file answering
fewer than min_slice_items items shows none; the attack suite's control runs turn it off (every overall rate exact)."""
SENSITIVE_KEYS = frozenset({"f1", "macro_f1", "macro_f1_fixed", "group_accuracy"})
"""Figures one answer can move by more than a step of their slice (f1 by 2/(predicted + actual positives), group
accuracy by 1/groups): shown in overall, where those counts are large, but in no smaller slice unless ranked."""
OWN_KEYS = frozenset({"n", "answered", "answer_rate"})
"""Figures of ``overall`` that only count the participant's own file (while no private split is hidden)."""
CURVE_POINTS = 20
"""Risk-coverage points and reliability bins shown at most: at least N / CURVE_POINTS items apart (or in a bin)."""
FEW_ANSWERED_NOTE = ("Your file answers fewer than {k} items (or not every item of a smaller phase): no score of it "
                     "is shown, since a figure over so few answers would tell their labels.")
SMALL_SLICE_NOTE = ("Breakdown rows with fewer than {k} answered items are not shown, and calibration "
                    "figures need 100, so that no single item's correctness can be read off.")
HIDDEN_SPLIT_NOTE = ("Until the phase closes, figures that would tell which of your answered items belong to this "
                     "split (answered counts, answer rates, item counts per slice, calibration) are not shown; "
                     "'file' gives your whole file's answer rate.")
