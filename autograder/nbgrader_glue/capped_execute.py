"""nbgrader's Execute with a cap on the bytes of output a notebook's kernel sends back.

nbgrader's own ``LimitOutput`` counts lines, after the run: a cell writing megabyte-long lines can
fill the nbgrader process, the autograded notebook and its feedback page with gigabytes. Here
each output message is counted as it arrives; past ``max_output_bytes`` for the notebook the rest
is dropped and the cell gets one line saying so. Its kernels start and stop without jupyter_client's fixed waits
(``quick_kernel``).
"""
from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Integer

from autograder.nbgrader_glue.quick_kernel import QuickKernelManager


def _size(content: dict) -> int:
    """The bytes an output message would add to the notebook (its text, data and traceback)."""
    size = len(content.get("text") or "")
    for value in (content.get("data") or {}).values():
        size += len(value) if isinstance(value, str) else len(str(value))
    size += sum(len(line) for line in content.get("traceback") or [])
    return size


class CappedExecute(Execute):
    """Execute, keeping at most ``max_output_bytes`` of a notebook's outputs."""

    max_output_bytes = Integer(16 * 2 ** 20, help="outputs kept of one notebook, in bytes").tag(config=True)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", QuickKernelManager)  # before nbgrader's own default
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, *args, **kwargs):
        """Execute the notebook with a fresh byte count."""
        self._output_bytes = 0
        self._cut_cells: set[int] = set()
        return super().preprocess(nb, resources, *args, **kwargs)

    def output(self, outs, msg, display_id, cell_index):
        """Count an output's bytes; past the cap, drop it (the cell's first drop gets a line)."""
        if msg.get("msg_type") in ("stream", "display_data", "execute_result", "error"):
            self._output_bytes += _size(msg.get("content") or {})
            if self._output_bytes > self.max_output_bytes:
                if cell_index not in self._cut_cells:
                    self._cut_cells.add(cell_index)
                    outs.append(NotebookNode(output_type="stream", name="stdout", text=(
                        f"[grader] output cut: this notebook's outputs passed {self.max_output_bytes // 2 ** 20} MB; "
                        "the rest was not kept\n")))
                return None
        return super().output(outs, msg, display_id, cell_index)
