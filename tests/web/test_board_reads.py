"""Reads that cost what they show (docs/RANKING.md#reads-under-a-rush): one body for everyone, marks per viewer.

A logged-in page and a token's API answer are the body every reader shares (rendered
once per board answer) with the viewer's own rows marked; nothing personal may ever be
in that shared body. Unknown query parameters make no new cache entry, and every cache
is bounded.
"""

from __future__ import annotations

import io
import re

from leaderboard.models import Team, TeamMember
from leaderboard.submissions import accept_submission
from leaderboard.web.board_cache import shared
from leaderboard.web.board_cache.lru import BoundedLru
from leaderboard.web.board_cache.middleware import canonical_query


def upload(ctx, phase, user, content: bytes) -> None:
    """Accept content as an upload by user (scored inline)."""
    accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv", stream=io.BytesIO(content))


def main_of(page: str) -> str:
    """Return the <main> element of a page (what is below the menu)."""
    return page[page.index('<main id="main"'):page.index("</main>")]


def marked_names(page: str) -> list[str]:
    """Return the entry names of the table rows marked as the viewer's (class mine-row, tag 'yours')."""
    rows = re.findall(r'<tr class="([^"]*)">\s*<td class="num rank">.*?<span class="entry-name">([^<]*)</span>'
                      r'(.*?)</th>', page, re.S)
    names = [name for classes, name, tail in rows if "mine-row" in classes.split()]
    assert names == [name for _, name, tail in rows if "tag-mine" in tail]  # the class and the tag go together
    return names


def unmarked(page: str) -> str:
    """Return a page's main part with the viewer's marks taken out."""
    return main_of(page).replace(" mine-row", "").replace(' <span class="tag tag-mine">yours</span>', "")


def world(ctx, make_phase, make_user, make_predictions):
    """A phase ranking Ann alone, the team Tail Team (Bob and Cy, only Bob uploads) and Dee; Eve has no row."""
    phase = make_phase()
    ann, bob, cy, dee, eve = (make_user(display_name=name) for name in ("Ann", "Bob", "Cy", "Dee", "Eve"))
    team = Team(competition_id=phase.competition_id, name="Tail Team", invite_code="code-19")
    ctx.session.add(team)
    ctx.session.flush()
    ctx.session.add_all([TeamMember(team_id=team.id, user_id=u.id, competition_id=phase.competition_id)
                         for u in (bob, cy)])
    ctx.session.commit()
    for user, wrong in ((ann, 1), (bob, 0), (dee, 2)):
        upload(ctx, phase, user, make_predictions(wrong=wrong))
    return phase, {"ann": ann, "bob": bob, "cy": cy, "dee": dee, "eve": eve}


def test_each_viewer_sees_only_their_own_marks_on_the_one_shared_body(ctx, app, make_phase, make_user,
                                                                      make_predictions, login, make_token):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/phases/{phase.id}/leaderboard"
    anonymous = app.test_client().get(path).get_data(as_text=True)
    assert marked_names(anonymous) == [] and "Ann" in anonymous
    kept = len(shared.kept())
    expected = {"ann": ["Ann"], "bob": ["Tail Team"], "cy": ["Tail Team"], "dee": ["Dee"], "eve": []}
    pages = {}
    for who, user in people.items():
        client = app.test_client()
        login(client, user)
        page = client.get(path)
        assert page.status_code == 200 and "ETag" not in page.headers
        assert page.headers["Cache-Control"] == "private, no-cache"
        text = page.get_data(as_text=True)
        assert marked_names(text) == expected[who], who
        assert unmarked(text) == main_of(anonymous)  # the same body as anyone's, marks aside
        assert f">{user.display_name}</a></li>" in text  # their own name in the menu, rendered for them
        pages[who] = text
    assert len(shared.kept()) == kept  # every viewer was served from the body the anonymous read made
    assert marked_names(app.test_client().get(path).get_data(as_text=True)) == []
    for who, user in people.items():
        rows = app.test_client().get(f"/api/v1/phases/{phase.id}/leaderboard",
                                     headers={"Authorization": f"Bearer {make_token(user)}"}).get_json()["rows"]
        assert [r["display_name"] for r in rows if r["mine"]] == expected[who]
    assert not any(r["mine"] for r in app.test_client().get(f"/api/v1/phases/{phase.id}/leaderboard").get_json()[
        "rows"])
    for key, body in list(shared.kept()._data.items()):
        text = "".join(body[0].parts)
        assert "csrf" not in text and "mine-row" not in text and "tag-mine" not in text and '"mine":true' not in text
        if key[0] == "page":
            assert not any(f">{u.display_name}</a></li>" in text for u in people.values())


def test_a_name_that_looks_like_a_marker_is_printed_as_it_is(ctx, app, make_phase, make_user, make_predictions,
                                                              login):
    phase = make_phase()
    sly = make_user(display_name="tbm00000000000000000000000000x")
    upload(ctx, phase, sly, make_predictions(wrong=0))
    client = app.test_client()
    login(client, sly)
    page = client.get(f"/phases/{phase.id}/leaderboard").get_data(as_text=True)
    assert marked_names(page) == ["tbm00000000000000000000000000x"]


def test_unknown_query_parameters_make_no_new_cache_entry(ctx, app, client, make_phase, make_user,
                                                          make_predictions):
    phase, _ = world(ctx, make_phase, make_user, make_predictions)
    cache = app.wsgi_app
    first = client.get(f"/phases/{phase.id}/leaderboard?utm=a")
    kept, bodies = len(cache.stored), len(shared.kept())
    for junk in ("utm=b", "utm=c&fbclid=x", "ref=mail&utm=d&zz=1"):
        again = client.get(f"/phases/{phase.id}/leaderboard?{junk}")
        assert again.data == first.data and again.headers["ETag"] == first.headers["ETag"]
    assert len(cache.stored) == kept and len(shared.kept()) == bodies
    assert b"utm" not in first.data  # not even in the login link's next=
    searched = client.get(f"/phases/{phase.id}/leaderboard?q=Ann&utm=e").get_data(as_text=True)
    assert "Dee" not in searched[searched.index("board-table"):] and len(cache.stored) == kept + 1


def test_the_canonical_query_keeps_known_parameters_sorted_and_drops_the_rest() -> None:
    assert canonical_query("utm=1&sort=name&q=a+b&page=2&q=c&x=") == "page=2&q=a+b&q=c&sort=name"
    assert canonical_query("") == "" and canonical_query("utm_source=x") == ""
    assert canonical_query("format=csv&open_weights=true") == "format=csv&open_weights=true"


def test_the_micro_cache_keeps_at_most_its_bound(ctx, app, client, make_phase, make_user, make_predictions):
    phase, _ = world(ctx, make_phase, make_user, make_predictions)
    cache = app.wsgi_app
    cache.stored = BoundedLru(entries=3, max_bytes=10**9)
    for n in range(6):
        assert client.get(f"/phases/{phase.id}/leaderboard?q=a{n}").status_code == 200
    assert len(cache.stored) == 3
    cache.stored = BoundedLru(entries=100, max_bytes=1)  # every answer is heavier than the budget
    assert client.get(f"/phases/{phase.id}/leaderboard?q=b").status_code == 200
    assert len(cache.stored) == 0


def test_a_bounded_lru_drops_the_least_recently_used_by_entries_and_by_bytes() -> None:
    lru: BoundedLru[str] = BoundedLru(entries=3, max_bytes=100)
    for key in "abc":
        lru.put(key, key, 10)
    assert lru.get("a") == "a"  # now the most recent
    lru.put("d", "d", 10)
    assert lru.get("b") is None and [lru.get(k) for k in "acd"] == ["a", "c", "d"] and lru.bytes == 30
    lru.put("e", "e", 85)  # 115 bytes: the least recently used go until 100 holds
    assert [lru.get(k) for k in "acde"] == [None, None, "d", "e"] and lru.bytes == 95
    lru.put("huge", "x", 101)
    assert lru.get("huge") is None and len(lru) == 2
    lru.put("e", "e2", 5)
    assert lru.get("e") == "e2" and lru.bytes == 15


def test_every_row_answers_and_exports_mark_the_caller_alone(ctx, app, make_phase, make_user, make_predictions,
                                                             make_token):
    phase, people = world(ctx, make_phase, make_user, make_predictions)
    path = f"/api/v1/phases/{phase.id}/leaderboard"
    anonymous = app.test_client()
    for who, expected in (("cy", ["Tail Team"]), ("dee", ["Dee"])):
        caller = {"Authorization": f"Bearer {make_token(people[who])}"}
        rows = anonymous.get(f"{path}?format=json", headers=caller).get_json()["rows"]
        assert [r["display_name"] for r in rows if r["mine"]] == expected
        assert len([r for r in rows if not r["is_baseline"]]) == 3
        csv = anonymous.get(f"{path}?format=csv", headers=caller)
        assert csv.headers["Cache-Control"] == "private, no-cache"
        assert csv.data == anonymous.get(f"{path}?format=csv").data  # an export marks no row: the same for all
    assert not any(r["mine"] for r in anonymous.get(f"{path}?format=json").get_json()["rows"])


def test_the_shared_bodies_and_rendered_answers_keep_at_most_their_bound(ctx, app, make_phase, make_user,
                                                                         make_predictions, login, monkeypatch):
    from leaderboard.web.board_cache import pages

    phase, people = world(ctx, make_phase, make_user, make_predictions)
    bodies, answers = BoundedLru(entries=2, max_bytes=10**9), BoundedLru(entries=2, max_bytes=10**9)
    monkeypatch.setattr(shared, "_bodies", bodies)
    monkeypatch.setattr(pages, "_pages", answers)
    reader = app.test_client()
    login(reader, people["ann"])
    for n in range(5):
        assert reader.get(f"/phases/{phase.id}/leaderboard?q=a{n}").status_code == 200
        assert app.test_client().get(f"/api/v1/phases/{phase.id}/leaderboard?q=b{n}").status_code == 200
    assert len(bodies) == 2 and len(answers) == 2


def test_the_ranking_pages_links_are_encoded_as_url_for_encodes_them(app) -> None:
    from flask import url_for

    from leaderboard.web.templating import query_string

    tricky = [{}, {"q": "a b&c=d#e/f?g"}, {"q": "Ünïcode ✓", "page": 3, "per_page": 100},
              {"sort": "popularity.tail.accuracy", "order": "desc", "view": "Long tail", "open_weights": "true"},
              {"prompting": "chain-of-thought (CoT); 'quoted' *star* !bang $ @at , :colon", "page": None}]
    with app.test_request_context():
        base = url_for("public.leaderboard", phase_id=7)
        for args in tricky:
            assert base + query_string(args) == url_for("public.leaderboard", phase_id=7, **{
                k: v for k, v in args.items() if v is not None}), args


def test_rows_printed_for_one_query_are_joined_by_another_exactly_as_printed_afresh(ctx, app, make_phase, make_user,
                                                                                     make_predictions):
    from dataclasses import replace

    from leaderboard.board import ranking
    from leaderboard.board.page import board_page
    from leaderboard.board.ranking import BoardQuery
    from leaderboard.web.board_cache.rows import RowPrinter

    phase, _ = world(ctx, make_phase, make_user, make_predictions)
    queries = [BoardQuery(sort="name"), BoardQuery(), BoardQuery(per_page=2, page=2), BoardQuery(q="a"),
               BoardQuery(sort="name", order="desc", per_page=2)]

    def printed(query: BoardQuery, store: dict) -> tuple[str, list]:
        board = replace(ranking.leaderboard(ctx, phase_id=phase.id, query=query), printed=store)
        page, marks = board_page(ctx, board), []
        rows = RowPrinter(page, lambda kind, row: marks.append((kind, row)) or f"<{kind} {row}>")
        text = str(rows.tables()) + str(rows.headtails()) + str(rows.pair_rows()) + "".join(
            str(rows.breakdowns(i)) for i in range(len(page.breakdowns)))
        return text, marks

    with app.test_request_context():
        kept: dict = {}
        for query in queries:  # every row printed once, for some query
            printed(query, kept)
        assert any(key[0] == "table" for key in kept) and any(key[0] == "page-row" for key in kept)
        for query in reversed(queries):  # each page joined from kept texts, marks where a fresh print puts them
            text, marks = printed(query, kept)
            assert (text, marks) == printed(query, {})
            assert text.count("<row ") == text.count("<tag ") == len(marks) // 2 > 0
