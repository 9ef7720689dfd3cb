"""``flask --app app phases create|set|open|close``, ``rescore`` and ``requeue`` (docs/CLI.md, docs/ORGANIZING.md).

``phases create`` takes the hidden label file (and the questions and config) or an
importer's OUTDIR; ``set`` changes probing defences and entry settings; ``rescore`` runs
the web's job runner in the foreground; ``requeue`` dispatches every unfinished submission.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from flask.cli import AppGroup, with_appcontext

from leaderboard.accounts import OPERATOR, phase_status
from leaderboard.cli.common import (
    DEFAULT,
    DailyLimit,
    IsoDateTime,
    domain_errors,
    entry_options,
    json_option,
    probing_options,
    report,
    service_context,
)
from leaderboard.disclosure import with_probing
from leaderboard.entries import with_entry_settings
from leaderboard.models import Phase
from leaderboard.operations import jobs, rescoring, run_job
from leaderboard.organizing import (
    DEFAULT_MAX_PER_DAY,
    LIMIT_MIN,
    UNLIMITED,
    ImportedFiles,
    phases,
    read_import_dir,
    update_settings,
)
from leaderboard.phase_data import phase_questions_report
from leaderboard.submissions import recovery

phases_cli = AppGroup("phases", help="Manage phases.")


@phases_cli.command("create")
@click.argument("slug")
@click.option("--name", required=True, help="Phase name, e.g. 'Camping'.")
@click.option("--labels", "labels_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Hidden label file (JSON Lines).")
@click.option("--questions", "questions_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Public questions file (default: the labels without answers).")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Phase config (JSON, docs/FORMATS.md#phase-config; default: inferred from the labels).")
@click.option("--from-import", "import_dir", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="An importer's OUTDIR: labels.jsonl, questions.jsonl and phase.json from there.")
@click.option("--start", "start_at", type=IsoDateTime(), help="Opening time (UTC unless a zone is given).")
@click.option("--end", "end_at", type=IsoDateTime(), help="Closing time.")
@click.option("--max-per-day", type=DailyLimit(),
              help=f"Submissions per participant (or team) per UTC day; default {DEFAULT_MAX_PER_DAY}; "
                   f"'{UNLIMITED}' for no daily limit.")
@click.option("--max-total", type=click.IntRange(min=LIMIT_MIN), help="Submissions per participant in total.")
@click.option("--description", default="")
@click.option("--visibility", type=click.Choice(["public", "hidden"]), default="public", show_default=True,
              help="Who sees the leaderboard.")
@probing_options
@entry_options
@domain_errors
def phases_create(slug: str, name: str, labels_path: Path | None, questions_path: Path | None,
                  config_path: Path | None, import_dir: Path | None, start_at: datetime | None,
                  end_at: datetime | None, max_per_day: int | str | None, max_total: int | None, description: str,
                  visibility: str, **settings: Any) -> None:
    """Create the next phase of competition SLUG; prints its id last."""
    files = _phase_files(labels_path, questions_path, config_path, import_dir)
    given = {key: value for key, value in settings.items() if value != DEFAULT}
    entry = {key: given.pop(key, None) for key in ("max_methods", "final_selections")}
    config = with_entry_settings(with_probing(files.config, given), entry)
    with service_context() as ctx:
        phase = phases.create_phase(
            ctx, competition_slug=slug, name=name, labels=files.labels, questions=files.questions,
            config=config, start_at=start_at, end_at=end_at, max_per_day=max_per_day, max_total=max_total,
            description=description, leaderboard_visibility=visibility, actor=OPERATOR,
        )
        click.echo(f"Created phase {phase.position} {phase.name!r} of {slug!r}: {phase.n_items} items, "
                   f"{'with' if phase.has_private_split else 'without'} a private split, "
                   f"status {phase_status(phase)}, "
                   + (f"{phase.max_per_day} submissions a day." if phase.max_per_day is not None
                      else "NO daily limit (unlimited, as asked)."))
        click.echo(phase_questions_report(ctx, phase).describe())
        click.echo(phase.id)


@phases_cli.command("set")
@click.argument("phase_id", type=int)
@probing_options
@entry_options
@json_option
@domain_errors
def phases_set(phase_id: int, as_json: bool, **settings: Any) -> None:
    """Change a phase's probing defences or entry settings (no rescoring needed).

    'default' restores a setting's default (ladder step from the public items; no minimum).
    """
    changes = {key: None if value == DEFAULT else value for key, value in settings.items() if value is not None}
    if not changes:
        raise click.UsageError("Give at least one of --min-slice-items, --public-feedback, --ladder-step, "
                               "--min-answered, --max-methods, --final-selections.")
    with service_context() as ctx:
        phase = update_settings(ctx, phase_id=phase_id, actor=OPERATOR, **changes)
        config = phase.task_config
        shown = {"min_slice_items": config.get("min_slice_items"), "public_feedback": config.get("public_feedback"),
                 "ladder_step": config.get("ladder_step", "default"),
                 "min_answered": config.get("min_answered", "none"), "max_methods": config.get("max_methods", 3),
                 "final_selections": config.get("final_selections", "none")}
        report(f"Phase {phase.id} {phase.name!r}: " + ", ".join(f"{k} {v}" for k, v in shown.items()) + ".",
               {"phase_id": phase.id, **shown}, as_json=as_json)


@phases_cli.command("open")
@click.argument("phase_id", type=int)
@click.option("--confirm-reopen", is_flag=True,
              help="Reopen a closed phase although its private split has been shown.")
@json_option
@domain_errors
def phases_open(phase_id: int, confirm_reopen: bool, as_json: bool) -> None:
    """Open a phase for submissions now."""
    _change_phase(functools.partial(phases.open_phase, confirm=confirm_reopen), phase_id, "open", as_json)


@phases_cli.command("close")
@click.argument("phase_id", type=int)
@json_option
@domain_errors
def phases_close(phase_id: int, as_json: bool) -> None:
    """Close a phase now (reveals its private leaderboard)."""
    _change_phase(phases.close_phase, phase_id, "closed", as_json)


def _change_phase(action: Callable[..., Phase], phase_id: int, state: str, as_json: bool) -> None:
    """Run a phase action as the operator and print the new state."""
    with service_context() as ctx:
        phase = action(ctx, phase_id=phase_id, actor=OPERATOR)
        report(f"Phase {phase.id} {phase.name!r} is {state}.", {"phase_id": phase.id, "status": state},
               as_json=as_json)


@click.command("rescore")
@with_appcontext
@click.argument("phase_id", type=int)
@json_option
@domain_errors
def rescore_command(phase_id: int, as_json: bool) -> None:
    """Score a phase's submissions again in the foreground (the web's job runner)."""
    with service_context() as ctx:
        job = phases.rescore_phase(ctx, phase_id=phase_id, actor=OPERATOR, run=False)
        total = rescoring.count_eligible(ctx, phase_id=phase_id)
        if not as_json:
            click.echo(f"Re-scoring {total} submission(s) of phase {phase_id} (job {job.id})...")
        run_job(ctx, job_id=job.id)
        view = jobs.get_job(ctx, job_id=job.id, actor=OPERATOR)
        if view.status != "done":
            raise click.ClickException(f"job {job.id} {view.status}: {view.error or 'stopped'}")
        report(f"Re-scored {view.done} submission(s) of phase {phase_id}.",
               {"phase_id": phase_id, "job_id": job.id, "rescored": view.done}, as_json=as_json)


@click.command("requeue")
@with_appcontext
@json_option
@domain_errors
def requeue_command(as_json: bool) -> None:
    """Dispatch every unfinished submission now (queued, stale scoring, old platform failures)."""
    with service_context() as ctx:
        ids = recovery.requeue_unfinished(ctx)
        report(f"Dispatched {len(ids)} unfinished submission(s){': ' if ids else '.'}"
               + ", ".join(str(i) for i in ids), {"dispatched": list(ids)}, as_json=as_json)


def _phase_files(labels: Path | None, questions: Path | None, config: Path | None,
                 import_dir: Path | None) -> ImportedFiles:
    """Return the phase files: explicit options win over those of an importer's OUTDIR."""
    if import_dir is None and labels is None:
        raise click.UsageError("Give --labels FILE or --from-import DIR.")
    imported = read_import_dir(import_dir) if import_dir is not None else ImportedFiles(b"", None, None)
    return ImportedFiles(
        labels=labels.read_bytes() if labels else imported.labels,
        questions=questions.read_bytes() if questions else imported.questions,
        config=_read_config(config) if config else imported.config,
    )


def _read_config(path: Path) -> dict[str, Any]:
    """Return the JSON object of a phase config file, or stop with a message."""
    try:
        config = json.loads(path.read_text(encoding="utf-8-sig"))
    except (ValueError, OSError) as error:
        raise click.ClickException(f"{path} is not a JSON phase config: {error}") from None
    if not isinstance(config, dict):
        raise click.ClickException(f"{path} must hold one JSON object.")
    return config
