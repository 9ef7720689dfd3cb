"""An archive is read with the safe zip reader (docs/ORGANIZING.md): a zip bomb, an escaping path, a missing
manifest key and a bad JSON line are refused with a message naming the member (and line), nothing imported."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select

from leaderboard.accounts import OPERATOR
from leaderboard.models import Competition, Phase
from leaderboard.operations import export_competition, import_archive
from leaderboard.platform import InvalidInput

BOMB_BYTES = 3 << 30  # 3 GiB of zeros
BOMB_MEMBER = "phases/1/labels-v1.jsonl"


@pytest.fixture
def archived(ctx, make_phase, make_competition, make_user, make_predictions) -> bytes:
    """Return the exported archive of a small competition: one phase, one scored upload."""
    from leaderboard.submissions import accept_submission

    competition = make_competition("kept", title="Kept benchmark")
    phase = make_phase(competition, max_per_day="unlimited")
    accept_submission(ctx, phase_id=phase.id, user=make_user(display_name="Ana"), filename="p.csv",
                      stream=io.BytesIO(make_predictions(wrong=1)))
    _, chunks = export_competition(ctx, slug="kept", actor=OPERATOR)
    return b"".join(chunks)


def rewritten(data: bytes, path: Path, change: Callable[[str, bytes], bytes | None],
              extra: Callable[[zipfile.ZipFile], None] | None = None) -> Path:
    """Write a copy of an archive with each member changed (None drops it) and extra members added."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in archive.namelist():
            body = change(name, archive.read(name))
            if body is not None:
                out.writestr(name, body)
        if extra is not None:
            extra(out)
    return path


def write_bomb(out: zipfile.ZipFile) -> None:
    """Stream 3 GiB of zeros into the archive as BOMB_MEMBER, 16 MiB at a time (never all in memory)."""
    info = zipfile.ZipInfo(BOMB_MEMBER)
    info.compress_type = zipfile.ZIP_DEFLATED
    zeros = bytes(16 << 20)
    with out.open(info, "w", force_zip64=True) as member:
        for _ in range(BOMB_BYTES // len(zeros)):
            member.write(zeros)


def count(ctx, model) -> int:
    return ctx.session.scalar(select(func.count()).select_from(model))


def refusal(ctx, source: Path, slug: str = "copy") -> str:
    """Import an archive that must be refused; return the message, checking nothing was left behind."""
    competitions, phases = count(ctx, Competition), count(ctx, Phase)
    with pytest.raises(InvalidInput) as refused:
        import_archive(ctx, source=source, actor=OPERATOR, slug=slug)
    assert (count(ctx, Competition), count(ctx, Phase)) == (competitions, phases)
    return refused.value.message


def test_a_zip_bomb_is_refused_naming_its_member(ctx, archived, tmp_path) -> None:
    bomb = rewritten(archived, tmp_path / "bomb.zip", lambda name, body: None if name == BOMB_MEMBER else body,
                     extra=write_bomb)
    assert bomb.stat().st_size < 50 << 20  # the compressed bomb is small, what it declares is not
    with zipfile.ZipFile(bomb) as check:
        assert check.getinfo(BOMB_MEMBER).file_size == BOMB_BYTES
    message = refusal(ctx, bomb)
    assert BOMB_MEMBER in message and "too large" in message


def test_a_path_leaving_the_archive_is_refused(ctx, archived, tmp_path) -> None:
    escape = rewritten(archived, tmp_path / "escape.zip", lambda name, body: body,
                       extra=lambda out: out.writestr("../../etc/cron.d/evil", b"* * * * * root true\n"))
    message = refusal(ctx, escape)
    assert "../../etc/cron.d/evil" in message and "refused" in message


def test_a_missing_manifest_key_names_the_member_and_key(ctx, archived, tmp_path) -> None:
    def drop_teams(name: str, body: bytes) -> bytes:
        if name != "manifest.json":
            return body
        manifest = json.loads(body)
        del manifest["phases"][0]["max_total"]
        return json.dumps(manifest, indent=1).encode()

    message = refusal(ctx, rewritten(archived, tmp_path / "keyless.zip", drop_teams))
    assert "manifest.json: missing key 'phases[0].max_total'" in message


def test_a_bad_json_line_names_the_member_and_line(ctx, archived, tmp_path, runner) -> None:
    def break_second_score(name: str, body: bytes) -> bytes:
        if name != "phases/1/scores.jsonl":
            return body
        lines = body.decode().splitlines()
        assert len(lines) >= 2  # the baselines' scores and the upload's
        lines[1] = lines[1][:-5]
        return ("\n".join(lines) + "\n").encode()

    broken = rewritten(archived, tmp_path / "broken.zip", break_second_score)
    assert "phases/1/scores.jsonl line 2: not valid JSON" in refusal(ctx, broken)
    result = runner.invoke(args=["competitions", "import-archive", str(broken), "--slug", "cli-copy",
                                 "--operator-only"])
    assert result.exit_code == 1
    assert "phases/1/scores.jsonl line 2" in result.output and "Traceback" not in result.output


def test_the_untouched_archive_still_imports(ctx, archived, tmp_path) -> None:
    same = rewritten(archived, tmp_path / "same.zip", lambda name, body: body)
    copy = import_archive(ctx, source=same, actor=OPERATOR, slug="copy")
    assert [p.name for p in copy.phases] == ["Phase 1"] and copy.phases[0].n_items > 0
