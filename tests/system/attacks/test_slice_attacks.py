"""Slice differencing (QA's A, B, C of "Label secrecy, part 2") on a CoLoTa-shaped phase, SQLite and PostgreSQL.

Defaults: every slice but overall is shown without counts, on its sample's grid, with noise
(disclosure/precision.py), and risk-coverage points are at least N/20 items apart on the
grid. Each defended run asserts the attack does no better than a coin under the defaults
(its model of a figure within one step is wrong a third of the time, so it may claim at
random); each control
run turns the grid off (``SAMPLE_PRECISION``: slices exact, as before) and asserts the same
attack code recovers what QA measured. docs/PROBING.md quotes these figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import slice_attacks
from probing_world import Caller, Platform
from realistic_world import CONFIG, Item, label_file, make_items

from leaderboard.disclosure import policy, precision
from leaderboard.disclosure.precision import grid_for

Attacker = Callable[[], Caller]
UPLOADS = 2


@pytest.fixture
def real_items() -> list[Item]:
    """Return the 1,200 CoLoTa-shaped items."""
    return make_items()


def _phase(platform: Platform, items: list[Item], *, private: bool = False, **settings: object) -> int:
    """Create the realistic phase (defaults unless settings say otherwise)."""
    return platform.phase([], labels=label_file(items, private=private), config=CONFIG, **settings)


def _score(decoded: dict[str, slice_attacks.Status], items: list[Item], *,
           only_private: bool = False) -> tuple[int, int]:
    """Return (right, wrong) label claims, counting only private items when asked."""
    truth = {item.id: item for item in items}
    claims = [(truth[key], value) for key, value in decoded.items() if isinstance(value, bool)]
    claims = [(item, value) for item, value in claims if item.private or not only_private]
    right = sum(item.label == value for item, value in claims)
    return right, len(claims) - right


def _no_better_than_a_coin(right: int, wrong: int) -> None:
    """Assert claims are right no more often than a coin's within a generous bound: right - wrong <= 3 sqrt(n).

    The attacks assume a shown figure within one step of the exact one; the noise breaks
    that assumption about a third of the time, so they may claim, at random.
    """
    assert right - wrong <= 3 * math.sqrt(right + wrong), (right, wrong)


def _membership_claims(decoded: dict[str, slice_attacks.Status], items: list[Item]) -> tuple[int, int]:
    """Return (right, wrong) among the claims that an item is private."""
    truth = {item.id: item for item in items}
    claims = [truth[key].private for key, value in decoded.items() if value == slice_attacks.PRIVATE]
    return sum(claims), len(claims) - sum(claims)


def _membership(decoded: dict[str, slice_attacks.Status], items: list[Item]) -> tuple[int, int]:
    """Return (right, wrong) membership claims: PRIVATE, or a label (which says public)."""
    truth = {item.id: item for item in items}
    right = sum(truth[key].private == (value == slice_attacks.PRIVATE) for key, value in decoded.items())
    return right, len(decoded) - right


def test_flip_per_category_recovers_nothing_under_the_defaults(platform: Platform, attacker: Attacker,
                                                                real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    decoded = slice_attacks.flip_per_category(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    _no_better_than_a_coin(*_score(decoded, real_items))


def test_flip_per_category_recovers_two_labels_per_row_and_upload_with_exact_slices(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = _phase(platform, real_items)
    decoded = slice_attacks.flip_per_category(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    assert _score(decoded, real_items) == (2 * 20 * UPLOADS, 0)  # 20 rows, two items each per upload


def test_flip_per_category_tells_no_label_and_no_membership_while_the_private_split_is_hidden(
        platform: Platform, attacker: Attacker, real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items, private=True)
    decoded = slice_attacks.flip_per_category(platform, attacker(), phase_id, real_items, uploads=UPLOADS,
                                              statuses=(True, False, slice_attacks.PRIVATE))
    _no_better_than_a_coin(*_score(decoded, real_items))
    _no_better_than_a_coin(*_membership_claims(decoded, real_items))


def test_flip_per_category_tells_labels_and_membership_with_exact_slices_while_the_split_is_hidden(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = _phase(platform, real_items, private=True)
    decoded = slice_attacks.flip_per_category(platform, attacker(), phase_id, real_items, uploads=UPLOADS,
                                              statuses=(True, False, slice_attacks.PRIVATE))
    assert _membership(decoded, real_items) == (19, 0)  # the rows' sizes are hidden: 19 of 80 items tell
    assert _score(decoded, real_items)[1] == 0


def test_risk_coverage_blocks_recover_nothing_under_the_defaults(platform: Platform, attacker: Attacker,
                                                                 real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    decoded = slice_attacks.risk_coverage_blocks(platform, attacker(), phase_id, real_items, precision=grid_for)
    _no_better_than_a_coin(*_score(decoded, real_items))


def test_risk_coverage_blocks_recover_a_label_per_block_with_exact_points(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = _phase(platform, real_items)
    decoded = slice_attacks.risk_coverage_blocks(platform, attacker(), phase_id, real_items,
                                                 precision=lambda items: slice_attacks.EXACT)
    assert _score(decoded, real_items) == (len(real_items) // 25, 0)  # a point per block: 48


def test_pre_close_uploads_recover_no_private_label_after_close(platform: Platform, attacker: Attacker,
                                                                real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items, private=True)
    decoded = slice_attacks.private_after_close(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    _no_better_than_a_coin(*_score(decoded, real_items, only_private=True))


def test_pre_close_uploads_recover_private_labels_after_close_with_exact_slices(
        platform: Platform, attacker: Attacker, real_items: list[Item], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "SAMPLE_PRECISION", False)
    phase_id = _phase(platform, real_items, private=True)
    decoded = slice_attacks.private_after_close(platform, attacker(), phase_id, real_items, uploads=UPLOADS)
    right, wrong = _score(decoded, real_items, only_private=True)
    assert (right, wrong) == (sum(item.private for item in _targets(real_items)), 0) == (25, 0)


def test_boundary_hunting_on_a_fixed_grid_recovers_labels(platform: Platform, attacker: Attacker,
                                                          real_items: list[Item],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(precision, "noise", lambda *args: (0.5, 0))  # the grid without its noise: nearest point
    phase_id = _phase(platform, real_items)
    right, wrong = _score(slice_attacks.boundary_hunt(platform, attacker(), phase_id, real_items, uploads=12),
                          real_items)
    assert (right, wrong) == (49, 0)  # in 13 uploads


def test_boundary_hunting_on_the_dithered_grid_guesses_no_better_than_a_coin(
        platform: Platform, attacker: Attacker, real_items: list[Item]) -> None:
    phase_id = _phase(platform, real_items)
    right, wrong = _score(slice_attacks.boundary_hunt(platform, attacker(), phase_id, real_items, uploads=12),
                          real_items)
    assert right + wrong >= 20 and abs(right - wrong) <= 0.3 * (right + wrong)  # measured: 47 right, 41 wrong


def _targets(items: list[Item]) -> list[Item]:
    """Return the items the pre-close uploads change (two per row and upload)."""
    rows = {category: {} for item in items for category in item.categories}
    return [item for plan in slice_attacks._plans(items, rows, UPLOADS) for pair in plan.values() for item in pair]
