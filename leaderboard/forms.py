"""Flask-WTF forms of the HTML pages; every form carries a CSRF token in ``csrf_token``."""

from __future__ import annotations

import json
from typing import Any

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import (
    BooleanField,
    DateTimeLocalField,
    EmailField,
    IntegerField,
    PasswordField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import (
    DataRequired,
    Email,
    EqualTo,
    Length,
    NumberRange,
    Optional,
    Regexp,
    ValidationError,
)

UTC_FORMATS = ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
VISIBILITY_CHOICES = [
    SelectChoice("public", "Public: anyone can see the ranking"),
    SelectChoice("hidden", "Hidden: only organizers see the ranking"),
]
IMPORT_FORMATS = [
    SelectChoice("creak", "CREAK (dev.json, train.json or contrast_set.json)"),
    SelectChoice("colota", "CoLoTa (CoLoTa_qa.json or CoLoTa_cv.json)"),
    SelectChoice("tgcsr", "TG-CSR (one context's .jsonl with annotator votes)"),
    SelectChoice("comparisonqa", "ComparisonQA (JSON array of question pairs)"),
]


class ActionForm(FlaskForm):
    """A POST button with nothing but its CSRF token (log out, open, close, re-score)."""


class LoginForm(FlaskForm):
    """Log in with email and password."""

    email = EmailField("Email", validators=[DataRequired(), Email()])
    password = PasswordField("Password", validators=[DataRequired()])


class RegisterForm(FlaskForm):
    """Create a participant account."""

    email = EmailField("Email", validators=[DataRequired(), Email(), Length(max=320)])
    display_name = StringField(
        "Display name",
        validators=[DataRequired(), Length(min=2, max=80)],
        description="Shown on leaderboards. Your email is never shown publicly.",
    )
    password = PasswordField("Password", validators=[DataRequired(), Length(min=8, max=200)])
    confirm = PasswordField("Repeat password", validators=[DataRequired(), EqualTo("password", "Passwords differ.")])


class SubmissionForm(FlaskForm):
    """Upload one prediction file to a phase."""

    file = FileField("Prediction file", validators=[FileRequired("Choose a file to upload.")])
    description = StringField(
        "Description (optional)",
        validators=[Optional(), Length(max=500)],
        description="E.g. the model and prompt; shown to you and the organizers.",
    )


class CompetitionForm(FlaskForm):
    """Create a competition."""

    slug = StringField(
        "Slug",
        validators=[DataRequired(), Length(max=64), Regexp(r"^[a-z0-9][a-z0-9-]*$", message="Use a-z, 0-9 and -.")],
        description="Used in the address: /c/<slug>. Lowercase letters, digits and dashes.",
    )
    title = StringField("Title", validators=[DataRequired(), Length(max=200)])
    description = TextAreaField("Description", validators=[Optional(), Length(max=20000)])


class PhaseSettingsForm(FlaskForm):
    """Settings of a phase an organizer can change after creating it."""

    name = StringField("Name", validators=[DataRequired(), Length(max=120)])
    description = TextAreaField("Rules and description", validators=[Optional(), Length(max=20000)])
    start_at = DateTimeLocalField("Start (UTC)", format=UTC_FORMATS, validators=[Optional()])
    end_at = DateTimeLocalField("End (UTC)", format=UTC_FORMATS, validators=[Optional()])
    max_per_day = IntegerField("Submissions per UTC day", validators=[Optional(), NumberRange(min=1)])
    max_total = IntegerField("Submissions in total", validators=[Optional(), NumberRange(min=1)])
    leaderboard_visibility = SelectField("Leaderboard visibility", choices=VISIBILITY_CHOICES)

    def validate_end_at(self, field: DateTimeLocalField) -> None:
        """Refuse an end before the start."""
        if field.data and self.start_at.data and field.data <= self.start_at.data:
            raise ValidationError("The end must come after the start.")

    def settings(self) -> dict[str, Any]:
        """Return the phase fields this form sets, ready for the phases service."""
        return {
            "name": self.name.data,
            "description": self.description.data or "",
            "start_at": self.start_at.data,
            "end_at": self.end_at.data,
            "max_per_day": self.max_per_day.data,
            "max_total": self.max_total.data,
            "leaderboard_visibility": self.leaderboard_visibility.data,
        }


class PhaseForm(PhaseSettingsForm):
    """Create a phase from a hidden label file, public questions and a task config."""

    labels = FileField("Hidden labels (JSON Lines)", validators=[FileRequired("Upload the label file.")])
    questions = FileField("Public questions (JSON Lines, optional)")
    config_file = FileField("Task config file (JSON, optional)")
    config_text = TextAreaField("…or task config as text", validators=[Optional(), Length(max=20000)])

    def config(self) -> dict[str, Any] | None:
        """Return the task config from the file or the text box (the file wins), or None."""
        raw = _read(self.config_file.data) or (self.config_text.data or "").encode()
        if not raw.strip():
            return None
        return json.loads(raw)

    def validate(self, extra_validators: Any = None) -> bool:
        """Validate the fields, then require the task config (file or text) to be a JSON object."""
        valid = super().validate(extra_validators)
        try:
            config = self.config()
        except (ValueError, UnicodeDecodeError) as exc:
            self.config_text.errors = [*self.config_text.errors, f"The task config is not valid JSON: {exc}"]
            return False
        if config is not None and not isinstance(config, dict):
            self.config_text.errors = [*self.config_text.errors, "The task config must be a JSON object."]
            return False
        return valid


class ImportForm(PhaseSettingsForm):
    """Create a phase from a benchmark's own released file via an importer."""

    format = SelectField("Benchmark format", choices=IMPORT_FORMATS)
    source = FileField("Released file", validators=[FileRequired("Upload the benchmark's file.")])
    preview = BooleanField("Preview only: show the import report without creating the phase")


class CompetitionEditForm(FlaskForm):
    """Change a competition's title and description (the slug is its address and stays)."""

    title = StringField("Title", validators=[DataRequired(), Length(max=200)])
    description = TextAreaField("Description", validators=[Optional(), Length(max=20000)])


class LabelsForm(FlaskForm):
    """Replace a phase's hidden labels with a corrected version."""

    labels = FileField("Corrected hidden labels (JSON Lines)", validators=[FileRequired("Upload the label file.")])


class BaselineForm(FlaskForm):
    """Upload a named baseline (e.g. 'Human', 'GPT-4o') as a prediction file."""

    name = StringField("Baseline name", validators=[DataRequired(), Length(max=120)])
    file = FileField("Prediction file", validators=[FileRequired("Choose a file to upload.")])


def _read(storage: Any) -> bytes:
    """Return the bytes of an uploaded file field, or b'' when none was sent."""
    if storage is None or not getattr(storage, "filename", ""):
        return b""
    data = storage.read()
    storage.seek(0)
    return data
