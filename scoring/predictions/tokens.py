"""Token tables of prediction values: answers, abstentions, confidence numbers (docs/FORMATS.md, Values).

Both the vectorized and the row-by-row readers use these tables, so they agree on
what is trimmed, how case is folded and which strings count as numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from scoring import arrays
from scoring.types import ABSTAIN, PhaseConfig

TRIM_CHARS = " \t\r\n\x0b\x0c"
"""Characters trimmed around ids (CSV), values and confidences; ASCII only on purpose."""

INVALID: int = -2
"""Code of a value that is neither an answer nor an abstention."""

ABSTENTIONS: tuple[str, ...] = ("", "unknown", "idk", "abstain", "none", "n/a", "i don't know")
BINARY_TOKENS: tuple[tuple[str, str], ...] = (
    ("true", "false"),
    ("yes", "no"),
    ("t", "f"),
    ("y", "n"),
    ("1", "0"),
)

NUMBER_PATTERN = r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
"""A decimal number as a participant writes it (no underscores, no nan/inf words)."""
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normalize(value: str) -> str:
    """Return the value trimmed and ASCII-lowercased, as the token tables hold it."""
    return value.strip(TRIM_CHARS).translate(_LOWER)


@dataclass(frozen=True)
class TokenTable:
    """Normalized tokens of one task and the class code each stands for."""

    keys: pa.Array  # pa.string(), normalized tokens
    codes: npt.NDArray[np.int8]  # class code per key, ABSTAIN for abstentions
    accepted: str  # the accepted answers, as listed in messages
    whole_numbers: bool = False  # read a number equal to a whole number as that number ("2.0e+00" is "2")

    def invalid_message(self, shown: str) -> str:
        """Return the sentence explaining why a prediction value is not accepted."""
        abstain = ", ".join(["empty", *ABSTENTIONS[1:]])
        return (
            f"Invalid prediction {shown}: expected one of {self.accepted}, "
            f"or an abstention ({abstain})."
        )


def token_table(config: PhaseConfig) -> TokenTable:
    """Return the token table of a phase's task type and options."""
    table: dict[str, int] = {}
    if config.task_type == "binary":
        true_code, false_code = config.options.index("true"), config.options.index("false")
        for yes, no in BINARY_TOKENS:
            table[yes], table[no] = true_code, false_code
        accepted = ", ".join(f"{yes}/{no}" for yes, no in BINARY_TOKENS)
    else:
        for code, option in enumerate(config.options):
            table.setdefault(normalize(option), code)
        accepted = ", ".join(config.options)
    for token in ABSTENTIONS:
        table.setdefault(token, ABSTAIN)  # a phase option wins over an abstention word
    keys = arrays.strings(list(table))
    codes = np.array(list(table.values()), dtype=np.int8)
    return TokenTable(keys=keys, codes=codes, accepted=accepted, whole_numbers=config.prediction_format == "lines")


def whole_number(value: str) -> str:
    """Return a number that equals a whole number as that number's digits ('2.000e+00' -> '2'), else value.

    Phases imported from CodaLab and Codabench take predictions as their scoring programs
    read them: ``numpy.savetxt`` writes the class 2 as ``2.000000000000000000e+00`` and
    ``numpy.genfromtxt`` reads it back as 2.
    """
    if not re.match(NUMBER_PATTERN, value):
        return value
    number = float(value)
    return str(int(number)) if number.is_integer() else value
