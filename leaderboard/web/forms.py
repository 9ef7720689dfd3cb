"""Flask-WTF forms of the participants' pages (log in, register, upload, teams); every form carries a CSRF token.

The organizer pages' forms are in web/organizer_forms.py; both take their rules from the services
(the email rule, the metadata keys).
"""

from __future__ import annotations

from typing import Any

from flask import request
from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import EmailField, PasswordField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import DataRequired, EqualTo, Length, Optional, ValidationError

from leaderboard import accounts
from leaderboard.entries import PROMPTING
from leaderboard.platform import Conflict, InvalidInput

METADATA_PREFIX = "meta_"
YES_NO_CHOICES = [SelectChoice("", "Not said"), SelectChoice("yes", "Yes"), SelectChoice("no", "No")]
PROMPTING_CHOICES = [SelectChoice("", "Not said"), *(SelectChoice(p, p.capitalize()) for p in PROMPTING)]


class ActionForm(FlaskForm):
    """A POST button with nothing but its CSRF token (log out, open, close, re-score)."""


def valid_email(form: FlaskForm, field: EmailField) -> None:
    """Apply the one email rule of accounts.check_email (the CLI and the services use it too)."""
    try:
        accounts.check_email(field.data or "")
    except InvalidInput as error:
        raise ValidationError(error.message) from None


class LoginForm(FlaskForm):
    """Log in with email and password (any address: a wrong one just does not match an account)."""

    email = EmailField("Email", validators=[DataRequired(), Length(max=accounts.MAX_EMAIL_LENGTH)])
    password = PasswordField("Password", validators=[DataRequired()])


class RegisterForm(FlaskForm):
    """Create a participant account."""

    email = EmailField("Email", validators=[DataRequired(), valid_email])
    display_name = StringField(
        "Display name",
        validators=[DataRequired(), Length(min=2, max=80)],
        description="Shown on leaderboards. Your email is never shown publicly.",
    )
    password = PasswordField("Password", validators=[DataRequired(), Length(min=8, max=200)])
    confirm = PasswordField("Repeat password", validators=[DataRequired(), EqualTo("password", "Passwords differ.")])


class MetadataFields:
    """The entries' metadata fields with plain labels, named ``meta_<key>``, for uploads and organizers' baselines.

    Every posted ``meta_*`` field is read (``metadata_fields``), so a key the platform does
    not know reaches the service, which names it; ``add_problems`` shows its answer.
    """

    meta_model = StringField("Model", validators=[Optional()])
    meta_model_id = StringField(
        "Model id (optional)", validators=[Optional()],
        description="E.g. a Hugging Face repo id such as meta-llama/Llama-3-8B: the model the result exports "
                    "(Every Eval Ever, Hugging Face eval results) name for this entry.")
    meta_parameters_b = StringField("Parameters (billions)", validators=[Optional()])
    meta_open_weights = SelectField("Open weights", choices=YES_NO_CHOICES, default="")
    meta_uses_retrieval = SelectField("Uses retrieval", choices=YES_NO_CHOICES, default="")
    meta_uses_knowledge_graph = SelectField("Uses a knowledge graph", choices=YES_NO_CHOICES, default="")
    meta_prompting = SelectField("Prompting", choices=PROMPTING_CHOICES, default="")
    meta_url = StringField("Link (paper or code)", validators=[Optional()])
    meta_notes = TextAreaField("Notes", validators=[Optional()])
    form_errors: list[str]

    def metadata_fields(self) -> dict[str, str]:
        """Return every posted meta_* field by metadata key (the service reads and checks them)."""
        posted = request.form if request.method == "POST" else {}
        return {name[len(METADATA_PREFIX):]: value for name, value in posted.items()
                if name.startswith(METADATA_PREFIX)}

    def metadata_field(self, key: str) -> Any:
        """Return the form field of a metadata key, or None for a key the form does not show."""
        return getattr(self, METADATA_PREFIX + key, None)

    def add_problems(self, error: InvalidInput) -> None:
        """Show the service's problems on the fields they name (method, metadata.<key>); the rest above the form."""
        problems = error.details if isinstance(error.details, list) else []
        for problem in problems or [{"field": None, "message": error.message}]:
            name = str(problem.get("field") or "")
            key = name.removeprefix("metadata.")
            target = getattr(self, "method", None) if name == "method" else \
                self.metadata_field(key) if name != key else None
            if target is None:
                self.form_errors.append(f"{key}: {problem['message']}" if name != key else error.message)
            else:
                target.errors = [*target.errors, problem["message"]]


class SubmissionForm(FlaskForm, MetadataFields):
    """Upload one prediction file to a phase, under a method (the entry) with optional public metadata."""

    file = FileField("Prediction file", validators=[FileRequired("Choose a file to upload.")])
    method = StringField(
        "Method", validators=[Optional()],
        description="A name for this system or setting, e.g. “zero-shot” or “with knowledge graph”. Each method "
                    "is its own row on the ranking. Empty: “default”.")
    description = StringField(
        "Description (optional)",
        validators=[Optional(), Length(max=500)],
        description="E.g. the model and prompt; shown to you and the organizers.",
    )

    def show_refusal(self, error: Conflict) -> None:
        """Mark the method field when the upload was refused for one method too many (the message is above)."""
        if isinstance(error.details, dict) and "max_methods" in error.details:
            methods = ", ".join(error.details.get("methods") or [])
            self.method.errors = [*self.method.errors, f"One method too many: use one of {methods}."]


class TeamForm(FlaskForm):
    """Create a team in a competition (its creator joins it)."""

    name = StringField("Team name", validators=[DataRequired(), Length(min=2, max=80)],
                       description="Shown on the ranking instead of your display name.")


class JoinTeamForm(FlaskForm):
    """Join a team with the invite code a member shared."""

    invite_code = StringField("Invite code", validators=[DataRequired(), Length(max=64)])
