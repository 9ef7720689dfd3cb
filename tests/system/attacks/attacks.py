"""The label-probing attacks of issue 7, written as a participant would run them against the API.

Each attack returns what it decoded (item id -> label, or -> is public) and only claims an
item when the figures it read tell that item apart; the tests then count how much of
it matches the truth. Figures an attack cannot read (withheld, held by the ladder)
leave items undecoded.
"""

from __future__ import annotations

import itertools
from typing import Any

from probing_world import Caller, Item, Platform, csv_file

ECE_CONFIDENCES = (0.49, 0.52, 0.39, 0.69, 0.15)  # one calibration bin each; |1 - 2c| superincreasing


def one_item(platform: Platform, caller: Caller, phase_id: int, targets: list[Item]) -> dict[str, bool]:
    """Answer one item alone, once yes and once no; the upload that scores higher had the right answer."""
    decoded = {}
    for item in targets:
        yes = _overall_signal(platform.upload_and_read(caller, phase_id, csv_file({item.id: True})))
        no = _overall_signal(platform.upload_and_read(caller, phase_id, csv_file({item.id: False})))
        if yes is not None and no is not None and yes != no:
            decoded[item.id] = yes > no
    return decoded


def flip_one(platform: Platform, caller: Caller, phase_id: int, items: list[Item],
             targets: list[Item]) -> dict[str, bool]:
    """Answer every item yes, then flip one item to no per upload: a drop means it was yes."""
    everything = {item.id: True for item in items}
    base = _overall_signal(platform.upload_and_read(caller, phase_id, csv_file(everything)))
    decoded = {}
    for item in targets:
        flipped = _overall_signal(platform.upload_and_read(caller, phase_id, csv_file({**everything, item.id: False})))
        if base is not None and flipped is not None and flipped != base:
            decoded[item.id] = flipped < base
    return decoded


def per_category(platform: Platform, caller: Caller, phase_id: int, items: list[Item]) -> dict[str, bool]:
    """Answer one item per category (yes) in one upload; each category's figure says if it was right."""
    targets = _first_per_category(items, 1)
    scores = platform.upload_and_read(caller, phase_id, csv_file({item.id: True for item in targets}))
    return _decode_categories(scores, targets)


def ece(platform: Platform, caller: Caller, phase_id: int, items: list[Item]) -> dict[str, bool]:
    """Answer five items per category with chosen confidences; ece x 5 of a category decodes all five.

    A second upload answers one category's five items alone and decodes them from the overall ece.
    """
    targets = _first_per_category(items, len(ECE_CONFIDENCES))
    confidences = {item.id: ECE_CONFIDENCES[n % len(ECE_CONFIDENCES)] for n, item in enumerate(targets)}
    scores = platform.upload_and_read(caller, phase_id, csv_file({i.id: True for i in targets}, confidences))
    decoded = {}
    for category, group in itertools.groupby(targets, key=lambda item: item.category):
        part = ((scores.get("breakdowns") or {}).get("category") or {}).get(category) or {}
        decoded.update(_decode_ece(part.get("ece"), list(group)))
    alone = targets[:len(ECE_CONFIDENCES)]
    scores = platform.upload_and_read(caller, phase_id, csv_file({i.id: True for i in alone}, confidences))
    decoded.update({f"overall:{k}": v for k, v in _decode_ece((scores.get("overall") or {}).get("ece"), alone).items()})
    return decoded


def ece_with_fillers(platform: Platform, caller: Caller, phase_id: int, items: list[Item]) -> dict[str, bool]:
    """Answer five targets with chosen confidences and 95 fillers at confidence 1 (100 answered, past the
    calibration size rule); ece x 100 - (95 - correct) is the targets' own sum, which decodes them."""
    targets, fillers = items[:len(ECE_CONFIDENCES)], items[len(ECE_CONFIDENCES):100]
    confidences = {item.id: 1.0 for item in fillers} | {
        item.id: c for item, c in zip(targets, ECE_CONFIDENCES, strict=False)}
    overall = platform.upload_and_read(caller, phase_id, csv_file(
        {item.id: True for item in [*targets, *fillers]}, confidences)).get("overall") or {}
    value, accuracy = overall.get("ece"), overall.get("accuracy")
    if not isinstance(value, (int, float)) or not isinstance(accuracy, (int, float)):
        return {}
    correct = round(accuracy * len(items))
    observed = value * 100 - len(fillers) + correct  # = sum over targets of (2 - c if right else c)
    matches = [rights for rights in itertools.product((False, True), repeat=len(targets))
               if abs(sum((2 - c) if r else c for r, c in zip(rights, ECE_CONFIDENCES, strict=False))
                      - observed) < 0.006]
    return {item.id: right for item, right in zip(targets, matches[0], strict=True)} if len(matches) == 1 else {}


def membership(platform: Platform, caller: Caller, phase_id: int, targets: list[Item]) -> dict[str, bool]:
    """Answer one item alone; the public split's answered figures say whether it is public."""
    decoded = {}
    for item in targets:
        overall = platform.upload_and_read(caller, phase_id, csv_file({item.id: True})).get("overall") or {}
        if isinstance(overall.get("answered"), int):
            decoded[item.id] = overall["answered"] == 1
        elif isinstance(overall.get("answer_rate"), (int, float)):
            decoded[item.id] = overall["answer_rate"] > 0
        elif "selective_accuracy" in overall:
            decoded[item.id] = overall["selective_accuracy"] is not None
    return decoded


def private_after_close(platform: Platform, caller: Caller, phase_id: int, items: list[Item]) -> dict[str, bool]:
    """Before close, answer one item per category (yes); after close, read the per-category slices."""
    targets = _first_per_category(items, 1)
    submission_id = platform.submit(caller, phase_id, csv_file({item.id: True for item in targets}))
    platform.close(phase_id)
    scores = platform.scores(caller, submission_id)
    decoded = _decode_categories(scores, targets)
    decoded.update(_decode_categories((scores.get("splits") or {}).get("private") or {}, targets))
    return decoded


def recovered(decoded: dict[str, bool], truth: dict[str, bool]) -> int:
    """Return how many decoded items match the truth (keys may carry an 'overall:' prefix)."""
    return sum(1 for key, value in decoded.items() if truth.get(key.split(":")[-1]) == value)


def _overall_signal(scores: dict[str, Any]) -> float | None:
    """Return the overall figure that moves with one more right answer: correct if shown, else accuracy."""
    overall = scores.get("overall") or {}
    value = overall.get("correct", overall.get("accuracy"))
    return float(value) if isinstance(value, (int, float)) else None


def _decode_categories(scores: dict[str, Any], targets: list[Item]) -> dict[str, bool]:
    """Return the label of each target whose category row shows a correct count or an accuracy."""
    table = (scores.get("breakdowns") or {}).get("category") or {}
    decoded = {}
    for item in targets:
        part = table.get(item.category) or {}
        answered = part.get("answered")
        value = part.get("correct", part.get("accuracy"))
        if isinstance(value, (int, float)) and answered in (None, 1):
            decoded[item.id] = value > 0
    return decoded


def _decode_ece(value: Any, group: list[Item]) -> dict[str, bool]:
    """Return the five labels whose |right - confidence| sum is the only one matching ece x 5, else nothing."""
    if not isinstance(value, (int, float)) or len(group) != len(ECE_CONFIDENCES):
        return {}
    observed = value * len(group)
    matches = [rights for rights in itertools.product((False, True), repeat=len(group))
               if abs(sum((1 - c) if r else c for r, c in zip(rights, ECE_CONFIDENCES, strict=False))
                      - observed) < 0.003]
    if len(matches) != 1:
        return {}
    return {item.id: right for item, right in zip(group, matches[0], strict=True)}  # answered yes: right means true


def _first_per_category(items: list[Item], k: int) -> list[Item]:
    """Return the first k items of every category, category by category."""
    chosen: list[Item] = []
    for _, group in itertools.groupby(items, key=lambda item: item.category):
        chosen.extend(list(group)[:k])
    return chosen
