"""Issue 17's attacks over real HTTP against a gunicorn instance of the real CoLoTa QA phase: an independent check.

Separate code from tests/attacks/oracle_attacks.py (same ideas, written again against
``requests``), on the README's instance (bench/oracle_instance.py: 1,838 items with the
originals, ranked by popularity.tail.accuracy and accuracy), accounts from /register:

1. equality oracle: per upload, swap a target with a known-label anchor in every group of
   items that owns its rows (a category of 25+ items, or the head bucket); an owned row
   shown byte-identical says the labels are equal;
2. membership: the same with a public anchor of each label on a phase with a hidden split;
3. tiny files: a yes, b no, the rest abstained; hypotheses ruled out by the overall figures;
4. fresh accounts under the ladder: attack 1, every upload from a new account;
5. zero floor: everything no but one target per group; f1 (or its interval's top) above
   what an exact 0 can show proves the target true;
6. default quota: one-item files to a phase created without quota options, until refused;
7. ranked difference: accuracy and popularity.tail.accuracy are both ranked, so both exact,
   and so is the head bucket's count (their difference): a head and a tail swap per upload.

The attacker's prior: the label of the first item of each tested group (a labelled dev
set) and, for 2, one public item of each label per group. The truth scores the claims.

    .venv/bin/python bench/oracle_attacks.py [--compare | --defence-off] [--uploads 15] [--rounds 4]
        [--pairs 46] [--accounts 9]

``--defence-off`` serves with visibility.FRESH_DRAWS and OVERALL_BOUNDED off (bench/oracle_app.py);
``--compare`` runs defended and defence-off instances and prints both columns.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle_instance import Account, Instance, Item, build, serve  # noqa: E402

MIN_ROW = 25  # min_slice_items: a category row is shown with this many answered items
ISSUE = {"equality": "207/214", "membership": "71/71", "tiny": "92/92", "accounts": "6/6", "zero": "-",
         "ranked": "-", "quota": "no limit"}
Group = tuple[tuple[str, ...], tuple[Item, ...]]  # (owned rows, items)


def packed(items: list[Item]) -> list[Group]:
    """Return groups of items sharing every shown row whose owned rows are disjoint; head groups first."""
    sizes: dict[str, int] = defaultdict(int)
    for item in items:
        for category in item.categories:
            sizes[category] += 1
    found: dict[tuple[tuple[str, ...], str], list[Item]] = defaultdict(list)
    for item in items:
        found[(tuple(sorted(item.categories)), item.popularity)].append(item)
    chosen, used = [], set[str]()
    for (categories, popularity), members in sorted(found.items(), key=lambda kv: (
            kv[0][1] != "head", len(kv[0][0]), -len(kv[1]))):
        owned = tuple(f"category:{c}" for c in categories if sizes[c] >= MIN_ROW) + (
            ("popularity:head",) if popularity == "head" else ())
        if owned and len(members) >= 2 and not used & set(owned):
            chosen.append((owned, tuple(members)))
            used |= set(owned)
    return chosen


def row(scores: dict[str, Any], where: str) -> Any:
    """Return the shown object of a row ('category:x' or 'popularity:head'), None when not shown."""
    kind, value = where.split(":", 1)
    table = ((scores.get("breakdowns") or {}).get("category") if kind == "category" else scores.get("popularity"))
    return (table or {}).get(value)


def unchanged(before: dict[str, Any], after: dict[str, Any], owned: tuple[str, ...]) -> bool | None:
    """Return whether every readable owned row is identical in both; None when none is readable."""
    pairs = [(row(before, w), row(after, w)) for w in owned if row(before, w) and row(after, w)]
    return all(a == b for a, b in pairs) if pairs else None


def equality(accounts: list[Account], phase_id: int, items: list[Item], uploads: int) -> dict[str, Any]:
    """Attacks 1 and 4: a reference, then one swap per group and upload; upload k from accounts[k % len]."""
    groups = packed(items)
    base = {i.id: True for i in items} | {g[1][0].id: False for g in groups}
    reference = accounts[0].read(phase_id, base)
    claims, readings = {}, []
    for u in range(uploads):
        tests = [(g, g[1][u + 1]) for g in groups if len(g[1]) > u + 1]
        answers = base | {t.id: False for _, t in tests} | {g[1][0].id: True for g, _ in tests}
        shown = accounts[(u + 1) % len(accounts)].read(phase_id, answers)
        for (owned, members), target in tests:
            same = unchanged(reference, shown, owned)
            if same is not None:
                claims[target.id] = members[0].label if same else not members[0].label
                readings.append((same, target.label == members[0].label))
    return {"claims": claims, "uploads": uploads + 1, "blind": blind([equal for _, equal in readings]),
            "readings": readings}


def membership(account: Account, phase_id: int, items: list[Item], rounds: int) -> dict[str, Any]:
    """Attack 2: per round swap each group's target with its public true anchor, then its public false one."""
    plans = []
    for owned, members in packed(items):
        public = [i for i in members if not i.private]
        true, false = next((i for i in public if i.label), None), next((i for i in public if not i.label), None)
        if true is not None and false is not None:
            plans.append((owned, (true, false), [i for i in members if i not in (true, false)]))
    base = {i.id: True for i in items} | {a.id: False for _, pair, _ in plans for a in pair}
    reference = account.read(phase_id, base)
    claims: dict[str, Any] = {}
    for r in range(rounds):
        tests = [(owned, pair, targets[r]) for owned, pair, targets in plans if len(targets) > r]
        seen: dict[str, list[bool | None]] = defaultdict(list)
        for which in (0, 1):
            answers = base | {t.id: False for _, _, t in tests} | {pair[which].id: True for _, pair, _ in tests}
            shown = account.read(phase_id, answers)
            for owned, _, target in tests:
                seen[target.id].append(unchanged(reference, shown, owned))
        for key, (with_true, with_false) in seen.items():
            if with_true is False and with_false is False:
                claims[key] = "private"
            elif {with_true, with_false} == {True, False}:
                claims[key] = bool(with_true)
    truth = {i.id: i.private for i in items}
    return {"claims": claims, "uploads": 1 + 2 * rounds, "blind": blind([truth[k] for k in claims])}


def tiny(account: Account, phase_id: int, items: list[Item], pairs: int) -> dict[str, Any]:
    """Attack 3: a yes, b no, the rest abstained; keep the (a, b) hypotheses every shown overall figure allows."""
    n, claims = len(items), {}
    for a, b in zip(items[0:2 * pairs:2], items[1:2 * pairs:2], strict=True):
        overall = account.read(phase_id, {a.id: True, b.id: False}).get("overall") or {}
        left = [h for h in itertools.product((True, False), repeat=2) if allows(overall, h, n)]
        for index, item in enumerate((a, b)):
            if left and len({h[index] for h in left}) == 1:
                claims[item.id] = left[0][index]
    return {"claims": claims, "uploads": pairs, "blind": blind([i.label for i in items[:2 * pairs]])}


def allows(overall: dict[str, Any], hypothesis: tuple[bool, ...], n: int) -> bool:
    """Return whether the shown overall figures allow a's and b's labels (within 4 decimals, or a step if coarse)."""
    tp, tn = int(hypothesis[0]), int(not hypothesis[1])
    some = (1 / (n + 2), 1.0)
    ranges = {"accuracy": ((tp + tn) / n,) * 2, "selective_accuracy": ((tp + tn) / 2,) * 2,
              "correct": (tp + tn,) * 2, "f1": some if tp else (0.0, 0.0),
              "macro_f1": some if tp or tn else (0.0, 0.0)}
    for key, (lo, hi) in ranges.items():
        value = overall.get(key)
        if not isinstance(value, (int, float)):
            continue
        coarse = isinstance(overall.get("grid"), float) and key not in (overall.get("exact") or ())
        width = overall["grid"] if coarse else (0.5 if key == "correct" else 0.00006)
        if not (lo < value + width and hi > value - width):
            return False
    return True


def zero_floor(account: Account, phase_id: int, items: list[Item], uploads: int) -> dict[str, Any]:
    """Attack 5: everything no but one target per group yes; an owned row's f1 beyond 0's reach proves it true."""
    groups, claims, labels = packed(items), {}, []
    for u in range(uploads):
        tests = [(owned, members[u]) for owned, members in groups if len(members) > u]
        labels += [t.label for _, t in tests]
        shown = account.read(phase_id, {i.id: False for i in items} | {t.id: True for _, t in tests})
        for owned, target in tests:
            if any(positive(row(shown, where)) for where in owned):
                claims[target.id] = True
    return {"claims": claims, "uploads": uploads, "blind": blind(labels)}


def positive(part: Any) -> bool:
    """Return whether a row's f1 or its interval's top is above anything an exact 0 shows (0, and 0 + a step)."""
    if not isinstance(part, dict):
        return False
    grid = float(part["grid"]) if isinstance(part.get("grid"), float) else 0.00006
    top = ((part.get("ci") or {}).get("f1") or [None, None])[1]
    widened = grid if grid > 0.0001 else 0.0
    return (part.get("f1") or 0) >= grid - 1e-9 or (isinstance(top, float) and top >= grid + widened - 1e-9)


def ranked_difference(account: Account, phase_id: int, items: list[Item], uploads: int) -> dict[str, Any]:
    """Attack 7: accuracy and popularity.tail.accuracy are both ranked, so exact; their difference is the head
    bucket's exact count (shown coarse). Per upload swap a head and a tail target with known-label anchors."""
    head = [i for i in items if i.popularity == "head"]
    tail = [i for i in items if i.popularity != "head"]
    anchors = (head[0], tail[0])
    base = {i.id: True for i in items} | {a.id: False for a in anchors}
    reference, claims, same = counts(account.read(phase_id, base), len(items)), {}, []
    for u in range(uploads):
        targets = (head[u + 1], tail[u + 1])
        same += [t.label == a.label for a, t in zip(anchors, targets, strict=True)]
        answers = base | {t.id: False for t in targets} | {a.id: True for a in anchors}
        shown = counts(account.read(phase_id, answers), len(items))
        for k, (anchor, target) in enumerate(zip(anchors, targets, strict=True)):
            if reference[k] is not None and shown[k] is not None:
                claims[target.id] = anchor.label if shown[k] == reference[k] else not anchor.label
    return {"claims": claims, "uploads": uploads + 1, "blind": blind(same)}


def counts(scores: dict[str, Any], n: int) -> tuple[int | None, int | None]:
    """Return the (head, tail) correct counts the exact figures give, None where a figure is coarse or absent."""
    overall, tail = scores.get("overall") or {}, (scores.get("popularity") or {}).get("tail") or {}
    exact = [_exact(overall, "accuracy"), _exact(tail, "accuracy")]
    if exact[0] is None or exact[1] is None or not isinstance(tail.get("n"), int):
        return None, None
    tail_correct = round(exact[1] * tail["n"])
    return round(exact[0] * n) - tail_correct, tail_correct


def _exact(part: dict[str, Any], key: str) -> float | None:
    """Return a figure when it is exact (no grid, or listed exact), else None."""
    value = part.get(key)
    if not isinstance(value, float) or (isinstance(part.get("grid"), float) and key not in (part.get("exact") or ())):
        return None
    return value


def quota(account: Account, phase_id: int, item: Item, attempts: int = 30) -> dict[str, Any]:
    """Attack 6: one-item files until refused; return how many were accepted and the refusal."""
    for accepted in range(attempts):
        status = account.upload(phase_id, {item.id: accepted % 2 == 0}).status_code
        if status != 202:
            return {"accepted": accepted, "status": status, "uploads": accepted + 1}
    return {"accepted": attempts, "status": None, "uploads": attempts}


def blind(flags: list[bool]) -> float:
    """Return how often the best constant guess is right (e.g. "same label as the anchor"), with no upload read."""
    return max(sum(flags), len(flags) - sum(flags)) / len(flags) if flags else 0.0


def scored(result: dict[str, Any], items: list[Item]) -> str:
    """Return 'right/claims, wrong, and what the best blind guess would get right of as many claims'."""
    truth = {i.id: i for i in items}
    claims = result["claims"]
    if any(v == "private" for v in claims.values()):
        right = sum((v == "private") == truth[k].private for k, v in claims.items())
    else:
        right = sum(truth[k].label == v for k, v in claims.items())
    return f"{right}/{len(claims)} ({len(claims) - right} wrong; blind {round(result['blind'] * len(claims))})"


def contingency(readings: list[tuple[bool, bool]]) -> str:
    """Return how often owned rows read unchanged when the two labels were equal, and when they differed."""
    def share(equal: bool) -> str:
        group = [same for same, eq in readings if eq == equal]
        return f"{sum(group)}/{len(group)}"
    return f"rows unchanged: {share(True)} swaps of equal labels, {share(False)} of different ones"


def run(args: argparse.Namespace, *, defence_off: bool) -> tuple[dict[str, str], Instance]:
    """Build and serve one instance, run every attack, stop the server; return a cell per attack."""
    with tempfile.TemporaryDirectory(prefix="tb-oracle-") as tmp:
        instance = build(Path(tmp), defence_off=defence_off)
        server = serve(instance)
        try:
            items, phases = instance.items, instance.phases
            main = Account(instance.url, 0)
            fresh = [Account(instance.url, n) for n in range(1, args.accounts + 1)]
            results = {"equality": equality([main], phases["exact"], items, args.uploads),
                       "membership": membership(main, phases["split"], items, args.rounds),
                       "tiny": tiny(main, phases["exact"], items, args.pairs),
                       "accounts": equality(fresh, phases["ladder"], items, len(fresh) - 1),
                       "zero": zero_floor(main, phases["exact"], items, args.uploads),
                       "ranked": ranked_difference(main, phases["exact"], items, args.uploads)}
            cells = {name: f"{scored(r, items)} in {r['uploads']} uploads" for name, r in results.items()}
            cells |= {f"{name} readings": contingency(results[name]["readings"]) for name in ("equality", "accounts")}
            limit = quota(main, phases["no_quota"], items[0])
            cells["quota"] = (f"refused ({limit['status']}) after {limit['accepted']}" if limit["status"]
                              else f"no limit in {limit['accepted']}")
        finally:
            server.terminate()
            server.wait(timeout=60)
    return cells, instance


def main() -> None:
    """Run the attacks on a defended instance, a defence-off one, or both; print the table and one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--defence-off", action="store_true")
    parser.add_argument("--compare", action="store_true", help="run defended and defence-off instances")
    parser.add_argument("--uploads", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=46)
    parser.add_argument("--accounts", type=int, default=9)
    args = parser.parse_args()
    modes = [False, True] if args.compare else [args.defence_off]
    columns, source = {}, ""
    for off in modes:
        columns["defence off" if off else "defended"], instance = run(args, defence_off=off)
        source = instance.source
    print(f"\n{source}; {len(instance.items)} items; labels (or memberships) right/claimed, wrong, and how many "
          "of as many claims the best guess made without reading any upload gets right (blind)")
    print(f"{'attack':<12}" + "".join(f"{name:<50}" for name in columns) + "issue 17 (before)")
    for attack in ISSUE:
        print(f"{attack:<12}" + "".join(f"{cells[attack]:<50}" for cells in columns.values()) + ISSUE[attack])
    for name, cells in columns.items():
        print(f"{name}: equality {cells['equality readings']}; accounts {cells['accounts readings']}")
    print(json.dumps({"args": vars(args), "source": source, "results": columns}))


if __name__ == "__main__":
    main()
