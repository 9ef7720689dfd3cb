"""Organizer pages: competitions, phases (from files or an importer), actions, baselines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Blueprint, abort, flash, redirect, render_template, url_for
from werkzeug.wrappers import Response

from leaderboard import submissions
from leaderboard.accounts import get_phase, managed_competition, managed_phase
from leaderboard.disclosure import probing
from leaderboard.entries import final_selections, max_methods, metadata_from_fields, with_entry_settings
from leaderboard.models import Competition, Job, Phase
from leaderboard.operations import archive_jobs
from leaderboard.organizing import add_baseline, competitions, phase_imports, phase_settings, phases
from leaderboard.phase_data import label_fields, phase_questions_report
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.web import context
from leaderboard.web.context import ctx
from leaderboard.web.forms import ActionForm
from leaderboard.web.organizer_forms import (
    BaselineForm,
    BreakdownsForm,
    CompetitionEditForm,
    CompetitionForm,
    ImportForm,
    LabelsForm,
    PhaseEditForm,
    PhaseForm,
    view_rows,
)
from leaderboard.web.templating import metric_name

bp = Blueprint("organizer", __name__)

PHASE_ACTIONS: dict[str, tuple[Callable[..., Any], str]] = {
    "open": (phases.open_phase, "The phase is open for submissions."),
    "close": (phases.close_phase, "The phase is closed; the private split is now on the ranking."),
    "rescore": (phases.rescore_phase, "Every submission of the phase is being re-scored."),
}


bp.before_request(context.organizers_only)
_me = context.current_organizer


def _managed(slug: str) -> Competition:
    """Return the competition if the current organizer manages it (the services answer 403 otherwise)."""
    return managed_competition(ctx(), slug=slug, actor=_me())


def _managed_phase(phase_id: int) -> Phase:
    """Return the phase if the current organizer manages its competition (the services answer 403 otherwise)."""
    return managed_phase(ctx(), phase_id=phase_id, actor=_me())


@bp.get("/")
def dashboard() -> str:
    """List the competitions this organizer manages."""
    mine = competitions.list_competitions(ctx(), managed_by=_me())
    return render_template("organizer/dashboard.html", competitions=mine)


@bp.route("/competitions/new", methods=["GET", "POST"])
def new_competition() -> Response | str | tuple[str, int]:
    """Create a competition."""
    form = CompetitionForm()
    if form.validate_on_submit():
        try:
            comp = competitions.create_competition(
                ctx(), slug=form.slug.data, title=form.title.data,
                description=form.description.data or "", actor=_me(),
            )
        except (Conflict, InvalidInput) as exc:
            form.slug.errors = [*form.slug.errors, exc.message]
        else:
            flash(f"Competition “{comp.title}” created. Add its first phase.", "success")
            return redirect(url_for("organizer.competition", slug=comp.slug), code=303)
    return _form_page("organizer/competition_new.html", form)


@bp.get("/c/<slug>")
def competition(slug: str) -> str:
    """Show one competition's phases with their actions."""
    comp = _managed(slug)
    return render_template("organizer/competition.html", competition=comp, action_form=ActionForm())


@bp.post("/c/<slug>/export")
def export(slug: str) -> Response:
    """Start the job that prepares the competition's archive (docs/ORGANIZING.md) and show its page."""
    if not ActionForm().validate_on_submit():
        abort(400, "The form expired; reload the page and try again.")
    job = archive_jobs.start_archive_export(ctx(), slug=slug, actor=_me())
    return redirect(url_for("operations.job", job_id=job.id), code=303)


@bp.route("/c/<slug>/edit", methods=["GET", "POST"])
def edit_competition(slug: str) -> Response | str | tuple[str, int]:
    """Change a competition's title, description and participation approval."""
    comp = _managed(slug)
    form = CompetitionEditForm(obj=comp)
    if form.validate_on_submit():
        try:
            competitions.update_competition(ctx(), slug=slug, title=form.title.data,
                                            description=form.description.data or "", actor=_me(),
                                            requires_approval=form.requires_approval.data)
        except InvalidInput as exc:
            form.form_errors.append(exc.message)
        else:
            flash("Competition saved.", "success")
            return redirect(url_for("organizer.competition", slug=slug), code=303)
    return _form_page("organizer/competition_edit.html", form, competition=comp)


@bp.route("/c/<slug>/phases/new", methods=["GET", "POST"])
def new_phase(slug: str) -> Response | str | tuple[str, int]:
    """Add a phase from a hidden label file, optional public questions and a task config."""
    comp = _managed(slug)
    form = PhaseForm()
    if form.validate_on_submit():
        try:
            phase = phases.create_phase(
                ctx(), competition_slug=slug, labels=form.labels.data.read(),
                questions=form.questions.data.read() if form.questions.data else None,
                config=_with_form_probing(form), actor=_me(), **form.settings(),
            )
        except InvalidInput as exc:
            form.form_errors.append(exc.message)
        else:
            fields = phase_questions_report(ctx(), phase).describe()
            flash(f"Phase “{phase.name}” created with {phase.n_items} items. {fields}", "success")
            return redirect(url_for("organizer.competition", slug=slug), code=303)
    return _form_page("organizer/phase_new.html", form, competition=comp)


@bp.route("/c/<slug>/phases/import", methods=["GET", "POST"])
def import_phase(slug: str) -> Response | str | tuple[str, int]:
    """Add a phase from a benchmark's released file through its importer, showing the report."""
    comp = _managed(slug)
    form = ImportForm()
    if form.validate_on_submit():
        try:
            outcome = phase_imports.import_phase(
                ctx(), competition_slug=slug, fmt=form.format.data, preview=bool(form.preview.data), actor=_me(),
                **form.sources(), **form.settings(),
            )
        except InvalidInput as exc:
            form.form_errors.append(exc.message)
        else:
            form.kept.data, form.preview.data = outcome.kept or form.kept.data, False
            return render_template("organizer/import_report.html", competition=comp, outcome=outcome, form=form,
                                   kept_name=outcome.source_name)
    return _form_page("organizer/phase_import.html", form, competition=comp)


@bp.route("/phases/<id:phase_id>/edit", methods=["GET", "POST"])
def edit_phase(phase_id: int) -> Response | str | tuple[str, int]:
    """Change a phase's name, rules, dates, limits and visibility."""
    phase = _managed_phase(phase_id)
    form = PhaseEditForm(obj=phase, **_probing_data(phase))
    form.offer_paths(phase_settings.view_paths(ctx(), phase=phase), metric_name)
    if form.validate_on_submit():
        try:  # check everything first: a refused save changes (and logs) nothing
            settings = {"views": form.views(), **form.probing(), **form.entry_settings()}
            phases.check_phase_update(phase, **form.settings())
            phase_settings.check_settings(ctx(), phase_id=phase_id, actor=_me(), **settings)
            phases.update_phase(ctx(), phase_id=phase_id, actor=_me(), **form.settings())
            phase_settings.update_settings(ctx(), phase_id=phase_id, actor=_me(), **settings)
        except InvalidInput as exc:
            form.form_errors.append(exc.message)
        else:
            flash("Phase settings saved.", "success")
            return redirect(url_for("organizer.competition", slug=phase.competition.slug), code=303)
    return _form_page("organizer/phase_edit.html", form, phase=phase, labels_form=LabelsForm(),
                      breakdowns_form=_breakdowns_form(phase))


@bp.post("/phases/<id:phase_id>/labels")
def replace_labels(phase_id: int) -> Response | str | tuple[str, int]:
    """Store a corrected label file as the phase's next label version and re-score everything."""
    phase = _managed_phase(phase_id)
    form = LabelsForm()
    if form.validate_on_submit():
        try:
            job = phases.replace_labels(ctx(), phase_id=phase_id, labels=form.labels.data.read(), actor=_me())
        except InvalidInput as exc:
            form.labels.errors = [*form.labels.errors, exc.message]
        else:
            flash(f"Labels v{phase.label_version} stored; every submission is being re-scored.", "success")
            return redirect(url_for("operations.job", job_id=job.id), code=303)
    return _edit_page_again(phase, labels_form=form)


@bp.post("/phases/<id:phase_id>/breakdowns")
def breakdowns(phase_id: int) -> Response | str | tuple[str, int]:
    """Change the label fields shown as per-value tables and re-score every submission (a job)."""
    phase = _managed_phase(phase_id)
    form = _breakdowns_form(phase)
    if form.validate_on_submit():
        try:
            job = phase_settings.update_breakdowns(ctx(), phase_id=phase_id, actor=_me(),
                                                   breakdowns=list(form.breakdowns.data or []))
        except InvalidInput as exc:
            form.breakdowns.errors = [*form.breakdowns.errors, exc.message]
        else:
            if job is None:
                flash("The breakdowns are unchanged.", "success")
                return redirect(url_for("organizer.edit_phase", phase_id=phase_id), code=303)
            flash("Breakdowns saved; every submission is being re-scored.", "success")
            return redirect(url_for("operations.job", job_id=job.id), code=303)
    return _edit_page_again(phase, breakdowns_form=form)


def _breakdowns_form(phase: Phase) -> BreakdownsForm:
    """Return the breakdowns form offering the label file's fields, with the phase's current ones picked."""
    form = BreakdownsForm(data={"breakdowns": phase_settings.breakdowns_of(phase)})
    fields = label_fields(ctx(), phase)
    picked = [name for name in (form.breakdowns.data or []) if name not in fields]
    form.breakdowns.choices = [(name, name) for name in [*fields, *picked]]
    return form


def _edit_page_again(phase: Phase, **forms: Any) -> tuple[str, int]:
    """Render the phase edit page with a refused form of its lower sections (status 400)."""
    settings = PhaseEditForm(formdata=None, obj=phase, **_probing_data(phase))
    settings.offer_paths(phase_settings.view_paths(ctx(), phase=phase), metric_name)
    forms = {"labels_form": LabelsForm(), "breakdowns_form": _breakdowns_form(phase), **forms}
    return render_template("organizer/phase_edit.html", form=settings, phase=phase, **forms), 400


@bp.post("/phases/<id:phase_id>/<any(open, close, rescore):action>")
def phase_action(phase_id: int, action: str) -> Response:
    """Open, close or re-score a phase (re-scoring is a job: its progress page follows)."""
    run, message = PHASE_ACTIONS[action]
    try:
        result = run(ctx(), phase_id=phase_id, actor=_me())
    except Conflict:  # reopening a phase whose private split was shown: the confirmation step
        return redirect(url_for("operations.reopen", phase_id=phase_id), code=303)
    if isinstance(result, Job):
        return redirect(url_for("operations.job", job_id=result.id), code=303)
    flash(message, "success")
    slug = get_phase(ctx(), phase_id).competition.slug
    return redirect(url_for("organizer.competition", slug=slug), code=303)


@bp.route("/phases/<id:phase_id>/baselines", methods=["GET", "POST"])
def baseline(phase_id: int) -> Response | str | tuple[str, int]:
    """Upload a named baseline's prediction file; it is scored and flagged on the ranking."""
    phase = _managed_phase(phase_id)
    form = BaselineForm()
    if form.validate_on_submit():
        try:
            row = add_baseline(
                ctx(), phase_id=phase_id, name=form.name.data.strip(), filename=form.file.data.filename or "baseline",
                stream=form.file.data.stream, actor=_me(), metadata=metadata_from_fields(form.metadata_fields()),
            )
        except InvalidInput as exc:
            form.add_problems(exc)
        except Conflict as exc:
            form.name.errors = [*form.name.errors, exc.message]
        else:
            flash(f"Baseline “{row.name}” added.", "success")
            return redirect(url_for("public.leaderboard", phase_id=phase_id), code=303)
    return _form_page("organizer/baseline.html", form, phase=phase)


@bp.get("/phases/<id:phase_id>/submissions")
def phase_submissions(phase_id: int) -> str:
    """List every submission of a phase with its status and public score."""
    rows = submissions.list_phase_submissions(ctx(), phase_id=phase_id, actor=_me())
    phase = get_phase(ctx(), phase_id)
    queue = submissions.queue_stats(ctx(), phase_ids=[phase_id])[0]  # the list above checked the manager
    return render_template("organizer/submissions.html", phase=phase, submissions=rows, queue=queue)


def _probing_data(phase: Phase) -> dict[str, Any]:
    """Return the phase's probing, views, entry settings and "no daily limit" as the edit form's initial values."""
    current = probing.probing_settings(phase)
    views = (phase.task_config or {}).get("views")
    return {"min_slice_items": current.min_slice_items, "public_feedback": current.public_feedback,
            "ladder_step": current.ladder_step, "min_answered": current.min_answered,
            "view_rows": view_rows(views),
            "max_methods": max_methods(phase), "final_selections": final_selections(phase),
            "unlimited_per_day": phase.max_per_day is None}


def _with_form_probing(form: PhaseForm) -> dict[str, Any] | None:
    """Return the create form's task config with its probing and entry fields merged in; a key the config sets wins."""
    config = form.config()
    given = {key: value for key, value in form.probing().items() if key not in (config or {})}
    entry = {key: value for key, value in form.entry_settings().items() if key not in (config or {})}
    return with_entry_settings(probing.with_probing(config, given), entry)


def _form_page(template: str, form: Any, **context: Any) -> str | tuple[str, int]:
    """Render a form page; a submitted form that failed comes back with status 400."""
    page = render_template(template, form=form, **context)
    return (page, 400) if form.is_submitted() else page
