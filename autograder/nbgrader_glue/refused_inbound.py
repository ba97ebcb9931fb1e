"""``python -m autograder inbound [--remove]``: list (and take out) the entries collect refuses.

Run by the instructor in the course folder, as nbgrader's own commands are (it reads the same
nbgrader config: the exchange's root, the course id, ``check_owner``). Listing needs only
what collect needs. Removing needs no root either: ``inbound/`` is the instructor's folder (made
by their release), so they may take any entry out of it. An entry whose inside they cannot
delete (its owner keeps it read-only, as ``nbgrader submit`` does with its subfolders) is renamed
to a hidden name in ``inbound/``, which no collect ever reads; its bytes stay its owner's until
that owner or root deletes them.
"""
from __future__ import annotations

import os
import shutil
import uuid

REMOVED_PREFIX = ".removed+"  # hidden: nbgrader's collect and judge_inbound never read it


def remove_entry(inbound: str, name: str) -> str:
    """Take one entry out of ``inbound``: deleted if its owner allows, else renamed out of every
    collect's sight; what was done, in a line."""
    path = os.path.join(inbound, name)
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
        return "deleted"
    except OSError:
        hidden = os.path.join(inbound, f"{REMOVED_PREFIX}{uuid.uuid4().hex}")
        os.rename(path, hidden)  # the folder is ours: renaming in it needs no right on the entry
        return f"taken out of collect's sight as {os.path.basename(hidden)} (its owner or root can delete its files)"


def inside_refusals(inbound: str, records: list, check_owner: bool) -> list:
    """The chosen submissions whose insides collect would refuse (another's file, an unreadable
    folder), judged in units as collect judges them."""
    from autograder.nbgrader_glue.exchange import COLLECT_STEP
    from autograder.nbgrader_glue.inbound import inside_problem, refused_inside
    from autograder.units.stage import outcomes

    done = outcomes(COLLECT_STEP, len(records), lambda i: (inside_problem, (
        os.path.join(inbound, records[i].name), records[i], check_owner)), workers=2)
    refusals = []
    for record, outcome in zip(records, done):
        why = outcome.value if outcome.ok else outcome.failure
        if why:
            refusals.append(refused_inside(record, why))
    return refusals


def main(assignment: str, remove: bool) -> int:
    """List (with ``remove``, take out) ``assignment``'s refused inbound entries; exit status."""
    from nbgrader.apps.collectapp import CollectApp
    from nbgrader.auth import Authenticator
    from nbgrader.exchange import ExchangeFactory

    from autograder.nbgrader_glue.exchange import OwnedCollect

    app = CollectApp.instance()
    app.initialize([])  # nbgrader's own start: its config files, as `nbgrader collect` reads them
    app.coursedir.assignment_id = assignment
    # what nbgrader's start sets up before its collect (without collecting)
    exchange = ExchangeFactory(parent=app)
    collect = exchange.Collect(coursedir=app.coursedir, authenticator=Authenticator(parent=app), parent=app)
    if not isinstance(collect, OwnedCollect):
        print("error: the course's nbgrader config does not collect with autograder.nbgrader_glue.exchange."
              "OwnedCollect (configure_grading sets it)")
        return 2
    inbound = os.path.join(collect.root, app.coursedir.course_id, "inbound")
    if not os.path.isdir(inbound):
        print(f"error: no exchange inbound folder at {inbound}")
        return 2
    collect.init_src()  # collect's own judging of the names and choice of each student's submission
    refusals = collect.refusals + inside_refusals(inbound, collect.src_records, collect.check_owner)
    print(f"{len(refusals)} refused inbound entr{'y' if len(refusals) == 1 else 'ies'} of {assignment} in {inbound}")
    for refusal in refusals:
        print(f"  {refusal.entry}  claims {refusal.claimed}, owned by {refusal.owner}: {refusal.why}")
    if remove:
        for refusal in refusals:
            print(f"  {refusal.entry}: {remove_entry(inbound, refusal.raw)}")
    return 0
