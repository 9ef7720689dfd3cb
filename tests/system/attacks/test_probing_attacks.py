"""The attacks of issue 7 against the API, on SQLite and PostgreSQL: what each recovers (docs/PROBING.md).

Each defended run asserts the attack recovers nothing; each control run (the defence
turned off) asserts the same attack code recovers every label it aims at, so a 0 is
the defence and not a broken attack. docs/PROBING.md quotes these figures.
"""

from __future__ import annotations

from collections.abc import Callable

import attacks
import pytest
from probing_world import Caller, Item, Platform, csv_file

from leaderboard.disclosure import policy

TARGETS = 10
Attacker = Callable[[], Caller]


def labels(items: list[Item]) -> dict[str, bool]:
    """Return the truth the attacks are after: item id -> label."""
    return {item.id: item.label for item in items}


def test_one_item_attack_recovers_nothing_under_the_ladder(platform: Platform, attacker: Attacker,
                                                             items: list[Item]) -> None:
    phase_id = platform.phase(items, public_feedback="ladder")
    decoded = attacks.one_item(platform, attacker(), phase_id, items[:TARGETS])
    assert attacks.recovered(decoded, labels(items)) == 0


def test_one_item_attack_recovers_every_label_under_exact_feedback_without_the_overall_bound(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "OVERALL_BOUNDED", False)  # a one-item file then shows its exact overall
    phase_id = platform.phase(items)
    decoded = attacks.one_item(platform, attacker(), phase_id, items[:TARGETS])
    assert attacks.recovered(decoded, labels(items)) == len(decoded) == TARGETS


def test_flip_one_attack_recovers_nothing_under_the_ladder(platform: Platform, attacker: Attacker,
                                                           items: list[Item]) -> None:
    phase_id = platform.phase(items, public_feedback="ladder")
    decoded = attacks.flip_one(platform, attacker(), phase_id, items, items[:TARGETS])
    assert attacks.recovered(decoded, labels(items)) == 0


def test_flip_one_attack_recovers_every_label_under_exact_feedback(platform: Platform, attacker: Attacker,
                                                                   items: list[Item]) -> None:
    phase_id = platform.phase(items)
    decoded = attacks.flip_one(platform, attacker(), phase_id, items, items[:TARGETS])
    assert attacks.recovered(decoded, labels(items)) == len(decoded) == TARGETS


def test_per_category_attack_recovers_nothing_under_the_defaults(platform: Platform, attacker: Attacker,
                                                                  items: list[Item]) -> None:
    phase_id = platform.phase(items)
    assert attacks.recovered(attacks.per_category(platform, attacker(), phase_id, items), labels(items)) == 0


def test_per_category_attack_recovers_one_label_per_category_without_the_slice_rule(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)  # slices exact, as before the grid
    phase_id = platform.phase(items, min_slice_items=1)
    decoded = attacks.per_category(platform, attacker(), phase_id, items)
    assert attacks.recovered(decoded, labels(items)) == len(decoded) == 10


def test_ece_attack_recovers_nothing_under_the_defaults(platform: Platform, attacker: Attacker,
                                                         items: list[Item]) -> None:
    phase_id = platform.phase(items)
    assert attacks.recovered(attacks.ece(platform, attacker(), phase_id, items), labels(items)) == 0


def test_ece_attack_recovers_five_labels_per_category_without_the_size_rules(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "CURVE_MIN_ANSWERED", 0)  # the calibration rules off
    monkeypatch.setattr(policy, "CALIBRATION_DECIMALS", 4)
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = platform.phase(items, min_slice_items=1)
    decoded = attacks.ece(platform, attacker(), phase_id, items)
    assert attacks.recovered(decoded, labels(items)) == len(decoded) == 50 + 5  # categories, then overall


def test_ece_attack_past_the_size_rule_recovers_nothing_at_two_decimals(platform: Platform, attacker: Attacker,
                                                                       items: list[Item]) -> None:
    phase_id = platform.phase(items)
    assert attacks.recovered(attacks.ece_with_fillers(platform, attacker(), phase_id, items), labels(items)) == 0


def test_ece_attack_past_the_size_rule_recovers_five_labels_at_four_decimals(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "CALIBRATION_DECIMALS", 4)  # calibration figures as precise as the rest
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = platform.phase(items)
    decoded = attacks.ece_with_fillers(platform, attacker(), phase_id, items)
    assert attacks.recovered(decoded, labels(items)) == len(decoded) == 5


def test_split_membership_attack_recovers_nothing_under_the_defaults(platform: Platform, attacker: Attacker,
                                                                      items: list[Item]) -> None:
    phase_id = platform.phase(items, private=True)
    decoded = attacks.membership(platform, attacker(), phase_id, items[:TARGETS])
    assert attacks.recovered(decoded, {item.id: not item.private for item in items}) == 0


def test_split_membership_attack_recovers_every_item_when_answered_counts_are_shown(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "MEMBERSHIP_KEYS", frozenset())  # the membership rule off
    monkeypatch.setattr(policy, "OVERALL_BOUNDED", False)  # and a one-item file's overall shown
    phase_id = platform.phase(items, private=True)
    decoded = attacks.membership(platform, attacker(), phase_id, items[:TARGETS])
    assert attacks.recovered(decoded, {item.id: not item.private for item in items}) == len(decoded) == TARGETS


def test_pre_close_submission_recovers_no_private_label_after_close(platform: Platform, attacker: Attacker,
                                                                    items: list[Item]) -> None:
    phase_id = platform.phase(items, private=True)
    decoded = attacks.private_after_close(platform, attacker(), phase_id, items)
    private = {item.id: item.label for item in items if item.private}
    assert attacks.recovered(decoded, private) == 0


def test_pre_close_submission_recovers_private_labels_without_the_slice_rule(
        platform: Platform, attacker: Attacker, items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = platform.phase(items, private=True, min_slice_items=1)
    decoded = attacks.private_after_close(platform, attacker(), phase_id, items)
    private = {item.id: item.label for item in items if item.private}
    assert attacks.recovered(decoded, private) == 10  # the first item of each category is private


def test_min_answered_refuses_the_one_item_file_and_charges_nothing(platform: Platform, attacker: Attacker,
                                                                    items: list[Item]) -> None:
    phase_id = platform.phase(items, min_answered=60, max_per_day=1)
    caller = attacker()
    refused = platform.upload(caller, phase_id, csv_file({items[0].id: True}))
    assert refused.status_code == 400
    assert "at least 60 answered items" in str(refused.get_json())
    platform.submit(caller, phase_id, csv_file({item.id: True for item in items[:60]}))  # the quota unit is intact


def test_min_answered_counts_the_whole_file_so_a_refusal_tells_no_split(platform: Platform, attacker: Attacker,
                                                                        items: list[Item]) -> None:
    phase_id = platform.phase(items, private=True, min_answered=5)
    private = [item for item in items if item.private][:5]
    platform.submit(attacker(), phase_id, csv_file({item.id: True for item in private}))  # 0 public answered
    mixed = [item for item in items if not item.private][:3] + private[:1]
    refused = platform.upload(attacker(), phase_id, csv_file({item.id: True for item in mixed}))  # 3 public
    assert refused.status_code == 400 and "answers 4 items" in str(refused.get_json())
