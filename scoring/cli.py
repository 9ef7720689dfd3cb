"""The scoring command line (docs/CLI.md, python -m scoring): ``evaluate``, ``validate`` and ``import``.

Exit codes: 0 success; 2 the prediction file is invalid (its problems are printed as
JSON on stdout, never a score); 3 the label file or phase config is invalid (message
on stderr). ``import`` is delegated to ``scoring.importers``, imported only when that
subcommand runs, so scoring never depends on the importers working.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.abc
import json
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import pyarrow as pa

from scoring.evaluate import evaluate
from scoring.labels import LabelSet, load_labels
from scoring.types import (
    DEFAULT_MAX_BYTES,
    LabelFileError,
    PredictionFileError,
    Predictions,
    Problem,
)

EXIT_OK, EXIT_INVALID_PREDICTIONS, EXIT_INVALID_LABELS = 0, 2, 3
EXIT_CRASH, EXIT_UNWRITABLE_OUTPUT = 1, 120  # 120 is what CPython itself exits with when stdout cannot be flushed


class RefusePandas(importlib.abc.MetaPathFinder):
    """An import hook that makes ``import pandas`` fail in the scoring command line.

    pyarrow imports pandas behind the scenes for some conversions when it is installed
    (0.2-0.3 s and 20-40 MB, more than scoring a million items); scoring never needs it,
    and pyarrow carries on without it when the import fails. (``sys.modules["pandas"] =
    None`` is not enough: pyarrow then fails with AttributeError.)
    """

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: Any = None) -> None:
        """Refuse pandas and its submodules; leave every other import to the next finder."""
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("the scoring command line does not use pandas", name=name)


def refuse_pandas() -> None:
    """Install ``RefusePandas`` for the rest of this process (the ``python -m scoring`` entry point)."""
    if not any(isinstance(finder, RefusePandas) for finder in sys.meta_path):
        sys.meta_path.insert(0, RefusePandas())


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, run the subcommand, and return its exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(with_import=bool(arguments) and arguments[0] == "import")
    args = parser.parse_args(arguments)
    _lean_memory_pool()
    code: int = args.handler(args)
    return code


def run_and_exit(argv: Sequence[str] | None = None) -> NoReturn:
    """Run main, flush stdout and stderr, then end the process at once with its exit code.

    ``os._exit`` skips the interpreter's teardown, where pyarrow's thread pools sometimes
    abort the process ("terminate called without an active exception", exit -6) after the
    answer was printed: about 1 run in 1,000. Everything worth keeping is already flushed.
    """
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse: usage errors (2) and --help (0)
        code = _system_exit_code(stop)
    except Exception:  # a bug: show it, exit 1 as Python would, but without the teardown
        traceback.print_exc()
        code = EXIT_CRASH
    os._exit(_flushed(code))


def _system_exit_code(stop: SystemExit) -> int:
    """Return the exit code Python would give this SystemExit (printing a message one carries)."""
    if stop.code is None:
        return EXIT_OK
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=sys.stderr)
    return EXIT_CRASH


def _flushed(code: int) -> int:
    """Flush stdout and stderr; return code, or 120 when stdout could not be written."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        code = EXIT_UNWRITABLE_OUTPUT
    with contextlib.suppress(OSError, ValueError):  # nowhere left to say so; the exit code already tells
        sys.stderr.flush()
    return code


def _lean_memory_pool() -> None:
    """Give Arrow a jemalloc pool that returns freed pages at once, for a low peak RSS.

    With the default mimalloc pool (or jemalloc's lazy decay) the JSON and CSV parsers'
    scratch memory stays resident, about 100 MB at a million items.
    """
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ and "jemalloc" in pa.supported_memory_backends():
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)


def build_parser(*, with_import: bool = False) -> argparse.ArgumentParser:
    """Return the argument parser; the import arguments are added only when asked for."""
    parser = argparse.ArgumentParser(prog="python -m scoring", description="Validate and score prediction files.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, handler, text in (
        ("evaluate", run_evaluate, "score a prediction file; prints the result object as JSON"),
        ("validate", run_validate, "check a prediction file without scoring it"),
    ):
        sub = commands.add_parser(name, help=text, description=text)
        sub.add_argument("--labels", required=True, metavar="LABELS.jsonl", help="hidden label file (JSON Lines)")
        sub.add_argument("--predictions", required=True, metavar="PRED",
                         help="prediction file (CSV, JSON, JSON Lines, zip, gz)")
        sub.add_argument("--config", metavar="PHASE.json", help="phase config; inferred from the labels when omitted")
        sub.add_argument("--no-cache", action="store_true",
                         help="parse the label file even when a cached copy exists (also TAILBOARD_LABEL_CACHE=0)")
        sub.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, help=argparse.SUPPRESS)
        sub.set_defaults(handler=handler)
    text = "turn a benchmark's released file into questions.jsonl, labels.jsonl and phase.json"
    importer = commands.add_parser("import", help=text, description=text)
    if with_import:
        from scoring.importers import configure_parser, import_cmd

        configure_parser(importer)
        importer.set_defaults(handler=import_cmd)
    return parser


def run_evaluate(args: argparse.Namespace) -> int:
    """Validate and score the prediction file; print the result object."""
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    labels, predictions = loaded
    _print_json(evaluate(labels, predictions))
    return EXIT_OK


def run_validate(args: argparse.Namespace) -> int:
    """Validate the prediction file; print whether it is acceptable."""
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    _, predictions = loaded
    _print_json({"ok": True, "n_predictions": predictions.n_predictions, "warnings": list(predictions.warnings)})
    return EXIT_OK


def _load(args: argparse.Namespace) -> tuple[LabelSet, Predictions] | int:
    """Return the label set and validated predictions, or the exit code after reporting."""
    try:
        labels = load_labels(args.labels, args.config, cache=not args.no_cache)
    except LabelFileError as error:
        print(f"invalid label file or phase config: {error}", file=sys.stderr)
        return EXIT_INVALID_LABELS
    from scoring.predictions import read_predictions

    try:
        predictions = read_predictions(args.predictions, labels, max_bytes=args.max_bytes)
    except PredictionFileError as error:
        _print_json(error.to_json())
        return EXIT_INVALID_PREDICTIONS
    except OSError as error:
        problem = Problem(line=None, id=None, message=f"The prediction file cannot be read: {error.strerror or error}.")
        _print_json(PredictionFileError([problem], 1).to_json())
        return EXIT_INVALID_PREDICTIONS
    return labels, predictions


def _print_json(value: Any) -> None:
    """Print one JSON object with full float precision; NaN is never valid output."""
    sys.stdout.write(json.dumps(value, allow_nan=False) + "\n")
    sys.stdout.flush()
