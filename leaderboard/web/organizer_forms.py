"""Flask-WTF forms of the organizer pages: competitions, phases, imports, labels, baselines, moderation.

Their rules come from the services (slug, submission limits, probing and entry settings).
"""

from __future__ import annotations

import json
from typing import Any

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import (
    BooleanField,
    DateTimeField,
    FieldList,
    FloatField,
    Form,
    FormField,
    HiddenField,
    IntegerField,
    SelectField,
    SelectMultipleField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, Length, NumberRange, Optional, Regexp, ValidationError
from wtforms.widgets import TextInput

from leaderboard.organizing import DEFAULT_MAX_PER_DAY, LIMIT_MIN, SLUG_RE, SLUG_RULE, UNLIMITED
from leaderboard.web.forms import MetadataFields

UTC_FORMATS = ["%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"]
"""A UTC date field shows and reads 24-hour "2025-03-01 14:00" (the first format), never the browser's local clock."""
UTC_INPUT = {"placeholder": "YYYY-MM-DD HH:MM", "inputmode": "numeric", "autocomplete": "off",
             "pattern": r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?", "class": "utc-input"}
VISIBILITY_CHOICES = [
    SelectChoice("public", "Public: anyone can see the ranking"),
    SelectChoice("hidden", "Hidden: only organizers see the ranking"),
]
FEEDBACK_CHOICES = [
    SelectChoice("exact", "Exact: every upload shows its score"),
    SelectChoice("ladder", "Ladder: only clear improvements show"),
]
IMPORT_FORMATS = [
    SelectChoice("creak", "CREAK (dev.json, train.json or contrast_set.json)"),
    SelectChoice("colota", "CoLoTa (CoLoTa_qa.json or CoLoTa_cv.json)"),
    SelectChoice("tgcsr", "TG-CSR (one context's -mc.jsonl, the paper's 1–4 ratings; or its -tf.jsonl, "
                          "true/false, whose labels differ from mc on 82 of 1,187 items over the four contexts)"),
    SelectChoice("comparisonqa", "ComparisonQA (JSON array of question pairs)"),
]



class ModerationForm(FlaskForm):
    """Hide, disqualify or restore a submission; the reason is shown to its owner (required to disqualify)."""

    reason = StringField("Reason (shown to the participant)", validators=[Optional(), Length(max=1000)])


class ReopenForm(FlaskForm):
    """Confirm reopening a closed phase whose private split everyone has seen."""

    confirm = BooleanField("I understand that the private ranking has been shown, and reopen the phase anyway.",
                           validators=[DataRequired("Tick the box to confirm.")])


class CompetitionForm(FlaskForm):
    """Create a competition."""

    slug = StringField(
        "Slug",
        validators=[DataRequired(), Regexp(SLUG_RE, message=SLUG_RULE)],
        description="Used in the address: /c/<slug>. Lowercase letters, digits and dashes.",
    )
    title = StringField("Title", validators=[DataRequired(), Length(max=200)])
    description = TextAreaField("Description", validators=[Optional(), Length(max=20000)])


class PhaseSettingsForm(FlaskForm):
    """Settings of a phase an organizer can change after creating it."""

    name = StringField("Name", validators=[DataRequired(), Length(max=120)])
    description = TextAreaField("Rules and description", validators=[Optional(), Length(max=20000)])
    # A text field, not datetime-local: the browser would show the time on its own (often 12-hour) local clock.
    start_at = DateTimeField("Start (UTC)", format=UTC_FORMATS, validators=[Optional()], render_kw=UTC_INPUT,
                             widget=TextInput())
    end_at = DateTimeField("End (UTC)", format=UTC_FORMATS, validators=[Optional()], render_kw=UTC_INPUT,
                           widget=TextInput())
    max_per_day = IntegerField(
        "Submissions per UTC day", validators=[Optional(), NumberRange(min=LIMIT_MIN)],
        description=f"Empty: {DEFAULT_MAX_PER_DAY} a day. The day is the UTC day; 0 closes uploads.")
    unlimited_per_day = BooleanField("No daily limit (every upload is another look at the hidden labels)")
    max_total = IntegerField("Submissions in total", validators=[Optional(), NumberRange(min=LIMIT_MIN)])
    leaderboard_visibility = SelectField("Leaderboard visibility", choices=VISIBILITY_CHOICES)
    empty_daily_is_default = True  # creating: an empty daily limit is DEFAULT_MAX_PER_DAY; editing: say which

    def validate_end_at(self, field: DateTimeField) -> None:
        """Refuse an end before the start."""
        if field.data and self.start_at.data and field.data <= self.start_at.data:
            raise ValidationError("The end must come after the start.")

    def validate_unlimited_per_day(self, field: BooleanField) -> None:
        """Require a daily limit or the explicit "no daily limit", not both (an empty one is the default on create)."""
        if field.data and self.max_per_day.data is not None:
            raise ValidationError("Give a daily limit or tick “No daily limit”, not both.")
        if not field.data and self.max_per_day.data is None and not self.empty_daily_is_default:
            raise ValidationError("Give a daily limit, or tick “No daily limit” to allow any number of uploads.")

    def settings(self) -> dict[str, Any]:
        """Return the phase fields this form sets, ready for the phases service."""
        return {
            "name": self.name.data,
            "description": self.description.data or "",
            "start_at": self.start_at.data,
            "end_at": self.end_at.data,
            "max_per_day": UNLIMITED if self.unlimited_per_day.data else self.max_per_day.data,
            "max_total": self.max_total.data,
            "leaderboard_visibility": self.leaderboard_visibility.data,
        }


class ProbingFields:
    """The probing defences of docs/PROBING.md (docs/PROBING.md), mixed into the phase create and edit forms."""

    min_slice_items = IntegerField(
        "Smallest breakdown row shown to participants", default=25,
        validators=[Optional(), NumberRange(min=1)],
        description="Answered items a slice (category, head/tail bucket, pair table) needs before participants "
                    "see it. Empty: the default, 25; 1 turns the rule off.")
    public_feedback = SelectField("Public score feedback", choices=FEEDBACK_CHOICES, default="exact")
    ladder_step = FloatField(
        "Ladder step", validators=[Optional(), NumberRange(min=0.0001, max=1)],
        description="Empty: max(0.001, 1/√(public items)). Used only with the ladder.")
    min_answered = IntegerField(
        "Fewest answered items per file", validators=[Optional(), NumberRange(min=1)],
        description="Files answering fewer items are refused (not charged). Empty: no minimum.")

    def probing(self) -> dict[str, Any]:
        """Return the probing settings this form sets (None: the default)."""
        return {name: getattr(self, name).data for name in ("min_slice_items", "public_feedback", "ladder_step",
                                                            "min_answered")}


class ViewRowForm(Form):
    """One leaderboard view on the phase edit form: a name, the path it ranks by, extra column paths."""

    name = StringField("View name", validators=[Optional(), Length(max=80)])
    metric = SelectField("Ranked by", choices=[], validate_choice=False)  # the domain checks the path
    columns = SelectMultipleField("Extra columns", choices=[], validate_choice=False)


class ViewsFields:
    """A phase's leaderboard views (docs/FORMATS.md#leaderboard-views), picked from the paths its labels produce."""

    view_rows = FieldList(FormField(ViewRowForm), min_entries=1, max_entries=8)

    def offer_paths(self, paths: list[str], label: Any) -> None:
        """Offer these metric paths (named by label(path)) in every view row's pickers."""
        choices = [(path, f"{label(path)} ({path})") for path in paths]
        for row in self.view_rows:
            known = {value for value, _ in choices}
            chosen = [p for p in [row.metric.data, *(row.columns.data or [])] if p and p not in known]
            extra = [(p, f"{p} (not produced by these labels)") for p in dict.fromkeys(chosen)]
            row.metric.choices = [("", "— no view —"), *choices, *extra]
            row.columns.choices = [*choices, *extra]

    def views(self) -> list[Any] | None:
        """Return the views picked, in order (None: the default view ranked by the primary metric)."""
        views = [{"name": (row["name"] or "").strip() or row["metric"], "metric": row["metric"],
                  "columns": [c for c in row["columns"] or [] if c != row["metric"]]}
                 for row in self.view_rows.data if row.get("metric")]
        return views or None


def view_rows(views: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Return a phase's views as the edit form's rows, plus an empty row to add one."""
    rows = [{"name": v.get("name", ""), "metric": v.get("metric", ""), "columns": list(v.get("columns") or [])}
            for v in views or []]
    return [*rows, {"name": "", "metric": "", "columns": []}][:8]


class EntryFields:
    """The entry settings of docs/ENTRIES.md, mixed into the phase create and edit forms."""

    max_methods = IntegerField(
        "Methods per team or participant", default=3, validators=[Optional(), NumberRange(min=1, max=1000)],
        description="Each method is one row of the ranking; a new method past this is refused. Empty: 3.")
    final_selections = IntegerField(
        "Final selections per team", validators=[Optional(), NumberRange(min=1, max=1000)],
        description="When set, participants select up to this many submissions while the phase is open, and the "
                    "private ranking after close uses the best selected one per method (or the best this many by "
                    "public score when none is selected). Empty: every submission counts.")

    def entry_settings(self) -> dict[str, Any]:
        """Return the entry settings this form sets (None: the default)."""
        return {"max_methods": self.max_methods.data, "final_selections": self.final_selections.data}


class PhaseEditForm(PhaseSettingsForm, ProbingFields, ViewsFields, EntryFields):
    """A phase's settings, probing defences and leaderboard views, as an organizer edits them after creation."""

    empty_daily_is_default = False


class PhaseForm(PhaseSettingsForm, ProbingFields, EntryFields):
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
    """Create a phase from a benchmark's own released file via an importer, with the importer's options."""

    format = SelectField("Benchmark format", choices=IMPORT_FORMATS)
    source = FileField("Released file", description="Required unless a preview kept it.")
    originals = FileField("CoLoTa originals (optional)", description=(
        "CoLoTa only: baselines/data/QA-original.csv or CV-original.csv adds the popular originals as head "
        "items, so the head/tail view compares them with the long-tail questions."))
    modified = FileField("CoLoTa modified (optional, with the originals)", description=(
        "CoLoTa only: QA-modified.csv or CV-modified.csv links each long-tail question to its original."))
    private_percent = IntegerField(
        "Private split (% of items, optional)", validators=[Optional(), NumberRange(min=1, max=90)],
        description="Hidden until the phase closes; drawn within each category and popularity band, related "
                    "items together, with a fixed seed. Empty: keep the file's own split (or none).")
    preview = BooleanField("Preview only: show the import report without creating the phase (the file is kept)")

    def web_note(self, note: str) -> str:
        """Return an importer's note in the form's words: a command-line option becomes the field that sets it."""
        for option in ("originals", "modified"):
            label = getattr(self, option).label.text.split(" (")[0]
            note = note.replace(f"pass --{option}", f"add the “{label}” file on this form")
            note = note.replace(f"--{option}", f"the “{label}” file")
        return note
    kept = HiddenField()

    def sources(self) -> dict[str, Any]:
        """Return the import's files (None where none was chosen), its split and a preview's kept token."""
        source = _read(self.source.data)
        return {"source": source or None, "filename": getattr(self.source.data, "filename", None) or "source",
                "originals": _read(self.originals.data) or None, "modified": _read(self.modified.data) or None,
                "private_percent": self.private_percent.data, "kept": None if source else self.kept.data}


class CompetitionEditForm(FlaskForm):
    """Change a competition's title, description and participation approval (the slug is its address and stays)."""

    title = StringField("Title", validators=[DataRequired(), Length(max=200)])
    description = TextAreaField("Description", validators=[Optional(), Length(max=20000)])
    requires_approval = BooleanField(
        "Participants need my approval before they can submit",
        description="Each account asks to take part from the competition's page; you approve or refuse it on the "
                    "participants page. Pending accounts can read everything public but not submit.")


class LabelsForm(FlaskForm):
    """Replace a phase's hidden labels with a corrected version."""

    labels = FileField("Corrected hidden labels (JSON Lines)", validators=[FileRequired("Upload the label file.")])


class PublicFileForm(FlaskForm):
    """Upload a public file of a phase, or replace one (same name); questions.jsonl replaces the questions."""

    file = FileField("File", validators=[FileRequired("Choose the file to upload.")])
    name = StringField("Name on the download (optional)", validators=[Optional(), Length(max=100)],
                       description="Empty: the uploaded file's own name. Letters, digits, '.', '_' and '-'.")


class BreakdownsForm(FlaskForm):
    """Pick the label fields shown as per-value tables (changing them re-scores the phase)."""

    breakdowns = SelectMultipleField("Breakdown fields", choices=[], validate_choice=False, description=(
        "Fields of the label file besides id, label and split. Hold Ctrl or ⌘ to pick several; none: no tables."))


class BaselineForm(FlaskForm, MetadataFields):
    """Upload a named baseline (e.g. 'Human', 'GPT-4o') as a prediction file, with the entries' metadata."""

    name = StringField("Baseline name", validators=[DataRequired(), Length(max=120)])
    file = FileField("Prediction file", validators=[FileRequired("Choose a file to upload.")])


def _read(storage: Any) -> bytes:
    """Return the bytes of an uploaded file field, or b'' when none was sent."""
    if storage is None or not getattr(storage, "filename", ""):
        return b""
    data = storage.read()
    storage.seek(0)
    return data
