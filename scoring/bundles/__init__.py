"""Competition bundles of CodaLab and Codabench read into a plan of what Tailboard would create (docs/MOVING.md).

``read_bundle(source) -> BundlePlan``: the competition's text and pages, each phase
that can be carried over (dates in UTC, limits, a label file in Tailboard's format, a
checked phase config) and the report of what became what and what was left behind.
Nothing is written: the platform shows the report as the import preview and creates
the competition from the plan once the organizer confirms.
"""

from __future__ import annotations

from scoring.bundles.build import read_bundle
from scoring.bundles.plan import BundleError, BundlePlan, Page, PhasePlan, ReportLine

__all__ = ["BundleError", "BundlePlan", "Page", "PhasePlan", "ReportLine", "read_bundle"]
