"""Issue 20 items 6 and 7 on the organizer's pages: the audit log records successful saves only, with the fields
they changed; the primary metric and views come from a picker of valid paths; the archive export is a
button that starts a job whose page offers the zip."""

from __future__ import annotations

from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest

from leaderboard.accounts import audit
from leaderboard.models import Phase, User
from leaderboard.platform import ServiceContext

pytestmark = pytest.mark.backends("sqlite")


class _FormFields(HTMLParser):
    """Collect the fields of the first form posting to a path, as a browser would send them unchanged."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside, self.done, self.fields = action, False, False, {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Read one tag of the form."""
        a = dict(attrs)
        if tag == "form" and not self.done and (a.get("action") or "") == self.action:
            self.inside = True
        if not self.inside:
            return
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "file"):
            if a.get("type") == "checkbox":
                if "checked" in a:
                    self.fields[name] = a.get("value") or "y"
            else:
                self.fields[name] = a.get("value") or ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and ("selected" in a or self._select not in self.fields):
            self.fields[self._select] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.fields[name] = ""

    def handle_data(self, data: str) -> None:
        """Read a textarea's text."""
        if self._textarea:
            self.fields[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        """Leave a select, textarea or the form."""
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            if self._textarea:
                self.fields[self._textarea] = self.fields[self._textarea].removeprefix("\n")
            self._textarea = None
        elif tag == "form" and self.inside:
            self.inside, self.done = False, True


def form_fields(page: str, action: str) -> dict[str, str]:
    """Return the fields of the form posting to action ("": its own page), as they are filled in on the page."""
    parser = _FormFields(action)
    parser.feed(page)
    assert parser.fields, f"no form posting to {action}"
    return parser.fields


@pytest.fixture
def setup(ctx: ServiceContext, client: Any, login: Callable, make_organizer: Callable,
          make_competition: Callable, make_phase: Callable) -> tuple[User, Phase]:
    """Return an organizer, logged in, and an open phase of their competition."""
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer))
    login(client, organizer)
    return organizer, phase


def _log(ctx: ServiceContext, organizer: User, phase: Phase) -> list[str]:
    """Return the competition's audit summaries, newest first."""
    ctx.session.expire_all()
    return [row.summary for row in audit.audit_log(ctx, slug=phase.competition.slug, actor=organizer)]


def test_a_refused_or_unchanged_save_logs_nothing_and_a_save_logs_what_it_changed(
        ctx: ServiceContext, client: Any, setup: tuple[User, Phase]) -> None:
    organizer, phase = setup
    path = f"/organizer/phases/{phase.id}/edit"
    before = _log(ctx, organizer, phase)
    fields = form_fields(client.get(path).get_data(as_text=True), "")
    unchanged = client.post(path, data=fields)
    assert unchanged.status_code == 303 and _log(ctx, organizer, phase) == before
    refused = client.post(path, data={**fields, "name": "Renamed", "min_slice_items": "0"})
    assert refused.status_code == 400 and _log(ctx, organizer, phase) == before
    bad_view = {"view_rows-0-name": "Odd", "view_rows-0-metric": "breakdowns.nosuchfield.x.accuracy"}
    refused = client.post(path, data={**fields, "name": "Renamed", **bad_view})
    assert refused.status_code == 400 and "views are invalid" in refused.get_data(as_text=True)
    assert _log(ctx, organizer, phase) == before
    ctx.session.expire_all()
    assert ctx.session.get(Phase, phase.id).name == "Phase 1"
    saved = client.post(path, data={**fields, "name": "Renamed", "max_total": "40", "min_slice_items": "30"})
    assert saved.status_code == 303
    added = _log(ctx, organizer, phase)[: -len(before) or None]
    assert added == ["changed the phase's settings (min_slice_items)", "edited the phase (max_total, name)"]
    assert not any("nothing" in summary for summary in _log(ctx, organizer, phase))


def test_views_are_picked_from_the_paths_the_labels_produce(
        ctx: ServiceContext, client: Any, setup: tuple[User, Phase]) -> None:
    organizer, phase = setup
    path = f"/organizer/phases/{phase.id}/edit"
    page = client.get(path).get_data(as_text=True)
    assert 'name="views_text"' not in page
    for offered in ("accuracy", "popularity.tail.accuracy", "breakdowns.category.history.accuracy"):
        assert f'<option value="{offered}">' in page
    fields = form_fields(page, "")
    picked = {"view_rows-0-name": "Long tail", "view_rows-0-metric": "popularity.tail.accuracy",
              "view_rows-0-columns": ["popularity.head.accuracy", "popularity.gap.accuracy"]}
    assert client.post(path, data={**fields, **picked}).status_code == 303
    ctx.session.expire_all()
    assert ctx.session.get(Phase, phase.id).task_config["views"] == [
        {"name": "Long tail", "metric": "popularity.tail.accuracy",
         "columns": ["popularity.head.accuracy", "popularity.gap.accuracy"]}]
    again = client.get(path).get_data(as_text=True)
    assert '<option selected value="popularity.tail.accuracy">' in again
    assert "changed the phase's settings (views)" in _log(ctx, organizer, phase)


def test_the_archive_is_a_button_whose_job_offers_the_zip(client: Any, setup: tuple[User, Phase],
                                                          csrf_token: Callable) -> None:
    _, phase = setup
    slug = phase.competition.slug
    page = client.get(f"/organizer/c/{slug}").get_data(as_text=True)
    assert f'action="/organizer/c/{slug}/export"' in page and "Prepare the archive (.zip)" in page
    token = csrf_token(client, f"/organizer/c/{slug}")
    started = client.post(f"/organizer/c/{slug}/export", data={"csrf_token": token})
    assert started.status_code == 303
    job_page = client.get(started.location).get_data(as_text=True)
    assert "Download the archive (.zip)" in job_page
    archive = client.get(started.location.rstrip("/") + "/archive")
    assert archive.status_code == 200 and archive.mimetype == "application/zip"
    assert archive.get_data()[:2] == b"PK"


def test_import_notes_name_the_forms_field_not_a_command_line_option() -> None:
    from leaderboard.web.organizer_forms import ImportForm

    note = "records not linked to their originals: pass --modified (the matching *-modified.csv) to link them"
    from flask import Flask

    with Flask(__name__).test_request_context():
        form = ImportForm(meta={"csrf": False})
        shown = form.web_note(note)
    assert "--modified" not in shown and "add the “CoLoTa modified” file on this form" in shown
