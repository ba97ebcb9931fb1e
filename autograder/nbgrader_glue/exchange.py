"""nbgrader's collect, copying what students put in the exchange without following their links.

Students can write in the exchange's ``inbound/`` by hand, not only through ``nbgrader submit``.
nbgrader's own collect copies with ``shutil.copytree``, which follows links: a link named like a run
file and pointing at the grader's test answers (or a classmate's notebook) became a regular file in
``submitted/``, which the collect step then took for the student's own. Here links are copied as links
(the collect step drops every link, with a reason), special files (FIFOs, sockets, devices) are left
out, and a submission folder that is itself a link is not collected at all.
"""
from __future__ import annotations

import os
import shutil
import stat

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import ignore_patterns


class LinkSafeCollect(ExchangeCollect):
    """``nbgrader collect`` (and formgrader's Collect) that never reads through a student's link."""

    def do_copy(self, src, dest, log=None):
        if os.path.islink(src):
            self.log.error("Not collecting %s: the submission folder is a link", os.path.basename(src))
            return
        if self.get_size(src) > 1000 * self.coursedir.max_dir_size:  # nbgrader's own cap (get_size skips links)
            raise RuntimeError(f"Directory size is too big; maximum size is {1000 * self.coursedir.max_dir_size}")
        nbgraders = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                    max_file_size=self.coursedir.max_file_size, log=self.log)

        def ignore(directory, names):
            left_out = set(nbgraders(directory, names))
            for name in names:
                mode = os.lstat(os.path.join(directory, name)).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                    self.log.warning("Not collecting %s: not a file", os.path.join(os.path.basename(src), name))
                    left_out.add(name)
            return left_out

        shutil.copytree(src, dest, symlinks=True, ignore=ignore)
        if self.coursedir.groupshared:  # nbgrader's own step after its copy, never through a link
            for dirname, _, filenames in os.walk(dest):
                self._share(dirname, 0o2770, 0o2777)
                for name in filenames:
                    if not os.path.islink(os.path.join(dirname, name)):
                        self._share(os.path.join(dirname, name), 0o660, 0o777)

    def _share(self, path: str, bits: int, keep: int) -> None:
        mode = os.lstat(path).st_mode
        if mode & bits != bits:
            try:
                os.chmod(path, (mode | bits) & keep)
            except PermissionError:
                self.log.warning("Could not update permissions of %s to make it groupshared", path)
