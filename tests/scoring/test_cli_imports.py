"""``python -m scoring evaluate`` never imports pandas, though pyarrow would on its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import os, runpy, sys\n"
    "def _stay(code):  # the CLI leaves with os._exit; stay alive to look at sys.modules\n"
    "    raise SystemExit(code)\n"
    "os._exit = _stay\n"
    "sys.argv = ['scoring', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('scoring', run_name='__main__', alter_sys=True)\n"
    "except SystemExit as done:\n"
    "    code = done.code\n"
    "import pyarrow as pa\n"
    "pa.array([1])  # would import pandas, were it allowed\n"
    "sys.stderr.write('EXIT %s PANDAS %s\\n' % (code, sorted(m for m in sys.modules if m.split('.')[0] == 'pandas')))\n"
)


@pytest.mark.parametrize("predictions", ["id,prediction,confidence\na,yes,0.9\nb,maybe,2\n",
                                         "id,prediction,confidence\na,yes,0.9\nb,n/a,\nc,0,0.25\n",
                                         '[{"id": "a", "prediction": true, "confidence": 1}]'])
def test_evaluate_never_imports_pandas(predictions: str, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"id": i, "label": i != "b", "category": ["x", i], "popularity": n}) + "\n"
                              for n, i in enumerate("abc")))
    pred = tmp_path / "pred.txt"
    pred.write_text(predictions)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):  # labels parsed, then read from the cache
        command = [sys.executable, "-c", PROBE, "evaluate", "--labels", str(labels), "--predictions", str(pred)]
        done = subprocess.run(command,
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False)
        assert done.stdout.startswith("{"), done.stderr
        assert "PANDAS []" in done.stderr, done.stderr
        assert "EXIT 0" in done.stderr or "EXIT 2" in done.stderr, done.stderr


def test_pandas_is_refused_only_by_the_entry_point() -> None:
    code = "import scoring.cli, sys; import pandas; print('pandas' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.stdout.strip() == "True", done.stderr


def test_library_scoring_of_a_csv_file_never_imports_pandas() -> None:
    code = (
        "import sys\n"
        "from scoring import evaluate, load_labels, read_predictions\n"
        "labels = load_labels(b'{\"id\": \"a\", \"label\": true, \"category\": \"x\"}\\n'\n"
        "                     b'{\"id\": \"b\", \"label\": false}\\n')\n"
        "evaluate(labels, read_predictions(b'id,prediction,confidence\\na, yes ,0.5\\nb,idk,\\n', labels))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'dateutil')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120, check=False)
    assert done.stdout.strip() == "[]", done.stderr
