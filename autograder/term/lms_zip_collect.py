"""nbgrader zip_collect's extractor, the course's way: each student's files taken in their own unit, safely.

nbgrader's own extractor unzips every archive of ``downloaded/<assignment>/archive/`` (and the zips
inside them) in the instructor's process with ``zipfile``'s rules. ``SafeExtractor`` reads each LMS
download there (a zip whose name is no student's, or the folder's loose files) as the course's intake
does (``autograder.term.lms_intake``): listed in a unit, grouped by student with the collector's
regexp, each student's files (a zip of ``a5/`` opened below its own name) written in that student's
unit, within the same limits; a second copy of one file of a student is left out, so nbgrader's collect
never stops on it. A download whose files no hand-in name matches stops the command with an error that
says why, instead of nbgrader's "0 files collected" and success. The LMS's late marks go to the course's
``lms_intake.csv``, as the intake's do.
"""
from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from nbgrader.plugins import ExtractorPlugin

from autograder.collecting.safe_files import shown
from autograder.term import lms
from autograder.term.lms_intake import LISTING, TAKING, list_download, take
from autograder.units.stage import outcomes


class SafeExtractor(ExtractorPlugin):
    """Each download of the archive folder, each student in a unit, their files at their paths."""

    def extract(self, archive_path: str, extracted_path: str) -> None:
        """nbgrader's step: the archive folder's hand-ins into the extracted folder; fail when none matches."""
        app = self.parent
        collector = app.collector_plugin_inst
        pattern = collector.pattern()
        assignment = app.coursedir.assignment_id
        roster = lms.roster(app.coursedir.db_url)
        names = sorted(os.listdir(archive_path)) if os.path.isdir(archive_path) else []
        lms_zips = {n for n in names if n.lower().endswith(".zip") and not pattern.fullmatch(n)}
        downloads = [os.path.join(archive_path, n) for n in sorted(lms_zips)]
        if len(lms_zips) < len(names):  # loose hand-ins (a student's zip among them) beside the LMS's zips
            downloads.append(archive_path)
        taken, records = 0, []
        for download in downloads:
            listed, = outcomes(LISTING, 1, lambda _: (list_download, (download,)))
            if not listed.ok:
                app.fail(f"{shown(os.path.basename(download))} could not be listed: {listed.failure}")
            paths = [p for p in listed.value if download != archive_path or p not in lms_zips]
            hand_ins, unmatched = lms.group(paths, pattern, roster)
            for path in unmatched[:20]:
                self.log.warning("Not a hand-in (its path matches no hand-in name): %s", shown(path))
            taken += self._take_all(download, hand_ins, Path(extracted_path), assignment, pattern)
            records += [lms.IntakeRecord(assignment, h.student, "zip_collect", h.lms_user_id, h.late,
                                         f"{h.timestamp:%Y-%m-%d %H:%M:%S} UTC" if h.timestamp else "",
                                         len(h.entries)) for h in hand_ins]
        if not taken:
            app.fail(f"no file in {archive_path} matches the hand-in names: the regexp {pattern.pattern!r} "
                     "(c.LmsFileNames.named_regexp) must match each file's whole path below the download")
        lms.write_intake(Path(app.coursedir.root), records)

    def _take_all(self, download: str, hand_ins: list[lms.HandIn], extracted: Path, assignment: str,
                  pattern) -> int:
        """Each student's files in their unit, then moved to their paths below ``extracted``; files taken."""
        staging = extracted.parent / f".extracting-{uuid.uuid4().hex[:8]}"
        known, count = lms.known_names(assignment), 0
        try:
            done = outcomes(TAKING, len(hand_ins), lambda i: (take, (download, hand_ins[i].entries,
                                                                     str(staging / str(i)), assignment, True)),
                            workers=2)
            for i, (hand_in, outcome) in enumerate(zip(hand_ins, done)):
                if not outcome.ok:
                    self.log.error("NOT taken: %s's files: %s", shown(hand_in.student), outcome.failure)
                    continue
                for note in outcome.value.notes:
                    self.log.warning("%s: left out: %s", shown(hand_in.student), note)
                placed: set[str] = set()
                for rel in outcome.value.files:  # a student's zip first: a loose second copy is left out
                    match = pattern.fullmatch(rel)
                    where = lms.place((match["file"] if match else rel).split("/"), assignment, known)
                    if where in placed or (extracted / rel).exists():
                        self.log.warning("%s: left out: a second %s (%s)", shown(hand_in.student), shown(where),
                                         shown(rel))
                        continue
                    placed.add(where)
                    os.renames(staging / str(i) / rel, extracted / rel)
                    count += 1
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return count
