"""What a bundle import refuses, and how one unusable part leaves the rest importable."""

from __future__ import annotations

import pytest
from bundle_support import lines_of, zip_of
from zip_support import deflated, stored, zeros_bomb, zeros_entry, zip_bytes

from scoring.bundles import BundleError, read_bundle
from scoring.types import ScoringError

PHASES = """
version: 2
title: Two phases
tasks:
  - {index: 0, name: one, reference_data: one/, scoring_program: program/}
  - {index: 1, name: two, reference_data: two/, scoring_program: program/}
phases:
  - {name: First, start: 2025-01-01, tasks: [0]}
  - {name: Second, start: 2025-02-01, tasks: [1]}
leaderboards:
  - title: Results
    key: main
    columns:
      - {title: Accuracy, key: accuracy, index: 0}
"""
PROGRAM = "from sklearn.metrics import accuracy_score\nscores = {'accuracy': accuracy_score(t, p)}\n"


def refused(data: bytes) -> BundleError:
    with pytest.raises(BundleError) as caught:
        read_bundle(data)
    assert isinstance(caught.value, ScoringError)
    return caught.value


def test_what_is_no_bundle_is_refused_with_a_sentence() -> None:
    assert str(refused(b"not a zip")) == ("This is not a competition bundle: the file is not a zip archive, "
                                          "or it is damaged.")
    assert str(refused(zip_of({"README.md": "hi"}))) == (
        "This is not a competition bundle: there is no competition.yaml at the top of the zip.")
    assert str(refused(zip_of({"competition.yaml": "title: [unclosed\n"}))).startswith(
        "competition.yaml is not valid YAML at line 2")
    assert str(refused(zip_of({"competition.yaml": "- a list\n"}))) == (
        "competition.yaml must be a mapping of settings (title, phases, ...).")
    assert str(refused(zip_of({"competition.yaml": "version: 3\ntitle: x\n"}))).startswith(
        "competition.yaml says version 3; Tailboard reads CodaLab bundles")


def test_an_archive_with_an_escaping_path_is_refused_whole() -> None:
    data = zip_bytes([stored("competition.yaml", PHASES.encode()), stored("../../etc/cron.d/x", b"x")])
    assert str(refused(data)) == ("This is not a competition bundle: '../../etc/cron.d/x' is refused: its path "
                                  "climbs out of the archive with '..'.")


def test_a_bundle_with_nothing_importable_says_why_phase_by_phase() -> None:
    error = refused(zip_of({"competition.yaml": PHASES, "program/score.py": PROGRAM}))
    assert str(error) == ("Nothing in this bundle can be imported: no phase has reference data Tailboard can read.")
    lines = [str(line) for line in error.report]
    assert "not carried: phase 'First': the reference data 'one/' is not in the bundle; the phase is not imported" \
        in lines
    assert "not carried: phase 'Second': the reference data 'two/' is not in the bundle; the phase is not imported" \
        in lines
    assert str(refused(zip_of({"competition.yaml": "version: 2\ntitle: Empty\n"}))) == (
        "Nothing in this bundle can be imported: it has no phase.")


@pytest.mark.parametrize(("content", "reason"), [
    ("0.5\n1.25\n", "item 1 is the number 0.5, not a class: Tailboard scores classes"),
    ("0 1 0\n1 0 0\n", "line 1 holds 3 numbers, not one label"),
    ("0,1,0\n1,0,0\n", "line 1 holds 3 numbers, not one label"),
    ("1\n\n0\n", "line 2 is blank: a file of one label per line cannot skip one"),
    ("", "is empty"),
    ("a,b,c\n1,2,3\n", "has the columns a, b, c; Tailboard needs an id column"),
])
def test_an_unusable_phase_is_reported_and_the_other_phase_imported(content: str, reason: str) -> None:
    plan = read_bundle(zip_of({"competition.yaml": PHASES, "program/score.py": PROGRAM,
                               "one/truth": content, "two/truth": lines_of(["1", "0", "1"])}))
    assert [(p.position, p.name, p.n_items) for p in plan.phases] == [(1, "Second", 3)]
    assert plan.phases[0].config["primary_metric"] == "accuracy"
    message = next(line.text for line in plan.report if line.text.startswith("phase 'First': "))
    assert reason in message and message.endswith("; the phase is not imported")
    assert message.startswith("phase 'First': one/truth ") or message.startswith("phase 'First': the reference")


def test_a_reference_too_large_to_read_leaves_the_other_phase() -> None:
    files = [deflated("competition.yaml", PHASES.encode()), deflated("program/score.py", PROGRAM.encode()),
             zeros_entry("one/truth", 1 << 30), deflated("two/truth", b"1\n0\n")]
    plan = read_bundle(zip_bytes(files))
    assert [p.name for p in plan.phases] == ["Second"]
    assert ("not carried: phase 'First': one/truth is too large: it holds 1 GiB, the limit is 100 MiB; "
            "the phase is not imported") in plan.report_lines()


def test_a_reference_zip_holding_a_bomb_leaves_the_other_phase() -> None:
    yaml = PHASES.replace("reference_data: one/", "reference_data: one.zip")
    plan = read_bundle(zip_of({"competition.yaml": yaml, "program/score.py": PROGRAM,
                               "one.zip": zeros_bomb("truth", 1 << 30), "two/truth": "1\n0\n"}))
    assert [p.name for p in plan.phases] == ["Second"]
    assert ("not carried: phase 'First': one.zip/truth is too large: it holds 1 GiB, the limit is 100 MiB; "
            "the phase is not imported") in plan.report_lines()


def test_a_bundle_zipped_with_its_folder_is_read_from_that_folder() -> None:
    files = {"Pebbles/competition.yaml": PHASES, "Pebbles/program/score.py": PROGRAM,
             "Pebbles/one/truth": "A\nB\nC\n", "Pebbles/two/truth": "true\nfalse\n",
             "__MACOSX/Pebbles/._competition.yaml": b"\x00"}
    plan = read_bundle(zip_of(files))
    assert [(p.n_items, p.config["task_type"]) for p in plan.phases] == [(3, "multiple_choice"), (2, "binary")]
    assert plan.phases[0].config["options"] == ["A", "B", "C"]


def test_a_reference_folder_of_several_files_uses_the_one_the_program_reads() -> None:
    program = "import os\ntruth = open(os.path.join(ref, 'gold.txt')).read().split()\n" + PROGRAM
    plan = read_bundle(zip_of({"competition.yaml": PHASES, "program/score.py": program,
                               "one/gold.txt": "yes\nno\n", "one/notes.txt": "x\n", "one/README.md": "#",
                               "two/a.txt": "1\n", "two/b.txt": "0\n"}))
    assert [(p.name, p.source) for p in plan.phases] == [("First", "one/gold.txt")]
    assert any("two/ holds 2 files (a.txt, b.txt)" in line for line in plan.report_lines())


def test_a_one_column_reference_with_a_header_skips_it() -> None:
    plan = read_bundle(zip_of({"competition.yaml": PHASES, "program/score.py": PROGRAM,
                               "one/truth.csv": "label\n1\n0\n1\n", "two/truth": "0\n"}))
    first = plan.phases[0]
    assert (first.n_items, first.config["task_type"]) == (3, "binary")
    assert any("(one label per line after the header 'label'; ids 1, 2, ... by line)" in line
               for line in plan.report_lines())


def test_a_task_kept_on_a_codabench_server_is_reported() -> None:
    yaml = PHASES.replace("{index: 1, name: two, reference_data: two/, scoring_program: program/}",
                          "{index: 1, key: 5f1e2d3c-0000-4000-8000-000000000000}")
    plan = read_bundle(zip_of({"competition.yaml": yaml, "program/score.py": PROGRAM, "one/truth": "1\n0\n"}))
    assert [p.name for p in plan.phases] == ["First"]
    assert ("not carried: phase 'Second': task 'task 1' is kept on a Codabench server "
            "(key 5f1e2d3c-0000-4000-8000-000000000000); its files are not in the bundle") in plan.report_lines()


def test_an_unreadable_date_is_reported_and_the_phase_kept_without_it() -> None:
    yaml = PHASES.replace("start: 2025-02-01", "start: next spring")
    plan = read_bundle(zip_of({"competition.yaml": yaml, "program/score.py": PROGRAM,
                               "one/truth": "1\n", "two/truth": "0\n"}))
    assert plan.phases[1].start is None
    assert any(line.startswith("not carried: phase 'Second': start: 'next spring' is not a date Tailboard reads")
               for line in plan.report_lines())


def test_a_column_sorted_the_wrong_way_or_computed_is_not_carried() -> None:
    yaml = PHASES.replace("- {title: Accuracy, key: accuracy, index: 0}",
                          "- {title: Accuracy, key: accuracy, index: 0, sorting: asc}\n"
                          "      - {title: Mean, key: mean, index: 1, computation: avg, computation_indexes: [0]}")
    plan = read_bundle(zip_of({"competition.yaml": yaml, "program/score.py": PROGRAM,
                               "one/truth": "1\n", "two/truth": "0\n"}))
    lines = plan.report_lines()
    assert ("not carried: phase 1 'First': column 'Accuracy' (accuracy): it is sorted ascending (lower is "
            "better), which accuracy is not") in lines
    assert "not carried: phase 1 'First': column 'Mean' (mean): it is computed from other columns (avg of " \
           "columns 0)" in lines
    assert ("not carried: phase 1 'First': no leaderboard column is a metric Tailboard computes; the phase ranks "
            "by accuracy") in lines


def test_yaml_aliases_that_expand_to_billions_of_values_are_never_expanded() -> None:
    levels = ['a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]")
    yaml = "\n".join(levels) + "\nimage: *i\n" + PHASES.replace("title: Two phases", "title: *i")
    plan = read_bundle(zip_of({"competition.yaml": yaml, "program/score.py": PROGRAM, "one/truth": "1\n",
                               "two/truth": "0\n"}))
    assert plan.title == "(a list of 10)"
    assert "not carried: image '(a list of 10)': the competition image is not imported" in plan.report_lines()
