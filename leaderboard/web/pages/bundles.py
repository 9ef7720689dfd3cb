"""Organizer pages of a bundle import (docs/MOVING.md): upload a CodaLab or Codabench zip, preview, confirm.

The upload shows the preview (the competition, each phase, the import report) and keeps
the zip server-side under a token filed under the organizer's account; only the
confirmation creates anything, and only the organizer who previewed can confirm.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, flash, redirect, render_template, url_for
from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from werkzeug.wrappers import Response
from wtforms import HiddenField, StringField
from wtforms.validators import Optional, Regexp

from leaderboard.organizing import SLUG_RE, SLUG_RULE, bundle_imports
from leaderboard.platform import Conflict, InvalidInput
from leaderboard.web import context
from leaderboard.web.context import ctx

bp = Blueprint("bundles", __name__)
bp.before_request(context.organizers_only)


class BundleForm(FlaskForm):
    """Upload a competition bundle to preview it."""

    bundle = FileField("Competition bundle (.zip)", validators=[FileRequired("Choose the bundle's zip file.")],
                       description="A CodaLab (competition.yaml with numbered phases) or Codabench (version 2) "
                                   "bundle. Nothing is created before you confirm the preview.")
    slug = StringField("Slug (optional)", validators=[Optional(), Regexp(SLUG_RE, message=SLUG_RULE)],
                       description="The competition's address /c/<slug>. Empty: one made from the bundle's title.")


class ConfirmForm(FlaskForm):
    """Create the previewed competition: the kept bundle's token and the slug to create it under."""

    token = HiddenField()
    slug = StringField("Slug", validators=[Regexp(SLUG_RE, message=SLUG_RULE)])


@bp.route("/competitions/import-bundle", methods=["GET", "POST"])
def upload() -> str | tuple[str, int]:
    """Read an uploaded bundle and show what importing it would create; the zip is kept for the confirmation."""
    form = BundleForm()
    if form.validate_on_submit():
        data = form.bundle.data.read()
        try:
            preview = bundle_imports.preview_bundle(ctx(), data=data, filename=form.bundle.data.filename or "",
                                                    actor=context.current_organizer(), slug=form.slug.data,
                                                    keep=True)
        except InvalidInput as exc:
            return _upload_page(form, exc), 400
        return _preview_page(preview, ConfirmForm(formdata=None, token=preview.token, slug=preview.slug))
    return _upload_page(form, None), 400 if form.is_submitted() else 200


@bp.post("/competitions/import-bundle/confirm")
def confirm() -> Response | str | tuple[str, int]:
    """Create the competition of a bundle this organizer previewed."""
    form = ConfirmForm()
    me = context.current_organizer()
    try:
        if not form.validate_on_submit():
            raise InvalidInput(" ".join(form.slug.errors) or "The form expired; upload the bundle again.")
        competition = bundle_imports.import_bundle(ctx(), token=form.token.data, slug=form.slug.data, actor=me)
    except (InvalidInput, Conflict) as exc:
        data, filename = bundle_imports.kept_bundle(ctx(), token=form.token.data, actor=me)
        preview = bundle_imports.preview_bundle(ctx(), data=data, filename=filename, actor=me,
                                                slug=form.slug.data)
        preview = bundle_imports.BundlePreview(plan=preview.plan, slug=preview.slug, filename=filename,
                                               report=preview.report, token=form.token.data)
        return _preview_page(preview, form, error=exc.message), 400
    flash(f"Competition “{competition.title}” created with {len(competition.phases)} phase(s) from the bundle.",
          "success")
    return redirect(url_for("organizer.competition", slug=competition.slug), code=303)


def _upload_page(form: BundleForm, error: InvalidInput | None) -> str:
    """Render the upload form, with the reader's refusal and its report when there is one."""
    report = (error.details or {}).get("report", []) if error is not None and isinstance(error.details, dict) else []
    return render_template("organizer/bundle_import.html", form=form, error=error and error.message, report=report,
                           preview=None)


def _preview_page(preview: bundle_imports.BundlePreview, form: ConfirmForm, error: str | None = None) -> str:
    """Render the preview: the competition, each phase, the report, and the confirmation form."""
    phases: list[dict[str, Any]] = [{"plan": phase, **bundle_imports.phase_facts(phase)}
                                    for phase in preview.plan.phases]
    return render_template("organizer/bundle_import.html", form=form, preview=preview, phases=phases, error=error,
                           report=preview.report, pages=bundle_imports.carried_pages(preview.plan))
