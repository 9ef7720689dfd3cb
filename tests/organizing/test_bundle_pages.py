"""A bundle's pages (CodaLab ``html:``, Codabench ``pages:`` and ``terms``) become titled plain-text sections of the
competition's description; the previews list them; an HTML page's markup, scripts included, is never rendered."""

from __future__ import annotations

import io
import zipfile

import pytest
from bundle_world import codabench_bundle, codalab_bundle
from sqlalchemy import select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Competition
from leaderboard.organizing import bundle_imports
from scoring.bundles import read_bundle
from scoring.bundles.page_text import described, html_text
from tests.scoring.bundle_support import zip_of

OVERVIEW = """<html><head><title>ignored</title><style>p { color: red }</style></head><body>
<h2>Welcome</h2>
<p>Answer   each claim <b>yes</b> or no.<br>Read the <a href="https://example.org/paper">paper</a> first.</p>
<script>alert('xss')</script>
<ul><li>one claim a line</li>
<li>no <a href="javascript:alert('link')">tricks</a></li></ul>
<p>Write &lt;script&gt;evil()&lt;/script&gt; nowhere.</p>
<img src="x" onerror="alert('img')" alt="the logo">
</body></html>"""
TERMS = "<h3>Terms</h3><p>Be kind.</p><p>Contact <a href='mailto:org@example.org'>org@example.org</a>.</p>"
OVERVIEW_TEXT = ("Welcome\n\nAnswer each claim yes or no.\nRead the paper (https://example.org/paper) first.\n\n"
                 "- one claim a line\n- no tricks\n\nWrite <script>evil()</script> nowhere.\n\n[the logo]")


def with_pages(data: bytes, yaml_extra: str, files: dict[str, str]) -> bytes:
    """Return the bundle with more top-level keys in its competition.yaml and more files."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["competition.yaml"] = members["competition.yaml"].decode() + yaml_extra
    return zip_of({**members, **files})


def codalab_with_pages() -> bytes:
    """Return the CodaLab test bundle with overview, evaluation (empty), terms and data pages."""
    extra = ("html:\n  overview: overview.html\n  evaluation: evaluation.html\n  terms: terms_and_conditions.html\n"
             "  data: data.html\n")
    return with_pages(codalab_bundle().data, extra, {
        "overview.html": OVERVIEW, "evaluation.html": "<p>  </p>", "terms_and_conditions.html": TERMS,
        "data.html": "<p>24 claims.</p>"})


def codabench_with_pages() -> bytes:
    """Return the Codabench test bundle with a markdown overview and terms."""
    extra = "terms: pages/terms.md\npages:\n  - title: Overview\n    file: pages/overview.md\n"
    return with_pages(codabench_bundle().data, extra, {"pages/overview.md": "# Pebbles\n\nThree bins.\n",
                                                      "pages/terms.md": "Be kind.\n"})


def test_an_html_page_becomes_its_text_without_markup() -> None:
    assert html_text(OVERVIEW) == OVERVIEW_TEXT
    assert html_text(TERMS) == "Terms\n\nBe kind.\n\nContact org@example.org."
    assert html_text("<head><meta charset=utf-8><title>T</title><p>Body text") == "Body text"  # an unclosed head


def test_the_codalab_pages_become_titled_sections_of_the_description(ctx) -> None:
    plan = read_bundle(codalab_with_pages())
    description = described(plan.description, plan.pages)
    assert description == (
        "Answer each claim with yes or no.\n\n"
        f"overview\n========\n\n{OVERVIEW_TEXT}\n\n"
        "terms\n=====\n\nTerms\n\nBe kind.\n\nContact org@example.org.\n\n"
        "data\n====\n\n24 claims.")  # the empty evaluation page adds nothing
    competition = bundle_imports.import_bundle(ctx, data=codalab_with_pages(), actor=OPERATOR, slug="paged")
    assert competition.description == description
    report = bundle_imports.preview_bundle(ctx, data=codalab_with_pages(), filename="b.zip", actor=OPERATOR).report
    assert ("carried: page 'terms' (terms_and_conditions.html) → a section of the competition's description, "
            "its text (the HTML itself is not kept)") in report
    assert not [line for line in report if line.startswith("not carried: page")]


def test_the_codabench_pages_and_terms_are_carried_as_written(ctx) -> None:
    competition = bundle_imports.import_bundle(ctx, data=codabench_with_pages(), actor=OPERATOR, slug="pebbles")
    assert competition.description == ("Put each pebble in one of three bins.\n\n"
                                       "Overview\n========\n\n# Pebbles\n\nThree bins.\n\n"
                                       "Terms\n=====\n\nBe kind.")


def test_the_cli_preview_lists_the_pages_it_carries(ctx, runner, tmp_path) -> None:
    path = tmp_path / "bundle.zip"
    path.write_bytes(codalab_with_pages())
    result = runner.invoke(args=["competitions", "import-bundle", str(path), "--preview"])
    assert result.exit_code == 0, result.output
    assert "page 'overview' (overview.html, html): appended to the description as text, 25 word(s)" in result.output
    assert "page 'terms' (terms_and_conditions.html, html)" in result.output
    assert "page 'evaluation' (evaluation.html, html): empty: nothing appended" in result.output
    assert ctx.session.scalar(select(Competition.id)) is None


@pytest.mark.parametrize("where", ["preview", "competition"])
def test_no_script_of_a_page_is_rendered_as_markup(ctx, client, login, csrf_token, make_organizer, where) -> None:
    organizer = make_organizer()
    login(client, organizer)
    upload = "/organizer/competitions/import-bundle"
    if where == "preview":
        form = {"bundle": (io.BytesIO(codalab_with_pages()), "bundle.zip"), "slug": "",
                "csrf_token": csrf_token(client, upload)}
        response = client.post(upload, data=form, content_type="multipart/form-data")
        assert "<summary>overview" in response.get_data(as_text=True)
    else:
        bundle_imports.import_bundle(ctx, data=codalab_with_pages(), actor=OPERATOR, slug="paged")
        response = client.get("/c/paged")
    page = response.get_data(as_text=True)
    assert response.status_code == 200, page
    assert "Read the paper (https://example.org/paper) first." in page
    assert "&lt;script&gt;evil()&lt;/script&gt;" in page  # the page's escaped text stays text
    for markup in ("<script>evil", "<script>alert", "alert(&#39;xss&#39;)", "alert('xss')", "onerror", "javascript:"):
        assert markup not in page


def test_a_description_longer_than_the_form_takes_is_kept_whole_and_reported(ctx) -> None:
    long_page = "<p>" + "word " * 5000 + "</p>"
    data = with_pages(codalab_bundle().data, "html:\n  overview: overview.html\n", {"overview.html": long_page})
    preview = bundle_imports.preview_bundle(ctx, data=data, filename="b.zip", actor=OPERATOR)
    length = len(bundle_imports.carried_description(preview.plan))
    assert length > bundle_imports.DESCRIPTION_FORM_MAX
    assert (f"carried: the description with its pages is {length} characters, more than the 20000 the "
            "competition's form saves: shorten it when you next edit it") in preview.report
    competition = bundle_imports.import_bundle(ctx, data=data, actor=OPERATOR, slug="long")
    assert len(competition.description) == length
