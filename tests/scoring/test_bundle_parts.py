"""Parts of the bundle reader: which metric a scoring program writes under a key, and dates in UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from scoring.bundles.dates import to_utc
from scoring.bundles.programs import Program

SKLEARN = "from sklearn.metrics import accuracy_score, f1_score\n"


@pytest.mark.parametrize(("source", "metric"), [
    ("acc = accuracy_score(y, p)\nscores = {'score': acc}\n", "accuracy"),
    ("scores['score'] = accuracy_score(y, p)\n", "accuracy"),
    ("m = f1_score(y, p, average='macro')\nscores = {\"score\": m}\n", "macro_f1"),
    ("m = f1_score(\n    y,\n    p,\n    average=\"macro\",\n)\nout.write('score: %f' % m)\n", "macro_f1"),
    ("m = f1_score(y, p)\nout.write('score: %f' % m)\n", "f1"),
    ("m = f1_score(y, p, pos_label='yes')\nout.write('score: %f' % m)\n", "f1"),
    ("s = np.mean(pred == truth)\nscores = {'score': s}\n", "accuracy"),
    ("s = (pred == truth).mean()\nscores = {'score': s}\n", "accuracy"),
    ("s = sum(a == b for a, b in zip(x, y)) / len(x)\nscores = {'score': s}\n", "accuracy"),
    ("n_correct = 0\nfor a, b in zip(x, y):\n    n_correct += a == b\nscores = {'score': n_correct / len(x)}\n",
     "accuracy"),
    ("def rate(a, b):\n    return accuracy_score(a, b)\n\nresult = rate(t, p)\nscores = {'score': result}\n",
     "accuracy"),
    ("print 'scoring'\nacc = accuracy_score(t, p)\noutput_file.write(\"score: %0.4f\\n\" % acc)\n", "accuracy"),
])
def test_the_metric_behind_a_key_is_found_through_names_and_functions(source: str, metric: str) -> None:
    finding = Program([SKLEARN + source]).finding("score")
    assert finding.metric == metric, finding.reason


@pytest.mark.parametrize(("source", "reason"), [
    ("s = f1_score(y, p, average='weighted')\nscores = {'score': s}\n", "computed with f1_score (average='weighted')"),
    ("s = f1_score(y, p, pos_label=0)\nscores = {'score': s}\n", "computed with f1_score (pos_label=0)"),
    ("s = accuracy_score(y, p, normalize=False)\nscores = {'score': s}\n", "is no metric Tailboard computes"),
    ("s = 1 - accuracy_score(y, p)\nscores = {'score': s}\n", "1 - accuracy (an error rate)"),
    ("a = accuracy_score(y, p)\nb = f1_score(y, p)\ns = max(a, b)\nscores = {'score': s}\n",
     "may be any of accuracy, f1"),
    ("scores = {'score': time.time() - start}\n", "is no metric Tailboard computes"),
    ("acc = accuracy_score(y, p)\nscores = {'other': acc}\n", "never names 'score'"),
])
def test_a_key_whose_value_is_no_single_tailboard_metric_says_why(source: str, reason: str) -> None:
    finding = Program([SKLEARN + source]).finding("score")
    assert finding.metric is None
    assert reason in finding.reason


def test_each_key_of_one_dict_is_read_on_its_own() -> None:
    program = Program([SKLEARN + "acc = accuracy_score(t, p)\nscores = {'accuracy': acc, 'duration': took}\n"])
    assert program.finding("accuracy", others=["duration"]).metric == "accuracy"
    assert program.finding("duration", others=["accuracy"]).metric is None


def test_a_key_the_program_never_writes_but_that_names_a_metric_it_computes_is_that_metric() -> None:
    program = Program([SKLEARN + "results = {}\nresults[name] = accuracy_score(t, p)\n"])
    assert program.finding("accuracy").metric == "accuracy"
    assert program.finding("f1").metric is None
    assert Program([]).finding("accuracy").reason.startswith("no source of the scoring program could be read")


@pytest.mark.parametrize(("value", "expected"), [
    (date(2025, 3, 1), datetime(2025, 3, 1, tzinfo=UTC)),
    (datetime(2025, 3, 1, 12, 30), datetime(2025, 3, 1, 12, 30, tzinfo=UTC)),
    (datetime(2025, 3, 1, 12, tzinfo=timezone(timedelta(hours=2))), datetime(2025, 3, 1, 10, tzinfo=UTC)),
    ("2025-03-01T12:00:00Z", datetime(2025, 3, 1, 12, tzinfo=UTC)),
    ("2025-03-01 12:00:00-05:00", datetime(2025, 3, 1, 17, tzinfo=UTC)),
    ("8-7-2019", datetime(2019, 8, 7, tzinfo=UTC)),
    ("12/31/2026 23:59", datetime(2026, 12, 31, 23, 59, tzinfo=UTC)),
    (None, None),
    ("null", None),
])
def test_dates_are_read_as_utc(value: object, expected: datetime | None) -> None:
    assert to_utc(value) == expected


@pytest.mark.parametrize("value", ["next spring", "31-12-2026", 20250301, "2025-13-01"])
def test_a_date_that_cannot_be_read_says_so(value: object) -> None:
    with pytest.raises(ValueError, match="is not a date"):
        to_utc(value)
