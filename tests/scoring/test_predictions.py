"""Rules of reading a prediction file (docs/FORMATS.md, Prediction files): CSV, values, ids, missing ids, order."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from typing import Any

import numpy as np
import pytest
from pred_support import (
    ABSTAIN_WORDS,
    BINARY_HELP,
    HEADER_HINT,
    answers,
    make_labels,
    problems,
    read,
)

from scoring.types import ABSTAIN, MAX_LISTED_PROBLEMS

# --- CSV ---------------------------------------------------------------------------


def test_csv_answers_align_with_label_items_and_absent_ids_abstain() -> None:
    result = read("id,prediction\nq3,true\nq1,false\nq2,idk\n")
    assert result.answer.dtype == np.int8
    assert result.answer.tolist() == [0, ABSTAIN, 1, ABSTAIN]
    assert result.confidence is None
    assert result.n_predictions == 3
    assert result.warnings == ["1 item has no prediction; it counts as an abstention."]


def test_csv_header_is_trimmed_case_insensitive_and_in_any_order() -> None:
    result = read(" Prediction ,ID,  CONFIDENCE\nyes,q1,0.25\n")
    assert result.answer.tolist()[0] == 1
    assert result.confidence is not None and result.confidence[0] == 0.25


def test_csv_with_bom_and_crlf_line_ends() -> None:
    data = b"\xef\xbb\xbfid,prediction\r\nq1,true\r\nq2,false\r\n\r\nq3,yes\r\n"
    assert answers(data) == [1, 0, 1, ABSTAIN]


def test_csv_quoted_fields_may_hold_commas_quotes_and_newlines() -> None:
    labels = make_labels(['a,b', 'say "hi"', "two\nlines"])
    data = 'id,prediction\n"a,b","true"\n"say ""hi""",false\n"two\nlines", yes \n'
    assert answers(data, labels) == [1, 0, 1]


def test_csv_ids_are_trimmed() -> None:
    assert answers("id,prediction\n  q2\t,true\n") == [ABSTAIN, 1, ABSTAIN, ABSTAIN]


def test_csv_blank_lines_and_rows_of_empty_cells_are_skipped_but_counted_as_lines() -> None:
    data = "\nid,prediction\n\nq1,true\n,\n  \nq1,false\n"
    assert problems(data) == (
        [(7, "q1", "Duplicate id 'q1': it already appeared on line 4.")], 1
    )


def test_csv_header_is_line_one_and_rows_follow() -> None:
    found, _ = problems("id,prediction\nq1,maybe\n")
    assert found == [(2, "q1", f"Invalid prediction 'maybe': {BINARY_HELP}")]


def test_csv_row_with_a_quoted_newline_is_reported_on_the_line_it_starts() -> None:
    found, _ = problems('id,prediction\n"q1","not\nvalid"\nzz,true\n')
    assert [(line, id_) for line, id_, _ in found] == [(2, "q1"), (4, "zz")]


def test_csv_unknown_column_is_reported_on_line_one() -> None:
    assert problems("id,prediction,score\nq1,true,3\n") == (
        [(1, None, f"Unknown column 'score': {HEADER_HINT}.")],
        1,
    )


def test_csv_header_after_blank_lines_is_reported_on_its_own_line() -> None:
    assert problems("\n\nid,prediction,score\nq1,true,3\n") == (
        [(3, None, f"Unknown column 'score': {HEADER_HINT}.")],
        1,
    )


def test_csv_missing_columns_are_header_problems_on_line_one() -> None:
    found, count = problems("q1,true\nq2,false\n")  # no header: the first row is taken as one
    assert count == 4
    assert {(line, id_) for line, id_, _ in found} == {(1, None)}
    messages = [message for _, _, message in found]
    assert messages[0].startswith("Unknown column 'q1'")
    assert messages[1].startswith("Unknown column 'true'")
    assert messages[2:] == [
        f"Missing column 'id': {HEADER_HINT} (on the first line).",
        f"Missing column 'prediction': {HEADER_HINT} (on the first line).",
    ]


def test_csv_repeated_and_unnamed_columns_are_refused() -> None:
    found, count = problems("id,prediction,ID,\nq1,true,q1,\n")
    assert count == 2
    assert {line for line, _, _ in found} == {1}
    assert [message for _, _, message in found] == [
        "Column 'id' appears twice in the header.",
        f"Column 4 of the header has no name; {HEADER_HINT}.",
    ]


def test_csv_row_with_the_wrong_number_of_fields() -> None:
    assert problems("id,prediction\nq1,true,0.5\nq2\n") == (
        [
            (2, "q1", "This row has 3 fields but the header has 2."),
            (3, "q2", "This row has 1 fields but the header has 2."),
        ],
        2,
    )


def test_csv_header_only_is_empty() -> None:
    assert problems("id,prediction\n\n") == (
        [(None, None, "The file is empty: it has a header but no rows.")], 1
    )


def test_csv_row_without_id() -> None:
    assert problems("id,prediction\n ,true\n") == (
        [(2, None, "Missing id: every prediction needs an id.")], 1
    )


# --- values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "code"),
    [("true", 1), ("TRUE", 1), (" Yes ", 1), ("t", 1), ("Y", 1), ("1", 1),
     ("false", 0), ("False", 0), ("no", 0), ("F", 0), ("n", 0), ("0", 0)],
)
def test_binary_tokens(token: str, code: int) -> None:
    assert answers(f'id,prediction\nq1,"{token}"\n')[0] == code
    assert answers(json.dumps([{"id": "q1", "prediction": token}]))[0] == code


@pytest.mark.parametrize("word", [*ABSTAIN_WORDS, "IDK", " N/A ", "I Don't Know", "None"])
def test_abstention_words_in_any_task(word: str) -> None:
    assert answers(f'id,prediction\nq1,"{word}"\n')[0] == ABSTAIN
    labels = make_labels(options="ABCD")
    assert answers(f'id,prediction\nq1,"{word}"\n', labels)[0] == ABSTAIN


@pytest.mark.parametrize(("value", "code"), [(True, 1), (False, 0), (1, 1), (0, 0), (None, ABSTAIN)])
def test_json_booleans_numbers_and_null(value: Any, code: int) -> None:
    assert answers(json.dumps([{"id": "q1", "prediction": value}]))[0] == code


@pytest.mark.parametrize("value", [2, 1.0, -1, [1], {"a": 1}, "maybe", "yes please", "truee"])
def test_other_binary_values_are_invalid(value: Any) -> None:
    found, count = problems(json.dumps([{"id": "q1", "prediction": value}]))
    assert count == 1
    assert found[0][2].startswith("Invalid prediction") and found[0][2].endswith(BINARY_HELP)


def test_invalid_value_message_quotes_the_value_and_lists_the_accepted_ones() -> None:
    assert problems("id,prediction\nq1,  maybe \n") == (
        [(2, "q1", f"Invalid prediction 'maybe': {BINARY_HELP}")], 1
    )


def test_multiple_choice_options_are_case_insensitive() -> None:
    labels = make_labels(options="ABCD")
    assert answers("id,prediction\nq1,a\nq2, D \nq3,C\nq4,\n", labels) == [0, 3, 2, ABSTAIN]


@pytest.mark.parametrize("value", ["E", "true", "1", "AB"])
def test_multiple_choice_rejects_what_is_not_an_option(value: str) -> None:
    found, _ = problems(f"id,prediction\nq1,{value}\n", make_labels(options="ABCD"))
    expected = (f"Invalid prediction '{value}': expected one of A, B, C, D, or an abstention "
                "(empty, unknown, idk, abstain, none, n/a, i don't know).")
    assert found == [(2, "q1", expected)]


# --- ids ---------------------------------------------------------------------------


def test_unknown_id() -> None:
    assert problems("id,prediction\nq17,true\n") == (
        [(2, "q17", "Unknown id 'q17': it is not an item of this phase.")], 1
    )


def test_duplicate_id_is_reported_on_each_repeat_naming_the_first_line() -> None:
    found, count = problems("id,prediction\nq1,true\nq3,true\nq3,false\nq1,yes\nq3,no\n")
    assert count == 3
    assert found == [
        (4, "q3", "Duplicate id 'q3': it already appeared on line 3."),
        (5, "q1", "Duplicate id 'q1': it already appeared on line 2."),
        (6, "q3", "Duplicate id 'q3': it already appeared on line 3."),
    ]


def test_ids_are_compared_as_strings_and_json_numbers_by_their_text() -> None:
    labels = make_labels(["12", "007", "1.50", "x"])
    data = '[{"id": 12, "prediction": 1}, {"id": "007", "prediction": 0}, {"id": 1.50, "prediction": 1}]'
    assert answers(data, labels) == [1, 0, 1, ABSTAIN]
    found, _ = problems('[{"id": 7, "prediction": 1}, {"id": 12.0, "prediction": 1}]', labels)
    assert [id_ for _, id_, _ in found] == ["7", "12.0"]


def test_csv_id_is_never_converted_to_a_number() -> None:
    labels = make_labels(["007", "1e3"])
    assert answers("id,prediction\n007,yes\n1e3,no\n", labels) == [1, 0]


def test_long_or_strange_ids_are_shown_cut_and_printable() -> None:
    long_id = "x" * 500
    found, _ = problems(f"id,prediction\n{long_id},true\n")
    (_, id_, message) = found[0]
    assert id_ is not None and len(id_) <= 203
    assert message == f"Unknown id '{'x' * 60}...': it is not an item of this phase."
    found, _ = problems(json.dumps([{"id": "a\u0007b", "prediction": True}]))
    assert found[0][2] == "Unknown id 'a\\x07b': it is not an item of this phase."


# --- missing ids -------------------------------------------------------------------


def test_missing_ids_abstain_with_a_warning() -> None:
    result = read("id,prediction\nq2,yes\n")
    assert result.answer.tolist() == [ABSTAIN, 1, ABSTAIN, ABSTAIN]
    assert result.warnings == ["3 items have no prediction; they count as abstentions."]


def test_complete_file_has_no_warning() -> None:
    assert read("id,prediction\nq1,1\nq2,0\nq3,idk\nq4,t\n").warnings == []


def test_missing_ids_are_problems_when_the_phase_says_error() -> None:
    labels = make_labels(missing="error")
    assert problems("id,prediction\nq3,yes\n", labels) == (
        [(None, "q1", "No prediction for this id."),
         (None, "q2", "No prediction for this id."),
         (None, "q4", "No prediction for this id.")],
        3,
    )


def test_an_abstention_is_not_a_missing_id() -> None:
    labels = make_labels(missing="error")
    assert read("id,prediction\nq1,idk\nq2,\nq3,none\nq4,n/a\n", labels).answer.tolist() == [-1] * 4


# --- ordering and the cap ----------------------------------------------------------


def test_problems_without_line_come_first_then_by_line() -> None:
    labels = make_labels(missing="error")
    data = "\n".join([
        json.dumps({"id": "q1", "prediction": "maybe"}),
        "{broken",
        json.dumps({"id": "zz", "prediction": "yes", "extra": 1}),
        json.dumps({"id": "q1", "prediction": "yes"}),
    ])
    found, count = problems(data, labels)
    assert count == 8
    assert [(line, id_) for line, id_, _ in found] == [
        (None, "q2"), (None, "q3"), (None, "q4"),
        (1, "q1"),
        (2, None),
        (3, "zz"), (3, "zz"),  # the unknown field (found while reading), then the unknown id
        (4, "q1"),
    ]
    assert found[5][2].startswith("Unknown field 'extra'")
    assert found[6][2].startswith("Unknown id 'zz'")


def test_at_most_fifty_problems_are_listed_with_the_total_count() -> None:
    rows = "".join(f"x{i},true\n" for i in range(120))
    found, count = problems("id,prediction\n" + rows)
    assert count == 120
    assert len(found) == MAX_LISTED_PROBLEMS
    assert [line for line, _, _ in found] == list(range(2, 52))


def test_cap_counts_every_kind_and_lists_missing_ids_first() -> None:
    ids = [f"q{i}" for i in range(100)]
    labels = make_labels(ids, missing="error")
    rows = "".join(f"q{i},maybe\n" for i in range(40)) + "".join(f"z{i},yes\n" for i in range(30))
    found, count = problems("id,prediction\n" + rows, labels)
    assert count == 60 + 40 + 30
    assert len(found) == MAX_LISTED_PROBLEMS
    assert [id_ for _, id_, _ in found] == [f"q{i}" for i in range(40, 90)]
    assert {line for line, _, _ in found} == {None}


def test_many_broken_json_lines_are_capped_too() -> None:
    found, count = problems('{"id": "q1", "prediction": true}\n' + "nope\n" * 200)
    assert count == 200 and len(found) == MAX_LISTED_PROBLEMS
    assert found[0][0] == 2 and found[-1][0] == 51


# --- whole-file problems through the public entry ----------------------------------


def test_not_utf8_is_a_whole_file_problem() -> None:
    found, count = problems("id,prediction\nq1,vrai\nq2,faux é\n".encode("cp1252"))
    assert count == 1 and found[0][0] is None
    assert "not UTF-8" in found[0][2] and "line 3" in found[0][2]


def test_file_too_large() -> None:
    data = b"id,prediction\n" + b"q1,true\n" * 100
    found, _ = problems(data, max_bytes=100)
    assert found == [(None, None, "The file is too large: the limit is 100 bytes uncompressed.")]


def test_zip_and_gzip_are_read_like_the_file_they_hold() -> None:
    data = b"id,prediction\nq1,true\nq2,no\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("predictions.csv", data)
    assert answers(buffer.getvalue()) == answers(gzip.compress(data)) == answers(data)


def test_problems_never_depend_on_gold_labels() -> None:
    data = "id,prediction,confidence\nq1,true,0.5\nq2,maybe,1\nq9,no,2\nq1,yes,\n"
    first = problems(data, make_labels(gold=[0, 0, 0, 0], missing="error"))
    second = problems(data, make_labels(gold=[1, 1, 0, 1], missing="error"))
    assert first == second
    valid = "id,prediction\nq1,true\n"
    assert read(valid, make_labels(gold=[0, 0, 0, 0])) .warnings == read(
        valid, make_labels(gold=[1, 1, 1, 1])).warnings


