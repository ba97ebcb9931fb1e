"""Hashes and sketches of one collected submission for the cohort-wide steps, made in its own unit.

The flags (``autograder.collecting.flags``) compare students with each other, and the re-runs of
both graders tell an unchanged submission by its bytes. Neither reads a submission in the driver,
where one hostile file could stop the whole class: each student's collect unit computes these
prints of its own copy, and the driver compares prints. The runs' prints (``run_prints``: sketches
of the params' weights, hashed answers, recorded seeds) let it find a run copied with small changes.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.collecting.run_prints import ParamsSketch, hash_predictions, recorded_seed, sketch_params
from autograder.collecting.safe_files import CHUNK, digest_files
from autograder.inside import bounded_json

OUTPUTS = "outputs"  # the run files' folder in a collected copy


@dataclass(frozen=True)
class Prints:
    """One collected submission's fingerprints."""

    # notebook -> hash of its cells' types and sources (None: unreadable)
    notebooks: tuple[tuple[str, str | None], ...]
    run_files: tuple[tuple[str, str], ...]  # outputs/ file -> sha256 of its bytes
    digest: str  # sha256 of every copied file's name, size and bytes ("" for no copy)
    params: tuple[tuple[str, ParamsSketch], ...] = ()  # params file -> its sketch, if readable
    answers: tuple[tuple[str, bytes], ...] = ()  # predictions file -> line hashes (if UTF-8)
    seeds: tuple[tuple[str, int], ...] = ()  # outputs/ run log -> the seed it records (if any)


def notebook_fingerprint(data: bytes) -> str | None:
    """Hash of a notebook's cell types and sources (not outputs or metadata); None if unreadable."""
    try:
        cells = bounded_json.loads(data).get("cells")
        text = json.dumps([[c.get("cell_type"), "".join(c.get("source", "")) if isinstance(c.get("source"), list)
                            else c.get("source")] for c in cells])
    except (ValueError, AttributeError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def file_hash(path: Path) -> str:
    """The sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def copied_files(folder: Path | None) -> list[tuple[str, Path]]:
    """(relative name, path) of each file of a collected copy (all regular files), sorted."""
    if folder is None:
        return []
    return sorted((p.relative_to(folder).as_posix(), p) for p in folder.rglob("*") if p.is_file())


def prints_of(folder: Path | None) -> Prints:
    """The prints of a collected copy (the grader's own files: regular, capped in size)."""
    if folder is None:
        return Prints((), (), "")
    digest = hashlib.sha256()
    digest_files(digest, copied_files(folder))
    notebooks = tuple((p.name, notebook_fingerprint(p.read_bytes())) for p in sorted(folder.glob("*.ipynb")))
    outputs = sorted((folder / OUTPUTS).glob("*"))
    runs = tuple((p.name, file_hash(p)) for p in outputs)
    params = tuple((p.name, sketch) for p in outputs if p.suffix == ".params" and (sketch := sketch_params(p)))
    answers = tuple((p.name, lines) for p in outputs if p.suffix == ".predictions"
                    and (lines := hash_predictions(p)) is not None)
    seeds = tuple((p.name, seed) for p in outputs if p.suffix == ".json" and (seed := recorded_seed(p)) is not None)
    return Prints(notebooks, runs, digest.hexdigest(), params, answers, seeds)
