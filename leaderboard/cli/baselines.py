"""``flask --app app baselines add PHASE_ID --name NAME --file FILE [--meta key=value]...`` (docs/ENTRIES.md).

The operator's baselines belong to the system account; they are validated and scored
like any upload and flagged on the board. ``--meta`` follows the entries' one rule
(entries/rules.py): parameters_b is a number, the three flags yes/no, the rest text.
"""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from leaderboard.accounts import OPERATOR
from leaderboard.cli.common import domain_errors, service_context
from leaderboard.entries import metadata_from_pairs
from leaderboard.organizing import add_baseline

baselines_cli = AppGroup("baselines", help="Add organizers' baselines (e.g. 'Human', 'GPT-4o').")


@baselines_cli.command("add")
@click.argument("phase_id", type=int)
@click.option("--name", required=True, help="Shown on the board, e.g. 'Human' or 'GPT-4o zero-shot'.")
@click.option("--file", "path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The baseline's prediction file, in any accepted format.")
@click.option("--meta", "pairs", multiple=True, metavar="KEY=VALUE",
              help="Metadata (repeatable): model, parameters_b, open_weights, uses_retrieval, "
                   "uses_knowledge_graph, prompting, url, notes.")
@domain_errors
def baselines_add(phase_id: int, name: str, path: Path, pairs: tuple[str, ...]) -> None:
    """Add a named baseline to phase PHASE_ID; prints its submission id last."""
    metadata = metadata_from_pairs(pairs)
    with service_context() as ctx, path.open("rb") as handle:
        baseline = add_baseline(ctx, phase_id=phase_id, name=name, filename=path.name, stream=handle,
                                actor=OPERATOR, metadata=metadata)
        click.echo(f"Baseline {baseline.name!r} added to phase {phase_id}"
                   f"{' with metadata ' + ', '.join(sorted(metadata)) if metadata else ''}; "
                   f"submission {baseline.submission_id} is {baseline.submission.status}.")
        click.echo(baseline.submission_id)
