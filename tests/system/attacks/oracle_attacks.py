"""The attacks of issue 17 ("Secrecy, part 3") as a participant's script runs them against the API.

1. Equality oracle: a reference file answers every item yes but one known-label anchor per
   tested group no; each later upload swaps, in every tested group at once, the answers of
   the anchor and one target. A group's own rows shown byte-identical in both uploads say
   the two labels are equal (the count tables are), a change says they differ.
2. Membership, while the private split is hidden: the same swap with a public anchor of
   each label. A public target leaves exactly one of its two swaps unchanged, a private
   one neither (the public row then only sees the anchor's answer flip).
3. Tiny files: answer a yes and b no, abstain on the rest; every overall figure is a
   function of (a's label, b's label), so each shown figure rules hypotheses out.
4. Many accounts: attack 1 with every upload from a fresh account (under the ladder each
   account's first upload is released with every slice).
5. Zero floor (found while writing these): a dithered figure that is exactly 0 is shown 0,
   so a row answered no but for one target shows f1 > 0 only when the target is true.

Every attack claims what it read and never abstains on a row it can read, so a defence
shows as claims no better than a coin; attacks 3 and 5 claim only what the figures prove
(every hypothesis left agrees), so a sound defence shows as no claims.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from oracle_world import Group, dev_set, packed, row
from probing_world import Caller, Platform, csv_file
from realistic_world import Item

PRIVATE, PUBLIC = "private", "public"
EXACT = 0.00006  # a figure shown to 4 decimals is within this of the exact one (and float noise)
Status = bool | str
Callers = Callable[[], Caller]


def equality_oracle(platform: Platform, callers: Callers, phase_id: int, items: list[Item], *,
                    uploads: int) -> dict[str, bool]:
    """Attacks 1 and 4: one reference, then per upload one swap per tested group; returns target -> label.

    ``callers`` gives the account of each upload: always the same one (attack 1) or a fresh one (attack 4).
    """
    tested = packed(items, size=1 + uploads)
    anchors = {group: dev_set(group)[0] for group in tested}
    everything: dict[str, bool | None] = {item.id: True for item in items}
    everything |= {anchor.id: False for anchor in anchors.values()}
    reference = platform.upload_and_read(callers(), phase_id, csv_file(everything))
    decoded: dict[str, bool] = {}
    for u in range(uploads):
        targets = {group: [item for item in group.items if item != anchors[group]][u] for group in tested}
        shown = platform.upload_and_read(callers(), phase_id, csv_file(_swapped(everything, targets, anchors)))
        for group, target in targets.items():
            same = _unchanged(reference, shown, group)
            if same is not None:
                decoded[target.id] = anchors[group].label if same else not anchors[group].label
    return decoded


def membership_oracle(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *,
                      rounds: int) -> dict[str, Status]:
    """Attack 2: per round, swap each group's target with its public true anchor, then with its public false one.

    Returns target -> PRIVATE, or its label (which says public too).
    """
    tested = [g for g in packed(items, size=2 + rounds) if dev_set(g, public_of_each_label=True)]
    known = {group: dev_set(group, public_of_each_label=True) for group in tested}
    everything: dict[str, bool | None] = {item.id: True for item in items}
    everything |= {a.id: False for pair in known.values() for a in pair}
    reference = platform.upload_and_read(caller, phase_id, csv_file(everything))
    decoded: dict[str, Status] = {}
    for r in range(rounds):
        targets = {group: [item for item in group.items if item not in known[group]][r] for group in tested}
        same: dict[Group, list[bool | None]] = {group: [] for group in tested}
        for which in (0, 1):  # the true anchor, then the false one
            anchors = {group: pair[which] for group, pair in known.items()}
            shown = platform.upload_and_read(caller, phase_id, csv_file(_swapped(everything, targets, anchors)))
            for group in tested:
                same[group].append(_unchanged(reference, shown, group))
        for group, target in targets.items():
            if same[group] == [False, False]:
                decoded[target.id] = PRIVATE
            elif same[group] in ([True, False], [False, True]):
                decoded[target.id] = same[group][0] is True  # unchanged with the true anchor: true
    return decoded


def tiny_files(platform: Platform, caller: Caller, phase_id: int, pairs: list[tuple[Item, Item]],
               n_items: int) -> dict[str, bool]:
    """Attack 3: per upload answer a yes and b no, abstain elsewhere; decode both from the overall figures."""
    decoded: dict[str, bool] = {}
    for a, b in pairs:
        overall = platform.upload_and_read(caller, phase_id, csv_file({a.id: True, b.id: False})).get("overall") or {}
        left = [h for h in itertools.product((True, False), repeat=2) if _fits(overall, _figures(h[0], h[1], n_items))]
        for index, item in enumerate((a, b)):
            if left and len({h[index] for h in left}) == 1:
                decoded[item.id] = left[0][index]
    return decoded


def zero_floor(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *,
               uploads: int) -> dict[str, bool]:
    """Answer everything no but one target per tested group yes; a row's f1 shown above what 0 can show says true.

    An exact 0 (no true positive in the row) stays 0 whatever the dither, and its interval
    [0, 0] stays within a step and its widening of 0; one true positive makes both positive.
    Claims only what that proves: a target is true.
    """
    tested = packed(items, size=uploads)
    everything: dict[str, bool | None] = {item.id: False for item in items}
    decoded: dict[str, bool] = {}
    for u in range(uploads):
        targets = {group: group.items[u] for group in tested}
        answers = everything | {target.id: True for target in targets.values()}
        shown = platform.upload_and_read(caller, phase_id, csv_file(answers))
        for group, target in targets.items():
            if any(_positive_f1(row(shown, where)) for where in group.owned):
                decoded[target.id] = True
    return decoded


def uploads_until_refused(platform: Platform, caller: Caller, phase_id: int, item: Item, *,
                          attempts: int) -> tuple[int, int | None]:
    """Attack 5's budget: upload a one-item file until refused; return (accepted uploads, the refusal's status)."""
    for accepted in range(attempts):
        response = platform.upload(caller, phase_id, csv_file({item.id: accepted % 2 == 0}))
        if response.status_code != 202:
            return accepted, response.status_code
    return attempts, None


def _swapped(everything: dict[str, bool | None], targets: dict[Group, Item],
             anchors: dict[Group, Item]) -> dict[str, bool | None]:
    """Return the reference answers with each group's target answered no and its anchor yes."""
    swapped: dict[str, bool | None] = dict(everything)
    for group, target in targets.items():
        swapped[target.id], swapped[anchors[group].id] = everything[anchors[group].id], everything[target.id]
    return swapped


def _unchanged(reference: dict[str, Any], shown: dict[str, Any], group: Group) -> bool | None:
    """Return whether every slice the group owns is shown identical in both uploads; None if one is not shown."""
    pairs = [(row(reference, where), row(shown, where)) for where in group.owned]
    readable = [(before, after) for before, after in pairs if before is not None and after is not None]
    if not readable:
        return None
    return all(before == after for before, after in readable)


def _positive_f1(part: dict[str, Any] | None) -> bool:
    """Return whether a shown row proves its exact f1 above 0: the value, or its interval's top, beyond 0's reach."""
    if part is None:
        return False
    width = _width(part, "f1")
    value = part.get("f1")
    interval = (part.get("ci") or {}).get("f1")
    top = interval[1] if isinstance(interval, list) and len(interval) == 2 else None
    widened = width if width > EXACT else 0.0  # a coarse interval is one step wider on each side
    return (isinstance(value, (int, float)) and value >= width - 1e-9) or (
        isinstance(top, (int, float)) and top >= width + widened - 1e-9)


def _figures(a_true: bool, b_true: bool, n_items: int) -> dict[str, tuple[float, float]]:
    """Return the range of each overall figure of the file (a yes, b no, rest abstained) under one hypothesis.

    f1 and macro_f1 also depend on how many labels are true, which the attacker does not
    know, so only "zero or not" is used: a positive value is at least 1/(n_items + 2).
    """
    tp, tn = int(a_true), int(not b_true)
    correct = tp + tn
    positive = (1.0 / (n_items + 2), 1.0)
    return {"accuracy": (correct / n_items,) * 2, "selective_accuracy": (correct / 2,) * 2,
            "answer_rate": (2 / n_items,) * 2, "correct": (correct,) * 2, "answered": (2.0, 2.0),
            "f1": positive if tp else (0.0, 0.0), "macro_f1": positive if tp or tn else (0.0, 0.0)}


def _fits(shown: dict[str, Any], figures: dict[str, tuple[float, float]]) -> bool:
    """Return whether every shown figure is within its precision of the hypothesis's range."""
    for key, (lo, hi) in figures.items():
        value = shown.get(key)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        width = _width(shown, key)
        if not (lo < value + width and hi > value - width):
            return False
    return True


def _width(shown: dict[str, Any], key: str) -> float:
    """Return how far the exact figure may lie from the shown one: its grid unless it is listed exact, else 4 decimals.

    A count is an integer: exact within a half.
    """
    grid = shown.get("grid")
    if not isinstance(grid, (int, float)) or isinstance(grid, bool) or key in (shown.get("exact") or ()):
        return 0.5 if key in ("correct", "answered") else EXACT
    return float(grid)
