"""The chart view models (leaderboard/web/charts.py): what the canvases draw and the sentences that stand for them."""

from __future__ import annotations

import math

from leaderboard.web.charts import result_charts, value_range


def _result() -> dict:
    return {
        "overall": {"accuracy": 0.61, "aurc": 0.2134, "ece": 0.0712},
        "popularity_curve": [
            {"lo": 0, "hi": 4, "n": 30, "accuracy": 0.3, "answer_rate": 0.6, "ci": {"accuracy": [0.2, 0.4]},
             "grid": 0.1},
            {"lo": 5, "hi": 5, "accuracy": 0.55, "answer_rate": 0.8, "ci": {"accuracy": [0.4, 0.7]}},
            {"lo": 900, "hi": 12000, "n": 31, "accuracy": 0.9, "answer_rate": 1.0, "ci": {"accuracy": [0.8, 1.0]}},
            {"hi": 3, "accuracy": 0.5},  # no range: not a bin that can be placed
        ],
        "risk_coverage": [[0.1, 0.0], [0.5, 0.12], [1.0, 0.39]],
        "reliability": [{"lo": 0.5, "hi": 0.6, "n": 40, "accuracy": 0.45, "confidence": 0.55},
                        {"lo": 0.9, "hi": 1.0, "n": 60, "accuracy": 0.7, "confidence": 0.95, "grid": 0.1}],
    }


def test_bins_sit_at_their_ranges_geometric_mean_and_zero_gets_a_place_on_the_log_axis() -> None:
    charts = result_charts(_result(), "k")
    assert [b.x for b in charts.popularity] == [math.sqrt(0.5 * 4), 5.0, math.sqrt(900 * 12000)]
    assert [b.n for b in charts.popularity] == [30, None, 31]  # a withheld count stays withheld
    assert [b.digits for b in charts.popularity] == [2, 4, 4] and charts.reliability[1].digits == 2


def test_the_payload_holds_what_the_tables_print_and_nothing_else() -> None:
    payload = result_charts(_result(), "k").payload()
    assert set(payload) == {"popularity", "risk", "aurc", "reliability", "ece"}
    assert payload["popularity"][0] == {"x": math.sqrt(2.0), "lo": 0.0, "hi": 4.0, "accuracy": 0.3,
                                        "answer_rate": 0.6, "ci": [0.2, 0.4], "digits": 2}
    assert payload["risk"] == [[0.1, 0.0], [0.5, 0.12], [1.0, 0.39]] and payload["aurc"] == 0.2134


def test_each_chart_has_a_sentence_naming_its_figures() -> None:
    charts = result_charts(_result(), "k")
    assert charts.popularity_summary() == ("Accuracy by popularity, 3 bins on a log scale: 0.30 on the least popular "
                                           "items (0–4), 0.90 on the most popular (900–12,000).")
    assert "AURC 0.21" in charts.risk_summary() and "0.12 at half coverage and 0.39 at full" in charts.risk_summary()
    assert "ECE 0.07" in charts.reliability_summary() and "0.9–1.0" in charts.reliability_summary()


def test_a_result_without_curves_draws_nothing() -> None:
    charts = result_charts({"overall": {"accuracy": 0.5}}, "k")
    assert not charts.any and charts.popularity_summary() == charts.risk_summary() == ""
    assert not result_charts(None, "k").any


def test_value_ranges_read_like_counts() -> None:
    assert (value_range(3, 3), value_range(1, 1500), value_range(0.25, 7.5)) == ("3", "1–1,500", "0.25–7.5")
