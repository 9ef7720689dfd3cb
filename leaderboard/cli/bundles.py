"""``flask --app app competitions import-bundle FILE.zip`` (docs/CLI.md, docs/MOVING.md): a CodaLab or Codabench bundle.

``--preview`` prints the plan (the competition, each phase with its dates, limits,
ranking metric and items) and the import report, and creates nothing. Without it the
competition and its phases are created, owned by ``--owner EMAIL`` or ``--operator-only``
(as ``competitions create``); the report is printed, the competition's id last.
"""

from __future__ import annotations

from pathlib import Path

import click

from leaderboard.accounts import OPERATOR
from leaderboard.cli.common import domain_errors, service_context
from leaderboard.cli.competitions import _managed_by, _owner, competitions_cli, owner_options
from leaderboard.organizing import bundle_imports


@competitions_cli.command("import-bundle")
@click.argument("bundle", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--slug", help="Create it under this slug (default: one made from the bundle's title).")
@click.option("--preview", is_flag=True, help="Print the plan and the import report; create nothing.")
@owner_options
@domain_errors
def competitions_import_bundle(bundle: Path, slug: str | None, preview: bool, owner_email: str | None,
                               operator_only: bool) -> None:
    """Create a competition from a CodaLab or Codabench bundle (docs/MOVING.md); prints its id last."""
    data = bundle.read_bytes()
    with service_context() as ctx:
        owner = None if preview else _owner(ctx, owner_email, operator_only)
        shown = bundle_imports.preview_bundle(ctx, data=data, filename=bundle.name, actor=OPERATOR, slug=slug)
        if preview:
            _print_plan(shown)
            click.echo("Preview only: nothing was created.")
            return
        competition = bundle_imports.import_bundle(ctx, data=data, filename=bundle.name, actor=OPERATOR,
                                                   slug=shown.slug, owner=owner)
        _print_report(shown.report)
        click.echo(f"Imported competition {competition.slug!r} with {len(competition.phases)} phase(s), "
                   f"{_managed_by(owner)}.")
        click.echo(competition.id)


def _print_plan(shown: bundle_imports.BundlePreview) -> None:
    """Print what a bundle would create: the competition, each phase, then the import report."""
    plan = shown.plan
    click.echo(f"Competition {plan.title!r} (slug {shown.slug!r}) from a {plan.format} bundle:")
    for phase in plan.phases:
        click.echo(f"  phase {phase.position} {phase.name!r}: {bundle_imports.describe_phase(phase)}")
    for page in bundle_imports.carried_pages(plan):
        words = len(page["text"].split())
        what = f"appended to the description as text, {words} word(s)" if words else "empty: nothing appended"
        click.echo(f"  page {page['title']!r} ({page['source']}, {page['format']}): {what}")
    _print_report(shown.report)


def _print_report(lines: tuple[str, ...]) -> None:
    """Print the import report, one line each."""
    click.echo("Import report:")
    for line in lines:
        click.echo(f"  {line}")
