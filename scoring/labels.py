"""The hidden label set of a phase: items, gold answers and breakdown metadata.

Skeleton written first so the readers of prediction files can be built against it;
``load_labels`` and the metadata fields are filled in by the metrics work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from scoring.types import PhaseConfig


@dataclass(frozen=True)
class LabelSet:
    """Every item of a label file, in file order, with its gold class code."""

    config: PhaseConfig
    ids: pa.Array  # pa.string(), length n, unique
    gold: npt.NDArray[np.int8]  # class code per item (index into config.options)

    @property
    def n(self) -> int:
        """Return the number of items."""
        return len(self.ids)

    def positions(self, ids: pa.Array | Sequence[str]) -> npt.NDArray[np.int64]:
        """Return each id's item index, or -1 where the label set has no such id."""
        values = ids if isinstance(ids, pa.Array) else pa.array(list(ids), type=pa.string())
        found = pc.index_in(values.cast(pa.string()), value_set=self.ids)
        return found.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
