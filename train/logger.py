"""One row of training statistics per update, to TensorBoard (``tb/``) and ``progress.csv``."""

from __future__ import annotations

import csv
from pathlib import Path
from types import TracebackType

TRAIN_FIELDS = ["decisions", "updates", "minutes", "decisions_per_s", "pg_loss", "v_loss", "entropy", "approx_kl",
                "clipfrac", "mean_match_reward"]


class Logger:
    """Writes each update's row to TensorBoard and to ``progress.csv`` (flushed, so a killed run keeps its rows).

    ``resume_at=(updates, decisions)`` continues a run from the checkpoint taken at that point: the rows
    logged after it are dropped from the CSV and hidden in TensorBoard, because the resumed run redoes
    those updates (each update is then logged exactly once).
    """

    def __init__(self, out: Path, eval_keys: list[str], resume_at: tuple[int, int] | None = None):
        from torch.utils.tensorboard import SummaryWriter

        self.fields = TRAIN_FIELDS + eval_keys
        purge_step = None if resume_at is None else resume_at[1] + 1  # TensorBoard hides steps >= this
        self.writer = SummaryWriter(str(out / "tb"), purge_step=purge_step)
        csv_path = out / "progress.csv"
        append = resume_at is not None and csv_path.exists()
        if append:
            keep_rows_up_to(csv_path, self.fields, resume_at[0])
        self.csv_file = open(csv_path, "a" if append else "w", newline="")
        self.csv = csv.DictWriter(self.csv_file, fieldnames=self.fields)
        if not append:
            self.csv.writeheader()

    def log(self, row: dict[str, float], step: int) -> None:
        """``train/KEY`` (or ``KEY`` when it has a group, e.g. ``eval/...``) at ``step`` decisions; a CSV row."""
        for key, value in row.items():
            self.writer.add_scalar(key if "/" in key else f"train/{key}", value, step)
        self.csv.writerow(row)
        self.csv_file.flush()

    def close(self) -> None:
        self.writer.close()
        self.csv_file.close()

    def __enter__(self) -> Logger:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def keep_rows_up_to(csv_path: Path, fields: list[str], updates: int) -> None:
    """Rewrite the CSV without the rows of updates after ``updates`` (the checkpoint a resume continues from)."""
    with open(csv_path, newline="") as f:
        kept = [row for row in csv.DictReader(f) if int(row["updates"]) <= updates]
    with open(csv_path, "w", newline="") as f:
        rewrite = csv.DictWriter(f, fieldnames=fields)
        rewrite.writeheader()
        rewrite.writerows(kept)
