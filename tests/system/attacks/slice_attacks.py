"""Differencing attacks on the slices of one's own submissions: QA's A, B and C of "Label secrecy, part 2".

Each attack uploads a reference file and files that change a few chosen items, reads back
what a participant sees through the API, and claims an item's status (its label, or
``PRIVATE``) only when every hypothesis consistent with the figures agrees on it. A figure
is taken to be exact within half a unit of its 4th decimal, or within one ``grid`` step
when the slice carries a grid (disclosure/precision.py: a dithered figure lies within one
step of the exact one). Claims wrong under the truth are counted by the tests too.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from probing_world import Caller, Platform, csv_file
from realistic_world import Item, single_category

PRIVATE = "private"
PUBLIC = "public"
EXACT = 0.00005
Status = bool | str
EFFECT = {  # change of a slice's correct count when an item answered yes is answered no / left out
    "no": {True: -1, False: 1, PRIVATE: 0, PUBLIC: 0},
    "abstain": {True: -1, False: 0, PRIVATE: 0, PUBLIC: 0},
}


def flip_per_category(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *, uploads: int,
                      statuses: tuple[Status, ...] = (True, False)) -> dict[str, Status]:
    """A: answer everything yes, then per upload answer one single-category item no and leave one out, per row."""
    everything: dict[str, bool | None] = {item.id: True for item in items}
    reference = _table(platform.upload_and_read(caller, phase_id, csv_file(everything)))
    decoded: dict[str, Status] = {}
    for plan in _plans(items, reference, uploads):
        answers = dict(everything) | {a.id: False for a, _ in plan.values()} | {b.id: None for _, b in plan.values()}
        table = _table(platform.upload_and_read(caller, phase_id, csv_file(answers)))
        decoded |= _decode_rows(reference, table, plan, statuses, items)
    return decoded


def private_after_close(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *,
                        uploads: int) -> dict[str, Status]:
    """C: the uploads of A made before close, read after close from the private split's and all items' rows."""
    everything: dict[str, bool | None] = {item.id: True for item in items}
    reference_id = platform.submit(caller, phase_id, csv_file(everything))
    plans = _plans(items, {category: {} for category in single_category(items)}, uploads)
    ids = []
    for plan in plans:
        answers = dict(everything) | {a.id: False for a, _ in plan.values()} | {b.id: None for _, b in plan.values()}
        ids.append(platform.submit(caller, phase_id, csv_file(answers)))
    platform.close(phase_id)
    reference = platform.scores(caller, reference_id)
    decoded: dict[str, Status] = {}
    for submission_id, plan in zip(ids, plans, strict=True):
        scores = platform.scores(caller, submission_id)
        decoded |= _decode_rows(_table(reference), _table(scores), plan, (True, False), items)
        private = _table((reference.get("splits") or {}).get("private") or {})
        decoded |= _decode_rows(private, _table((scores.get("splits") or {}).get("private") or {}), plan,
                                (True, False, PUBLIC), items)
    return decoded


def risk_coverage_blocks(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *,
                         precision: Callable[[int], float], block: int = 25) -> dict[str, bool]:
    """B: confidences in blocks of 25; flip one item between each two shown points; each segment's wrong count."""
    n = len(items)
    confidences = {item.id: round(0.99 - (k // block) * 0.0001, 4) for k, item in enumerate(items)}
    everything: dict[str, bool | None] = {item.id: True for item in items}
    reference = _wrong_counts(platform.upload_and_read(caller, phase_id, csv_file(everything, confidences)), n,
                              precision)
    points = sorted(reference)
    flips = {end: items[start] for start, end in zip([0, *points[:-1]], points, strict=True) if end > start}
    answers = everything | {item.id: False for item in flips.values()}
    flipped = _wrong_counts(platform.upload_and_read(caller, phase_id, csv_file(answers, confidences)), n, precision)
    decoded, before = {}, (0.0, 0.0)
    for end in points:
        if end not in flipped or end not in flips:
            return decoded
        lo = flipped[end][0] - reference[end][1]
        hi = flipped[end][1] - reference[end][0]
        change = (lo - before[1], hi - before[0])  # this segment's own change of wrong answers
        if not change[0] <= -1 <= change[1]:
            decoded[flips[end].id] = True  # a true item answered no: one more wrong
        elif not change[0] <= 1 <= change[1]:
            decoded[flips[end].id] = False
        before = (lo, hi)
    return decoded


def boundary_hunt(platform: Platform, caller: Caller, phase_id: int, items: list[Item], *,
                  uploads: int) -> dict[str, bool]:
    """Hunt each row's rounding boundary, then read one item per row per upload there, assuming a fixed grid.

    Leaving out a row's single-category items one more per upload, the first upload whose
    shown accuracy drops says its last item was true, and that the upload before sat on a
    boundary: from there, leaving out one more item drops the figure exactly when it is true.
    Certain when figures are rounded to a fixed grid; a guess when the grid is dithered.
    """
    everything: dict[str, bool | None] = {item.id: True for item in items}
    singles = single_category(items)
    shown = {c: row.get("accuracy") for c, row in _table(platform.upload_and_read(
        caller, phase_id, csv_file(everything))).items()}
    hunting = {category: 0 for category in shown if singles[category]}  # items left out so far
    edge: dict[str, tuple[int, float, int]] = {}  # category -> (prefix on the boundary, its figure, next probe)
    decoded: dict[str, bool] = {}
    for _ in range(uploads):
        left_out = {c: singles[c][:k + 1] for c, k in hunting.items() if k + 1 <= len(singles[c])}
        left_out |= {c: singles[c][:k] + singles[c][j:j + 1] for c, (k, _, j) in edge.items() if j < len(singles[c])}
        answers = everything | {item.id: None for group in left_out.values() for item in group}
        table = _table(platform.upload_and_read(caller, phase_id, csv_file(answers)))
        for category, group in left_out.items():
            value = (table.get(category) or {}).get("accuracy")
            if not isinstance(value, float):
                continue
            if category in edge:
                k, figure, j = edge[category]
                decoded[group[-1].id] = value < figure
                edge[category] = (k, figure, j + 1)
            elif value < shown[category]:
                decoded[group[-1].id] = True
                edge[category] = (len(group) - 1, shown[category], len(group))
                del hunting[category]
            else:
                hunting[category] += 1
    return decoded


def _plans(items: list[Item], rows: dict[str, Any], uploads: int) -> list[dict[str, tuple[Item, Item]]]:
    """Return per upload, per shown row, the (answered no, left out) pair of its single-category items."""
    singles = single_category(items)
    return [{category: (singles[category][2 * u], singles[category][2 * u + 1]) for category in rows
             if len(singles.get(category, [])) >= 2 * u + 2} for u in range(uploads)]


def _decode_rows(reference: dict[str, Any], table: dict[str, Any], plan: dict[str, tuple[Item, Item]],
                 statuses: tuple[Status, ...], items: list[Item]) -> dict[str, Status]:
    """Return the statuses every hypothesis consistent with each row's two figures agrees on."""
    sizes = {category: sum(category in item.categories for item in items) for category in plan}
    decoded: dict[str, Status] = {}
    for category, (answered_no, left_out) in plan.items():
        before, after = reference.get(category), table.get(category)
        if not before or not after:
            continue
        kept = [pair for pair in itertools.product(statuses, repeat=2)
                if _consistent(EFFECT["no"][pair[0]] + EFFECT["abstain"][pair[1]], before, after, sizes[category])]
        for index, item in enumerate((answered_no, left_out)):
            if kept and len({pair[index] for pair in kept}) == 1:
                decoded[item.id] = kept[0][index]
    return decoded


def _consistent(delta: int, before: dict[str, Any], after: dict[str, Any], n_max: int) -> bool:
    """Return whether some slice size and correct count fit both figures with this change of the count."""
    sizes = [before["n"]] if isinstance(before.get("n"), int) else range(1, n_max + 1)
    for n in sizes:
        first, second = _counts(before, n), _counts(after, n)
        if first is None or second is None:
            return True
        if max(first[0], second[0] - delta, 0, -delta) <= min(first[1], second[1] - delta, n, n - delta):
            return True
    return False


def _counts(part: dict[str, Any], n: int) -> tuple[int, int] | None:
    """Return the range of correct counts a slice of n items may hold given what it shows."""
    if isinstance(part.get("correct"), int):
        return part["correct"], part["correct"]
    accuracy = part.get("accuracy")
    if not isinstance(accuracy, (int, float)):
        return None
    width = float(part["grid"]) if isinstance(part.get("grid"), (int, float)) else EXACT
    return math.ceil(n * (accuracy - width) - 1e-9), math.floor(n * (accuracy + width) + 1e-9)


def _wrong_counts(scores: dict[str, Any], n: int,
                  precision: Callable[[int], float]) -> dict[int, tuple[float, float]]:
    """Return, per shown risk-coverage point, its item count and the range of wrong answers up to it."""
    out = {}
    for coverage, risk in scores.get("risk_coverage") or []:
        covered = round(coverage * n)
        width = precision(covered)
        out[covered] = (covered * (risk - width) - 1e-6, covered * (risk + width) + 1e-6)
    return out


def _table(scores: dict[str, Any]) -> dict[str, Any]:
    """Return the category breakdown rows of a result object."""
    return dict(((scores.get("breakdowns") or {}).get("category")) or {})
