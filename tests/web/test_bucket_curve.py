"""The bucket curve: a label file with head/tail words and no numeric popularity (docs/LONG_TAIL.md#bucket-curve)."""

from __future__ import annotations

import html as html_text
import io
import json
import random
import re

from leaderboard.accounts import OPERATOR
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission, visible_scores
from leaderboard.web.charts import result_charts

N = 300


def labels() -> bytes:
    """Return 300 binary items, a third of them tail, the rest head: bucket words only."""
    rnd = random.Random(7)
    rows = [{"id": f"b{k:03d}", "label": rnd.random() < 0.5, "popularity": "tail" if k % 3 == 0 else "head"}
            for k in range(N)]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def upload(ctx, phase, user):
    """Upload a file with confidences, right more often on head items."""
    rnd = random.Random(3)
    lines = ["id,prediction,confidence"]
    for line in labels().decode().splitlines():
        row = json.loads(line)
        right = rnd.random() < (0.85 if row["popularity"] == "head" else 0.55)
        lines.append(f"{row['id']},{str(row['label'] == right).lower()},{rnd.choice([0.55, 0.75, 0.95])}")
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                             stream=io.BytesIO(("\n".join(lines) + "\n").encode()))


def json_block(page: str, block_id: str):
    """Return the JSON of a page's <script type="application/json" id=...> block."""
    found = re.search(rf'<script type="application/json" id="{block_id}">(.*?)</script>', page, re.S)
    assert found, f"no JSON block {block_id}"
    return json.loads(html_text.unescape(found.group(1)))


def headtail_cell(page: str, bucket: str, column: int) -> str:
    """Return the figure of a bucket's row in the head versus tail table: column 0 accuracy, 1 answer rate."""
    row = re.search(rf'<tr class="bucket-{bucket}">(.*?)</tr>', page, re.S)
    assert row, f"no {bucket} row"
    cells = re.findall(r'<span class="val">(.*?)</span>\s*(?:<span class="ci"|</td>)', row.group(1), re.S)
    return re.sub(r"<[^>]+>", "", cells[column]).strip()


def assert_table_figures(page: str) -> None:
    """Assert the curve table prints each bucket's accuracy as the head versus tail table does (same ±step)."""
    for bucket in ("tail", "head"):
        curve_row = re.search(rf'<tr><th scope="row" class="mono">{bucket}</th>.*?</tr>', page, re.S)
        assert curve_row, f"no {bucket} row in the curve table"
        cells = re.findall(r'<td class="num">(.*?)</td>', curve_row.group(0), re.S)
        acc, rate = (re.sub(r"<[^>]+>", "", cell).split("[")[0].strip() for cell in cells[1:3])
        assert acc == headtail_cell(page, bucket, 0) and rate == headtail_cell(page, bucket, 1)


def test_open_phase_bucket_curve_shows_the_head_tail_figures_with_their_step(ctx, client, make_phase, make_user,
                                                                              login):
    phase, alice = make_phase(labels=labels()), make_user()
    submission = upload(ctx, phase, alice)
    login(client, alice)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    shown = visible_scores(ctx, submission=submission, viewer=alice)
    assert "popularity_curve" not in shown  # no numeric popularity: no curve in the result
    points = json_block(page, "charts-scores")["popularity"]
    assert [p["bucket"] for p in points] == ["tail", "head"] and [p["x"] for p in points] == [0.0, 2.0]
    pop = shown["popularity"]
    assert [p["accuracy"] for p in points] == [pop["tail"]["accuracy"], pop["head"]["accuracy"]]
    assert [p["step"] for p in points] == [pop["tail"].get("grid"), pop["head"].get("grid")]
    assert all(p["step"] for p in points) and all(p["digits"] == 2 for p in points)  # coarse while open
    assert_table_figures(page)
    assert "Accuracy by popularity bucket" in page and "Popularity (log scale)" not in page


def test_closed_phase_bucket_curve_is_exact_as_the_table_and_public_with_the_ranked_submission(
        ctx, client, make_phase, make_user):
    phase, alice = make_phase(labels=labels()), make_user()
    submission = upload(ctx, phase, alice)
    phases.close_phase(ctx, actor=OPERATOR, phase_id=phase.id)
    ctx.session.commit()
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)  # an anonymous visitor
    points = json_block(page, "charts-scores")["popularity"]
    pop = visible_scores(ctx, submission=submission, viewer=None)["popularity"]
    assert [(p["bucket"], p["accuracy"]) for p in points] == [("tail", pop["tail"]["accuracy"]),
                                                              ("head", pop["head"]["accuracy"])]
    assert [p["step"] for p in points] == [pop[b].get("grid") if "accuracy" not in pop[b].get("exact", ()) else None
                                           for b in ("tail", "head")]
    assert_table_figures(page)


def test_one_bucket_or_a_numeric_curve_draws_no_bucket_curve() -> None:
    one = {"popularity": {"head": {"accuracy": 0.8, "n": 40}}}
    assert result_charts(one, "k").popularity == ()
    numeric = {"popularity_curve": [{"lo": 1, "hi": 5, "n": 30, "accuracy": 0.5}],
               "popularity": {"head": {"accuracy": 0.8}, "tail": {"accuracy": 0.4}}}
    charts = result_charts(numeric, "k")
    assert [b.bucket for b in charts.popularity] == [None] and not charts.buckets
