"""How fast a patient attacker reads labels out of one coarse breakdown row (docs/PROBING.md, "What is left").

The attacker answers every item of a row yes, and in each upload answers a random half of
k target items no instead; the row's shown accuracy is its exact accuracy on the row's
grid with fresh noise (disclosure/precision.py's on_grid and noise: every change of the file's
answers draws it anew). A least-squares fit of the readings on the design gives each target's
effect (-1/n: the target was true, +1/n: false). Prints, per number of uploads, how many
targets the fit gets right, and how many it claims with |t| > 3 (wrong ones too).

    .venv/bin/python bench/slice_regression_attack.py [--n 111] [--k 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from leaderboard.disclosure.precision import grid_for, noise, on_grid


def run(*, n: int, k: int, uploads: list[int], seed: int) -> list[tuple[int, int, int, int]]:
    """Return (uploads, right signs, confident claims, confident wrong) for each number of uploads."""
    rng = random.Random(seed)
    labels = [rng.random() < 0.5 for _ in range(k)]
    base_correct = sum(rng.random() < 0.5 for _ in range(n - k)) + sum(labels)  # everything answered yes
    effect = np.array([-1.0 if label else 1.0 for label in labels]) / n  # answering a target no
    grid = grid_for(n)
    rows, readings, out = [], [], []
    for upload in range(1, max(uploads) + 1):
        design = np.array([rng.random() < 0.5 for _ in range(k)], dtype=float)
        exact = base_correct / n + float(design @ effect)
        rows.append(design)
        readings.append(on_grid(exact, grid=grid, noise=noise("bench", "row", rng.random())))
        if upload in uploads:
            x = np.column_stack([np.ones(upload), np.array(rows)])
            fit, residual, *_ = np.linalg.lstsq(x, np.array(readings), rcond=None)
            sigma2 = float(residual[0]) / max(upload - k - 1, 1) if len(residual) else grid ** 2 / 6
            se = np.sqrt(np.clip(np.diag(np.linalg.pinv(x.T @ x)) * sigma2, 1e-18, None))[1:]
            guess = fit[1:] < 0  # a negative effect: the target was true
            right = int(sum(g == label for g, label in zip(guess, labels, strict=True)))
            confident = np.abs(fit[1:] / se) > 3
            wrong = int(sum(c and g != label for c, g, label in zip(confident, guess, labels, strict=True)))
            out.append((upload, right, int(confident.sum()), wrong))
    return out


def main() -> None:
    """Print the attack's progress for a row of n answered items and k targets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=111)
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"row of {args.n} answered items, grid {grid_for(args.n)}, {args.k} targets (chance: {args.k / 2:.0f} right)")
    for upload, right, confident, wrong in run(n=args.n, k=args.k, uploads=[25, 50, 100, 200, 400, 800],
                                               seed=args.seed):
        print(f"{upload:5d} uploads: {right:3d}/{args.k} signs right; {confident:3d} claimed at |t| > 3, {wrong} wrong")


if __name__ == "__main__":
    main()
