"""What the oracle attacks of issue 17 plan with: swap tests packed per upload, the attacker's dev set, accounts.

A *group* is the items that sit in exactly the same shown slices: the same categories and
the same popularity bucket. Swapping the answers of two items of one group changes no
slice's count table when their labels are equal, and every slice of the group by two
correct answers when they differ. A group *owns* its category rows and, for head items,
the head bucket; the tail bucket is shared by nearly every item and owned by none. Tests
whose groups own disjoint slices fit in one upload, each read from its own rows only.

The attacker's prior knowledge is stated here and nowhere else: the labels of a few items
per tested group (a public dev set would give them), and for the membership attack which
of those are public (a public sample). Everything else comes from API answers.
"""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from probing_world import Caller
from realistic_world import Item

Slice = tuple[str, str]  # ("category", value) or ("popularity", bucket): a path into a result object
HEAD: Slice = ("popularity", "head")
_PASSWORD = "oracle attack password"
_accounts = itertools.count(1)


@dataclass(frozen=True)
class Group:
    """Items that share every shown slice, and the slices only this group's test may touch."""

    owned: tuple[Slice, ...]
    items: tuple[Item, ...]


def groups(items: list[Item]) -> list[Group]:
    """Return the items grouped by (categories, popularity), with the slices each group owns."""
    found: dict[tuple[tuple[str, ...], str], list[Item]] = defaultdict(list)
    for item in items:
        found[(tuple(sorted(item.categories)), item.popularity)].append(item)
    out = []
    for (categories, popularity), members in found.items():
        owned = tuple(("category", c) for c in categories) + ((HEAD,) if popularity == "head" else ())
        if owned:
            out.append(Group(owned=owned, items=tuple(members)))
    return out


def packed(items: list[Item], *, size: int) -> list[Group]:
    """Return groups of at least ``size`` items owning pairwise disjoint slices: one test each per upload.

    Head groups first (so the head bucket is tested), then groups of one category, largest first.
    """
    chosen, used = [], set[Slice]()
    for group in sorted(groups(items), key=lambda g: (HEAD not in g.owned, len(g.owned), -len(g.items))):
        if len(group.items) >= size and not used & set(group.owned):
            chosen.append(group)
            used |= set(group.owned)
    return chosen


def dev_set(group: Group, *, public_of_each_label: bool = False) -> tuple[Item, ...]:
    """Return the group's items whose labels the attacker knows: its first item, or a public item of each label.

    This is the attacker's prior (a labelled dev set or public sample), chosen here with the truth.
    """
    if not public_of_each_label:
        return group.items[:1]
    public = [item for item in group.items if not item.private]
    true = next((item for item in public if item.label), None)
    false = next((item for item in public if not item.label), None)
    return (true, false) if true is not None and false is not None else ()


def row(scores: dict[str, Any], where: Slice) -> dict[str, Any] | None:
    """Return the shown slice object at a path, None when it is not shown."""
    kind, value = where
    table = (scores.get("breakdowns") or {}).get("category") if kind == "category" else scores.get("popularity")
    part = (table or {}).get(value)
    return part if isinstance(part, dict) else None


def register(app: Any) -> Caller:
    """Register a fresh participant through /register as a browser would, and create its API token on /account."""
    n = next(_accounts)
    browser = app.test_client()
    browser.environ_base["REMOTE_ADDR"] = f"127.0.1.{n % 250 + 1}"  # a fresh account, a fresh address
    form = {"email": f"fresh{n}@example.net", "display_name": f"Fresh {n}", "password": _PASSWORD,
            "confirm": _PASSWORD, "csrf_token": _csrf(browser, "/register")}
    made = browser.post("/register", data=form)
    assert made.status_code == 303, made.get_data(as_text=True)[:2000]
    page = browser.post("/account/tokens", data={"name": "script", "csrf_token": _csrf(browser, "/account")})
    found = re.search(r'id="new-token"[^>]*value="([^"]+)"', page.get_data(as_text=True))
    assert found, "no token on the token page"
    return Caller(found.group(1))


def _csrf(browser: Any, path: str) -> str:
    """Return the CSRF token of the form on a page."""
    html = browser.get(path).get_data(as_text=True)
    found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html) or re.search(
        r'value="([^"]+)"[^>]*name="csrf_token"', html)
    assert found, f"no csrf_token on {path}"
    return found.group(1)
