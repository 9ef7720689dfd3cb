"""Entries (docs/ENTRIES.md) add ways to read scores: teammates, several methods, the ranks on a submission page.
Each is attacked here as a participant would, on SQLite and PostgreSQL (docs/PROBING.md, "Entries").

- Teammates share one ladder, as they share one quota: a second member's upload that does not
  beat the team's shown best by more than the step shows the team's best, where a member with a
  ladder of their own would have had a fresh release. (Separate accounts outside a team are the
  sybil cost the ladder documents; a team does not add to it.)
- Methods share their owner's ladder too: a new method is not a fresh release.
- The ranks on a submission page are the board's rows (released values only): a held upload
  never shows up there as "the ranked submission", so comparing one's own uploads below the
  step reads nothing.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

from probing_world import Caller, Item, Platform, csv_file

Attacker = Callable[[], Caller]


def all_yes_but(items: list[Item], right: int) -> dict[str, bool]:
    """Return answers right on the first `right` items (by truth) and yes everywhere else."""
    return {item.id: (item.label if n < right else True) for n, item in enumerate(items)}


def feedback(platform: Platform, caller: Caller, phase_id: int, answers: dict[str, bool], **fields: str) -> Any:
    """Upload answers (with extra multipart fields) and return the ladder feedback the caller reads."""
    response = platform.client.post(f"/api/v1/phases/{phase_id}/submissions", headers=caller.headers,
                                    data={"file": (io.BytesIO(csv_file(answers)), "p.csv"), **fields})
    response.close()
    assert response.status_code == 202, response.get_json()
    return platform.scores(caller, int(response.get_json()["id"]))["feedback"]


def team_of_two(platform: Platform, attacker: Attacker, slug: str) -> tuple[Caller, Caller]:
    """Return two callers in one team of the competition slug."""
    first, second = attacker(), attacker()
    made = platform.client.post(f"/api/v1/competitions/{slug}/teams", json={"name": "Pair"}, headers=first.headers)
    joined = platform.client.post("/api/v1/teams/join", json={"invite_code": made.get_json()["invite_code"]},
                                  headers=second.headers)
    assert joined.status_code == 200
    return first, second


def test_a_teammates_upload_climbs_the_teams_ladder_not_a_fresh_one(platform: Platform, attacker: Attacker,
                                                                   items: list[Item]) -> None:
    phase_id = platform.phase(items, public_feedback="ladder", ladder_step="0.05")
    slug = f"attack-{platform.phases}"
    first, second = team_of_two(platform, attacker, slug)
    opened = feedback(platform, first, phase_id, all_yes_but(items, 40))
    assert opened["released"] is True
    probe = feedback(platform, second, phase_id, all_yes_but(items, 42))  # better, by less than the step
    assert (probe["released"], probe["shown"]) == (False, opened["shown"])
    outsider = feedback(platform, attacker(), phase_id, all_yes_but(items, 42))  # control: a ladder of its own
    assert outsider["released"] is True


def test_a_new_method_climbs_its_owners_ladder_not_a_fresh_one(platform: Platform, attacker: Attacker,
                                                              items: list[Item]) -> None:
    phase_id = platform.phase(items, public_feedback="ladder", ladder_step="0.05")
    caller = attacker()
    opened = feedback(platform, caller, phase_id, all_yes_but(items, 40), method="a")
    probe = feedback(platform, caller, phase_id, all_yes_but(items, 42), method="b")
    assert (probe["released"], probe["shown"]) == (False, opened["shown"])


def test_the_ranks_on_a_submission_page_never_point_at_a_held_upload(platform: Platform, items: list[Item],
                                                                     make_user: Callable[..., Any],
                                                                     make_token: Callable[[Any], str],
                                                                     login: Callable[..., None], app: Any) -> None:
    phase_id = platform.phase(items, public_feedback="ladder", ladder_step="0.05")
    user = make_user()
    caller = Caller(make_token(user))
    released = platform.submit(caller, phase_id, csv_file(all_yes_but(items, 40)))
    held = platform.submit(caller, phase_id, csv_file(all_yes_but(items, 42)))
    browser = app.test_client()
    login(browser, user)
    page = browser.get(f"/submissions/{held}").get_data(as_text=True)
    section = page[page.index('class="my-entries"'):page.index("</section>", page.index('class="my-entries"'))]
    assert f'href="/submissions/{released}"' in section and "this one" not in section
    exact = platform.client.get(f"/api/v1/submissions/{held}", headers=caller.headers).get_json()
    shown = exact["scores"]["feedback"]["shown"]
    assert re.search(rf">{shown:.4f}<", section), "the entry shows the ladder's released value"
