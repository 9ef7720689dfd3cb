"""How long a web process takes to load a board view's new version (docs/RANKING.md#reads-under-a-rush).

Runs on a world the deadline bench kept: ``bench/deadline_bench.py --rows anon --keep``
prints its run folder; pass the backend's folder in it (``<run folder>/postgres`` or
``<run folder>/sqlite``). Loads the first view of the open board ``--repeat`` times from
nothing and from the version before with ``--changed`` of its scores new (their cells read
again, as after a refresh that re-scored them), prints the medians and checks that both
loads give the same rows.

Usage: .venv/bin/python bench/view_load.py FOLDER [--repeat 20] [--changed 0]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from leaderboard.board import BoardQuery, board_changed, ranking  # noqa: E402
from leaderboard.board import read as board_read  # noqa: E402
from leaderboard.board.layout import cached_layout  # noqa: E402
from leaderboard.models import BoardRow  # noqa: E402
from leaderboard.platform import Settings, build_runtime  # noqa: E402
from leaderboard.submissions import score_submission  # noqa: E402


def main() -> int:
    """Time the loads and print them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a backend folder of a kept deadline-bench run")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--changed", type=int, default=0, help="scores taken as new in the earlier load")
    args = parser.parse_args()
    url = (args.folder / "database_url").read_text().strip()
    env = {"DATABASE_URL": url, "SECRET_KEY": "bench", "TAILBOARD_DATA_DIR": str(args.folder / "data")}
    runtime = build_runtime(Settings.from_env(env), score=score_submission, board_changed=board_changed)
    with runtime.sessions() as session:
        ctx = runtime.context(session)
        phase_id = session.scalar(select(BoardRow.phase_id).limit(1))
        if phase_id is None:
            parser.error(f"no board rows in {url}")
        answer = ranking.leaderboard(ctx, phase_id=phase_id, query=BoardQuery())
        columns = cached_layout(ctx, answer.phase).columns(0)

        def load(earlier: board_read.LoadedView | None) -> tuple[float, board_read.LoadedView]:
            started = time.perf_counter()
            with runtime.sessions() as own:
                loaded = board_read._load(runtime.context(own), phase_id=phase_id, board=answer.board, view=0,
                                          version=answer.version, columns=columns, earlier=earlier)
            return (time.perf_counter() - started) * 1000, loaded

        _, whole = load(None)
        earlier = replace(whole, with_cells=frozenset(sorted(whole.with_cells)[args.changed:]))
        alone = [load(None)[0] for _ in range(args.repeat)]
        reused = [load(earlier)[0] for _ in range(args.repeat)]
        same = load(earlier)[1].rows == whole.rows
    print(f"{len(whole.rows)} rows, {len(columns)} columns on {url.split(':', 1)[0]}: from nothing median "
          f"{statistics.median(alone):.1f} ms; from the version before with {args.changed} scores new median "
          f"{statistics.median(reused):.1f} ms; same rows: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
