"""Which metric a scoring program writes under a leaderboard column, read from its source.

Tailboard runs no program: it scores with its own metrics. A column is carried over
when the scoring program's source shows that the value written under the column's key
is one Tailboard computes the same way over the reference data: ``accuracy``
(``accuracy_score``, or a hand-written share of equal items, ``correct / total``),
``f1`` (``f1_score`` with its default binary average) or ``macro_f1`` (``f1_score(...,
average="macro")``). The reading follows a value's name back through assignments and
function bodies a few steps, over the program's text (Python 2 programs included):
lines naming the key as a string (``"accuracy": acc``, ``"score: %f" % s``), then what
the names on those lines were assigned. Anything else, or a column whose value could
be more than one metric, is not carried over; the reason says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

OTHER_METRICS = ("roc_auc_score", "balanced_accuracy_score", "precision_score", "recall_score", "log_loss",
                 "mean_squared_error", "mean_absolute_error", "r2_score", "matthews_corrcoef", "cohen_kappa_score",
                 "average_precision_score", "jaccard_score", "hamming_loss", "fbeta_score", "top_k_accuracy_score")
"""Metric functions of scikit-learn that Tailboard does not compute (named in the report)."""
NAMED = {"accuracy": "accuracy", "acc": "accuracy", "accuracy_score": "accuracy", "f1": "f1", "f1_score": "f1",
         "macro_f1": "macro_f1", "f1_macro": "macro_f1", "macro-f1": "macro_f1", "macrof1": "macro_f1"}
"""Column keys that name a metric: used when the key never appears in the program's text."""

_ASSIGN = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\[[^\]]*\])?\s*(?:=|\+=)(?!=)\s*(.+)$")
_DEF = re.compile(r"^(\s*)def\s+([A-Za-z_]\w*)\s*\(")
_NAME = re.compile(r"[A-Za-z_][\w.]*")
_COMMENT = re.compile(r"(?m)^\s*#.*$")
_F1 = re.compile(r"\bf1_score\s*\(")
_AVERAGE = re.compile(r"average\s*=\s*(['\"])(\w+)\1")
_ERROR_RATE = re.compile(r"\b1(?:\.0*)?\s*-\s*(?:[\w.]+\.)?accuracy_score\s*\(")
_POSITIVE = re.compile(r"pos_label\s*=\s*([^,)]+)")
_ACCURACY = (
    re.compile(r"\baccuracy_score\s*\((?![^)]*normalize\s*=\s*False)"),
    re.compile(r"\bmean\s*\([^()]*(?:\([^()]*\))?[^()]*==[^()]*\)"),  # np.mean(a == b), mean([p == t ...])
    re.compile(r"==[^()\n]*\)\s*\.\s*mean\s*\(\s*\)"),  # (a == b).mean()
    re.compile(r"\bsum\s*\(.*==.*\)\s*/\s*(?:float\s*\(\s*)?(?:len\s*\(|\w)"),  # sum(p == t ...) / len(t)
    re.compile(r"\b(?:num_|n_|n|total_)?correct\w*\s*/\s*(?:float\s*\(\s*)?(?:len\s*\(|\w)"),  # correct / total
)
_DICT_KEY = re.compile(r"""(['"])[^'"\n]+\1\s*:""")
_DEPTH = 4


@dataclass(frozen=True)
class Finding:
    """The metric a column's value is (None when not one Tailboard computes), and the reason, for the report."""

    metric: str | None
    reason: str


class Program:
    """The text of a scoring program's source files, indexed by assigned names and function names."""

    def __init__(self, sources: Iterable[str]) -> None:
        self.lines = [line for text in sources for line in _logical_lines(text)]
        self.assigned: dict[str, list[str]] = {}
        self.functions: dict[str, list[str]] = {}
        self._index()

    @property
    def empty(self) -> bool:
        """Return whether there was no source to read."""
        return not self.lines

    def _index(self) -> None:
        """Note every assignment's expression by name, and every function's body by name."""
        open_defs: list[tuple[int, str]] = []
        for line in self.lines:
            indent = len(line) - len(line.lstrip())
            open_defs = [(depth, name) for depth, name in open_defs if indent > depth]
            for _, name in open_defs:
                self.functions.setdefault(name, []).append(line)
            match = _DEF.match(line)
            if match:
                open_defs.append((len(match.group(1)), match.group(2)))
                continue
            match = _ASSIGN.match(line)
            if match:
                self.assigned.setdefault(match.group(1), []).append(match.group(2))
                self.assigned.setdefault(match.group(1).rsplit(".", 1)[-1], []).append(match.group(2))

    def metrics_of(self, text: str, depth: int = _DEPTH) -> set[str]:
        """Return the metrics a piece of code computes, following its names back depth steps."""
        found = set(direct_metrics(text))
        if depth > 0:
            for name in set(_NAME.findall(text)):
                for expression in self.assigned.get(name, []) + self.functions.get(name, []):
                    found |= self.metrics_of(expression, depth - 1)
        return found

    def finding(self, key: str, *, others: Iterable[str] = ()) -> Finding:
        """Return which metric the program writes under a leaderboard column's key (others: the other keys)."""
        if self.empty:
            return Finding(None, "no source of the scoring program could be read, so what it computes is unknown")
        segments = [segment for line in self.lines for segment in _segments(line, key, others)]
        if segments:
            found = set().union(*(self.metrics_of(segment) for segment in segments))
            return _judge(found, f"the value the scoring program writes as {key!r}")
        named = NAMED.get(key.strip().lower())
        everything = self.metrics_of("\n".join(self.lines), depth=0)
        if named is not None and named in everything:
            return Finding(named, f"the column is named {key!r} and the scoring program computes {named}")
        return Finding(None, f"the scoring program never names {key!r}, so what it writes there is unknown")


def _key_pattern(key: str) -> re.Pattern[str]:
    """Return the pattern of a key written as a string: 'key', "key", or the start of "key: %f"."""
    return re.compile(rf"""(['"]){re.escape(key)}\1|['"]{re.escape(key)}\s*[:=]""")


def _segments(line: str, key: str, others: Iterable[str]) -> list[str]:
    """Return the code after each mention of key on a line, up to the next key (of a dict or a format string)."""
    stops = [_key_pattern(other) for other in others if other != key] + [_DICT_KEY]
    segments = []
    for match in _key_pattern(key).finditer(line):
        rest = line[match.end():]
        ends = [found.start() for stop in stops if (found := stop.search(rest))]
        segments.append(rest[: min(ends, default=len(rest))])
    return segments


def direct_metrics(text: str) -> list[str]:
    """Return the metrics a line of code computes itself (other: 'other:<function>')."""
    found = [f"other:{name}" for name in OTHER_METRICS if re.search(rf"\b{name}\s*\(", text)]
    if _ERROR_RATE.search(text):
        found.append("other:1 - accuracy (an error rate)")
    elif any(pattern.search(text) for pattern in _ACCURACY):
        found.append("accuracy")
    for match in _F1.finditer(text):
        arguments = _call_arguments(text, match.end())
        average = _AVERAGE.search(arguments)
        kind = "binary" if average is None else average.group(2)
        positive = _POSITIVE.search(arguments)
        if kind == "binary" and positive and positive.group(1).strip("'\" ").lower() not in ("1", "true", "yes"):
            found.append(f"other:f1_score (pos_label={positive.group(1).strip()})")  # F1 of a class Tailboard's is not
            continue
        found.append({"binary": "f1", "macro": "macro_f1"}.get(kind, f"other:f1_score (average={kind!r})"))
    return found


def _judge(found: set[str], what: str) -> Finding:
    """Return the finding for the metrics a column's value may be."""
    known = sorted(m for m in found if not m.startswith("other:"))
    others = sorted(m.removeprefix("other:") for m in found if m.startswith("other:"))
    if len(known) == 1 and not others:
        return Finding(known[0], f"{what} is computed as {known[0]}")
    if not known and not others:
        return Finding(None, f"{what} is no metric Tailboard computes")
    listed = ", ".join(known + others)
    if not known:
        return Finding(None, f"{what} is computed with {listed}, which Tailboard does not have")
    return Finding(None, f"{what} may be any of {listed}; Tailboard cannot tell which")


def _call_arguments(text: str, start: int) -> str:
    """Return the text of a call's arguments, from just after its '(' to the matching ')'."""
    depth = 1
    for position in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[position], 0)
        if depth == 0:
            return text[start:position]
    return text[start:]


def _logical_lines(text: str) -> list[str]:
    """Return a source's lines with comment lines dropped and bracketed continuations joined."""
    lines: list[str] = []
    pending = ""
    for raw in _COMMENT.sub("", text).splitlines():
        pending = f"{pending} {raw.strip()}" if pending else raw.rstrip()
        if pending.count("(") + pending.count("[") + pending.count("{") <= (
                pending.count(")") + pending.count("]") + pending.count("}")):
            if pending.strip():
                lines.append(pending)
            pending = ""
    if pending.strip():
        lines.append(pending)
    return lines
