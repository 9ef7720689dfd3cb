"""The attacks of issue 17 against the API on a CoLoTa-shaped phase, SQLite and PostgreSQL.

Each defended run asserts the attack does no better than a coin under the defaults
(right - wrong <= 3 sqrt(n) over its n claims, or no claims at all); each twin turns one
switch of disclosure/visibility.py off and asserts the same attack code recovers (nearly)
everything, so the defended test can fail:

- ``FRESH_DRAWS``: a coarse figure's dither is drawn from a server key and the file's own
  answers, so any change of answers redraws every figure. Off: keyed on the slice's exact
  figures, and equal count tables show equal slices (the equality oracle).
- ``OVERALL_BOUNDED``: overall figures other than the ranked one are coarse, and all of
  them for a file answering fewer than ``min_slice_items`` items. Off: exact.

The attacker's prior (docs of each attack in oracle_world.py): one known label per tested
group; for membership, one public item of each label per group. Accounts of the ladder
attack come from /register (a browser's form, CSRF and all) with tokens made on /account.

Measured here (1,200 items, 20 tested groups, 3 swapped uploads), defaults vs switch off:
equality oracle 35 right/25 wrong vs 57/3; membership 20/15 vs 31/2; tiny files 0 claims
vs 40/40; fresh accounts under the ladder 35/25 vs 57/3. The zero floor is not covered:
28 of 34 true targets proved, 0 wrong, while an exact 0 always showed 0 and rows showed f1; the noise can
show any grid point and rows show no f1 unless ranked (policy.SENSITIVE_KEYS): no claim now.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import oracle_attacks
import pytest
from oracle_world import dev_set, packed, register
from probing_world import Caller, Platform
from realistic_world import CONFIG, Item, label_file, make_items

from leaderboard.disclosure import policy

Attacker = Callable[[], Caller]
UPLOADS = 3  # swapped uploads after the reference: 20 tests each on this phase
ROUNDS = 2  # membership rounds, two uploads each
PAIRS = 20  # tiny files


@pytest.fixture
def real_items() -> list[Item]:
    """Return the 1,200 CoLoTa-shaped items."""
    return make_items()


def _phase(platform: Platform, items: list[Item], *, private: bool = False, **settings: Any) -> int:
    """Create the realistic phase with a generous quota (defaults otherwise, unless settings say so)."""
    return platform.phase([], labels=label_file(items, private=private), config=CONFIG,
                          **{"max_per_day": 1000, **settings})


def _defence_off(monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    """Turn one of visibility's defences off for this test."""
    monkeypatch.setattr(policy, switch, False)


def _labels(decoded: Mapping[str, oracle_attacks.Status], items: list[Item]) -> tuple[int, int]:
    """Return (right, wrong) label claims."""
    truth = {item.id: item.label for item in items}
    claims = [(key, value) for key, value in decoded.items() if isinstance(value, bool)]
    right = sum(truth[key] == value for key, value in claims)
    return right, len(claims) - right


def _memberships(decoded: Mapping[str, oracle_attacks.Status], items: list[Item]) -> tuple[int, int]:
    """Return (right, wrong) membership claims: PRIVATE, or a label (which says public)."""
    private = {item.id: item.private for item in items}
    right = sum(private[key] == (value == oracle_attacks.PRIVATE) for key, value in decoded.items())
    return right, len(decoded) - right


def _no_better_than_a_coin(right: int, wrong: int) -> None:
    """Assert claims are right no more often than a coin's would be, within 3 standard deviations."""
    assert right - wrong <= 3 * math.sqrt(right + wrong), (right, wrong)


def _readings_independent_of_truth(decoded: Mapping[str, bool], items: list[Item]) -> None:
    """Assert owned rows read unchanged as often after swapping equal labels as different ones (|z| <= 3).

    A claim equal to the anchor's label is an unchanged reading; a coin-like claim rate can
    still hide a reading that follows the truth when labels are skewed within groups.
    """
    counts = {True: [0, 0], False: [0, 0]}  # equal labels -> [tests, unchanged readings]
    for group in packed(items, size=2):
        anchor = dev_set(group)[0]
        for target in group.items:
            if target.id in decoded:
                counts[target.label == anchor.label][0] += 1
                counts[target.label == anchor.label][1] += decoded[target.id] == anchor.label
    (n1, k1), (n2, k2) = counts[True], counts[False]
    pooled = (k1 + k2) / (n1 + n2)
    error = math.sqrt(pooled * (1 - pooled) * (1 / max(n1, 1) + 1 / max(n2, 1)))
    assert abs(k1 / max(n1, 1) - k2 / max(n2, 1)) <= 3 * error, counts


def _tests(items: list[Item]) -> int:
    """Return how many swap tests the equality oracle runs: one per packed group and upload."""
    return len(packed(items, size=1 + UPLOADS)) * UPLOADS


def test_equality_oracle_does_no_better_than_a_coin(platform: Platform, attacker: Attacker,
                                                     real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    caller = attacker()
    decoded = oracle_attacks.equality_oracle(platform, lambda: caller, phase_id, real_items, uploads=UPLOADS)
    _no_better_than_a_coin(*_labels(decoded, real_items))
    _readings_independent_of_truth(decoded, real_items)


def test_equality_oracle_reads_a_label_per_group_and_upload_when_draws_follow_the_counts(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    _defence_off(monkeypatch, "FRESH_DRAWS")
    phase_id = _phase(platform, real_items)
    caller = attacker()
    right, wrong = _labels(oracle_attacks.equality_oracle(platform, lambda: caller, phase_id, real_items,
                                                          uploads=UPLOADS), real_items)
    assert right + wrong == _tests(real_items) == 60  # 20 groups (the head bucket one of them) x 3 uploads
    assert wrong <= 3


def test_membership_oracle_does_no_better_than_a_coin_while_the_split_is_hidden(
        platform: Platform, attacker: Attacker, real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items, private=True)
    decoded = oracle_attacks.membership_oracle(platform, attacker(), phase_id, real_items, rounds=ROUNDS)
    _no_better_than_a_coin(*_memberships(decoded, real_items))
    _no_better_than_a_coin(*_labels(decoded, real_items))


def test_membership_oracle_tells_private_items_when_draws_follow_the_counts(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    _defence_off(monkeypatch, "FRESH_DRAWS")
    phase_id = _phase(platform, real_items, private=True)
    decoded = oracle_attacks.membership_oracle(platform, attacker(), phase_id, real_items, rounds=ROUNDS)
    right, wrong = _memberships(decoded, real_items)
    assert right + wrong >= 30 and right >= 3 * wrong, (right, wrong)  # unequal counts rarely show equal rows
    labels_right, labels_wrong = _labels(decoded, real_items)
    assert labels_right >= 3 * labels_wrong, (labels_right, labels_wrong)


def test_tiny_files_decode_nothing_from_overall_figures(platform: Platform, attacker: Attacker,
                                                        real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    pairs = list(zip(real_items[0:2 * PAIRS:2], real_items[1:2 * PAIRS:2], strict=True))
    decoded = oracle_attacks.tiny_files(platform, attacker(), phase_id, pairs, len(real_items))
    _no_better_than_a_coin(*_labels(decoded, real_items))


def test_tiny_files_decode_both_labels_from_exact_overall_figures(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    _defence_off(monkeypatch, "OVERALL_BOUNDED")
    phase_id = _phase(platform, real_items)
    pairs = list(zip(real_items[0:2 * PAIRS:2], real_items[1:2 * PAIRS:2], strict=True))
    decoded = oracle_attacks.tiny_files(platform, attacker(), phase_id, pairs, len(real_items))
    assert _labels(decoded, real_items) == (2 * PAIRS, 0)


def test_fresh_accounts_under_the_ladder_do_no_better_than_a_coin(platform: Platform,
                                                                  real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items, public_feedback="ladder")
    decoded = oracle_attacks.equality_oracle(platform, lambda: register(platform.client.application), phase_id,
                                             real_items, uploads=UPLOADS)
    _no_better_than_a_coin(*_labels(decoded, real_items))
    _readings_independent_of_truth(decoded, real_items)


def test_fresh_accounts_under_the_ladder_read_a_label_per_group_when_draws_follow_the_counts(
        platform: Platform, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    _defence_off(monkeypatch, "FRESH_DRAWS")
    phase_id = _phase(platform, real_items, public_feedback="ladder")
    decoded = oracle_attacks.equality_oracle(platform, lambda: register(platform.client.application), phase_id,
                                             real_items, uploads=UPLOADS)
    right, wrong = _labels(decoded, real_items)
    assert right + wrong == _tests(real_items) and wrong <= 3, (right, wrong)  # 4 accounts from /register


def test_one_account_under_the_ladder_reads_nothing_after_its_first_upload(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    _defence_off(monkeypatch, "FRESH_DRAWS")  # the ladder alone holds every upload after the first
    phase_id = _phase(platform, real_items, public_feedback="ladder")
    caller = attacker()
    decoded = oracle_attacks.equality_oracle(platform, lambda: caller, phase_id, real_items, uploads=UPLOADS)
    assert decoded == {}


def test_a_phase_created_without_quota_options_refuses_uploads_after_its_daily_limit(
        platform: Platform, attacker: Attacker, real_items: list[Item]) -> None:
    phase_id = platform.phase([], labels=label_file(real_items, private=False), config=CONFIG, max_per_day=None)
    accepted, status = oracle_attacks.uploads_until_refused(platform, attacker(), phase_id, real_items[0],
                                                            attempts=30)
    assert status == 429 and 1 <= accepted < 30, (accepted, status)
    shown = platform.client.get(f"/api/v1/phases/{phase_id}", headers=platform.organizer.headers).get_json()
    assert isinstance(shown.get("max_per_day"), int), shown


def test_a_phase_with_a_daily_limit_refuses_the_upload_after_it(platform: Platform, attacker: Attacker,
                                                                 real_items: list[Item]) -> None:
    phase_id = platform.phase([], labels=label_file(real_items, private=False), config=CONFIG, max_per_day=3)
    assert oracle_attacks.uploads_until_refused(platform, attacker(), phase_id, real_items[0],
                                                attempts=30) == (3, 429)


def test_zero_floor_proves_no_label(platform: Platform, attacker: Attacker, real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    decoded = oracle_attacks.zero_floor(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    _no_better_than_a_coin(*_labels(decoded, real_items))


def test_zero_floor_reads_every_true_target_from_exact_rows(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)  # rows exact, as before the grid
    phase_id = _phase(platform, real_items)
    decoded = oracle_attacks.zero_floor(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    targets = [group.items[u] for group in packed(real_items, size=UPLOADS) for u in range(UPLOADS)]
    assert _labels(decoded, real_items) == (sum(item.label for item in targets), 0)


def test_an_explicitly_unlimited_phase_lets_the_same_uploads_through(platform: Platform, attacker: Attacker,
                                                                     real_items: list[Item]) -> None:
    phase_id = platform.phase([], labels=label_file(real_items, private=False), config=CONFIG,
                              max_per_day="unlimited")
    assert oracle_attacks.uploads_until_refused(platform, attacker(), phase_id, real_items[0],
                                                attempts=30) == (30, None)
