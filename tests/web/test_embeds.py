"""Embeds and badges: the board's public top entries for another site's iframe, an entry's rank as SVG."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from leaderboard.accounts import OPERATOR
from leaderboard.organizing import phases
from leaderboard.submissions import accept_submission
from leaderboard.web.pages.embeds import svg_badge

SVG = "{http://www.w3.org/2000/svg}"


def upload(ctx, phase, user, content: bytes):
    """Accept content as an upload by user (scored inline)."""
    return accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def texts(body: bytes) -> list[str]:
    """Return the text elements of an SVG document (it must parse as XML)."""
    root = ET.fromstring(body)
    assert root.tag == f"{SVG}svg"
    return [element.text or "" for element in root.iter(f"{SVG}text")]


def scored_board(ctx, make_phase, make_user, make_predictions):
    """Return a phase with three entries ranked 1, 2, 3 (Ada, Bob, Cyd), as the public board shows them."""
    phase = make_phase()
    subs = [upload(ctx, phase, make_user(display_name=name), make_predictions(wrong=wrong))
            for name, wrong in (("Ada Lovelace", 0), ("Bob Bunsen", 1), ("Cyd Charisse", 2))]
    return phase, subs


def test_the_embed_shows_the_top_n_and_only_it_may_be_framed(app, client, ctx, make_phase, make_user,
                                                             make_predictions) -> None:
    phase, _ = scored_board(ctx, make_phase, make_user, make_predictions)
    answer = client.get(f"/phases/{phase.id}/embed?n=2")
    assert answer.status_code == 200
    page = answer.get_data(as_text=True)
    assert page.count('class="embed-row') == 2
    assert "Ada Lovelace" in page and "Bob Bunsen" in page and "Cyd Charisse" not in page
    assert f"/phases/{phase.id}/leaderboard" in page and "<script" not in page
    csp = answer.headers["Content-Security-Policy"]
    assert "frame-ancestors *" in csp and "frame-ancestors 'none'" not in csp and "script-src 'self'" in csp
    assert "X-Frame-Options" not in answer.headers
    assert answer.headers["ETag"] and answer.headers["Cache-Control"] == "no-cache"
    assert client.get(f"/phases/{phase.id}/embed?n=2", headers={"If-None-Match": answer.headers["ETag"]}
                      ).status_code == 304
    for path in (f"/phases/{phase.id}/leaderboard", f"/phases/{phase.id}", "/", f"/phases/{phase.id}/badge.svg"):
        other = client.get(path)
        assert "frame-ancestors 'none'" in other.headers["Content-Security-Policy"], path
        assert other.headers["X-Frame-Options"] == "DENY", path


def test_the_embed_shows_the_figures_the_board_shows(app, client, ctx, make_phase, make_user, make_predictions,
                                                      labels_file) -> None:
    phase = make_phase(private=True)
    labels = labels_file(private=True)
    upload(ctx, phase, make_user(display_name="ada"), make_predictions(labels, wrong=1))
    board = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    embed = client.get(f"/phases/{phase.id}/embed").get_data(as_text=True)
    import re

    shown = re.search(r'col-value"><span class="val">([^<]+)<', board).group(1)
    assert f'<td class="num">{shown}</td>' in embed


def test_a_hidden_board_is_neither_embedded_nor_badged(app, client, ctx, make_phase, make_user,
                                                       make_predictions) -> None:
    phase, subs = scored_board(ctx, make_phase, make_user, make_predictions)
    phases.update_phase(ctx, phase_id=phase.id, actor=OPERATOR, leaderboard_visibility="hidden")
    assert client.get(f"/phases/{phase.id}/embed").status_code == 403
    answer = client.get(f"/phases/{phase.id}/badge.svg?entry={subs[0].id}")
    assert answer.status_code == 200 and texts(answer.data) == ["leaderboard", "not shown"]


def test_the_badge_is_svg_with_the_rank_and_the_value_as_shown(app, client, ctx, make_phase, make_user,
                                                               make_predictions) -> None:
    phase, subs = scored_board(ctx, make_phase, make_user, make_predictions)
    answer = client.get(f"/phases/{phase.id}/badge.svg?entry={subs[1].id}")
    assert answer.status_code == 200 and answer.mimetype == "image/svg+xml"
    api_row = next(r for r in client.get(f"/api/v1/phases/{phase.id}/leaderboard").get_json()["rows"]
                   if r["submission_id"] == subs[1].id)
    assert texts(answer.data) == [phase.name, f"#{api_row['rank']} · {api_row['value']:.4f}"]
    assert api_row["rank"] == 2
    assert answer.headers["ETag"] and answer.headers["Cache-Control"] == "no-cache"
    assert client.get(f"/phases/{phase.id}/badge.svg?entry={subs[1].id}",
                      headers={"If-None-Match": answer.headers["ETag"]}).status_code == 304
    for missing in ("999999", "abc", ""):
        grey = client.get(f"/phases/{phase.id}/badge.svg?entry={missing}")
        assert texts(grey.data) == [phase.name, "not ranked"] and 'fill="#9f9f9f"' in grey.get_data(as_text=True)


def test_badge_texts_are_escaped_into_valid_xml() -> None:
    body = svg_badge('<Phase & "1">', "#1 · 0.5000", "#007ec6").encode()
    assert texts(body) == ['<Phase & "1">', "#1 · 0.5000"]


def test_the_embed_bounds_n_and_refuses_an_unknown_view(app, client, ctx, make_phase, make_user,
                                                        make_predictions) -> None:
    phase, _ = scored_board(ctx, make_phase, make_user, make_predictions)
    assert client.get(f"/phases/{phase.id}/embed?n=0").get_data(as_text=True).count('class="embed-row') == 1
    assert client.get(f"/phases/{phase.id}/embed?n=x").get_data(as_text=True).count('class="embed-row') >= 3
    assert client.get(f"/phases/{phase.id}/embed?view=nope").status_code == 400
    assert client.get("/phases/999999/embed").status_code == 404
