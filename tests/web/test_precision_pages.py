"""The submission page says coarse figures are shown to the precision their sample supports (participants only)."""

from __future__ import annotations

import io

from leaderboard.submissions import accept_submission

SENTENCE = "Figures marked ± are coarse: shown to the precision their sample supports"


def test_a_participant_reads_the_precision_sentence_above_the_breakdowns(ctx, client, make_phase, make_user,
                                                                          login, make_predictions) -> None:
    phase, user = make_phase(config={"task_type": "binary", "min_slice_items": 1}), make_user()
    submission = accept_submission(ctx, phase_id=phase.id, user=user, filename="p.csv",
                                   stream=io.BytesIO(make_predictions(wrong=1)))
    login(client, user)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    assert SENTENCE in page and page.index("Scores") < page.index(SENTENCE) < page.index("By category")


def test_organizers_see_exact_breakdowns_without_the_sentence(ctx, client, make_phase, make_competition, make_user,
                                                              make_organizer, login, make_predictions) -> None:
    organizer = make_organizer()
    phase = make_phase(make_competition(created_by=organizer), config={"task_type": "binary", "min_slice_items": 1})
    submission = accept_submission(ctx, phase_id=phase.id, user=make_user(), filename="p.csv",
                                   stream=io.BytesIO(make_predictions(wrong=1)))
    login(client, organizer)
    page = client.get(f"/submissions/{submission.id}").get_data(as_text=True)
    assert "By category" in page and SENTENCE not in page
