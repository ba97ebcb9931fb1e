"""Tests for autograder/nbgrader_glue/quick_kernel.py: nbgrader's kernels without jupyter_client's fixed waits."""
from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import AsyncKernelManager

from autograder.nbgrader_glue import quick_kernel
from autograder.nbgrader_glue.capped_execute import CappedExecute

KERNEL = "python3"  # the environment's own ipykernel: the client's waits do not depend on the kernel


async def _first_messages(manager_class, code: str) -> tuple[float, list[dict], dict]:
    """(seconds to ready, IOPub's messages up to the idle of ``code``'s request, its reply) of a new kernel."""
    km = manager_class(kernel_name=KERNEL)
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        start = time.monotonic()
        await kc.wait_for_ready(timeout=60)
        ready = time.monotonic() - start
        msg_id = kc.execute(code)
        reply = await kc.get_shell_msg(timeout=30)
        seen = []
        while not seen or not quick_kernel._is_idle_of(seen[-1], msg_id):
            seen.append(await kc.get_iopub_msg(timeout=30))
        return ready, seen, reply
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()


def test_nbgraders_execute_starts_its_kernels_with_the_quick_manager_unless_configured_otherwise():
    """Does the autograde step's Execute use the quick manager and client, while a configured manager still wins?"""
    execute = CappedExecute()
    assert execute.kernel_manager_class is quick_kernel.QuickKernelManager
    assert execute.kernel_manager_class().client_factory is quick_kernel.ReadyKernelClient
    assert CappedExecute(kernel_manager_class=AsyncKernelManager).kernel_manager_class is AsyncKernelManager


@pytest.mark.parametrize("first_wait, shell_wait", [(quick_kernel.FIRST_IOPUB_SECONDS, quick_kernel.SHELL_SECONDS),
                                                     (0.0005, quick_kernel.SHELL_SECONDS), (0.0005, 0.05)])
def test_a_ready_kernels_first_cell_sees_only_its_own_messages(monkeypatch, first_wait, shell_wait):
    """Once the quick client says ready (with its own waits; with an IOPub wait far too short for IOPub to connect in;
    with a shell wait shorter than the kernel's start, so that it asks many times before the first answer), is
    IOPub flushed as jupyter_client flushes it: the first cell's messages, and nothing of the kernel's start or of
    the earlier requests before them, with the same outputs as under jupyter_client's own manager?"""
    monkeypatch.setattr(quick_kernel, "FIRST_IOPUB_SECONDS", first_wait)
    monkeypatch.setattr(quick_kernel, "SHELL_SECONDS", shell_wait)
    code = "import sys\nprint('hello')\nsys.stderr.write('careful\\n')\n6 * 7"

    def kinds(messages):
        return [(m["msg_type"], m["content"].get("execution_state") or m["content"].get("name")
                 or m["content"].get("data", {}).get("text/plain")) for m in messages]

    for _ in range(3):
        ready, quick, reply = asyncio.run(_first_messages(quick_kernel.QuickKernelManager, code))
        msg_id = reply["parent_header"]["msg_id"]
        assert reply["content"]["status"] == "ok" and reply["msg_type"] == "execute_reply" and ready < 60
        assert all(m["parent_header"].get("msg_id") == msg_id for m in quick), kinds(quick)
        assert kinds(quick)[0] == ("status", "busy") and kinds(quick)[-1] == ("status", "idle")
    _, theirs, _ = asyncio.run(_first_messages(AsyncKernelManager, code))
    assert kinds(quick) == kinds(theirs)


def test_the_idle_status_is_that_of_the_answered_request_only():
    """Is a status message taken as the answered request's idle only when it is idle and its parent is that
    request, never a busy status, another request's idle or a message without a parent?"""
    idle = {"msg_type": "status", "content": {"execution_state": "idle"}, "parent_header": {"msg_id": "a"}}
    assert quick_kernel._is_idle_of(idle, "a")
    assert not quick_kernel._is_idle_of(idle, "b") and not quick_kernel._is_idle_of(idle, None)
    assert not quick_kernel._is_idle_of({**idle, "content": {"execution_state": "busy"}}, "a")
    assert not quick_kernel._is_idle_of({**idle, "msg_type": "stream"}, "a")
    assert not quick_kernel._is_idle_of({**idle, "parent_header": {}}, "a")


def test_a_notebook_runs_through_the_quick_manager_as_through_jupyter_clients(tmp_path):
    """Does nbgrader's Execute, with the quick manager, give a notebook the same outputs as jupyter_client's manager,
    and stop each kernel (no kernel process left)?"""
    cells = ["print('one')", "import sys; sys.stderr.write('two\\n')", "3 + 4", "raise ValueError('five')",
             "print('after the error')", "import os; print(os.getpid())"]

    def run(manager):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        execute = CappedExecute(kernel_manager_class=manager, kernel_name=KERNEL, allow_errors=True, timeout=60)
        out, _ = execute.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
        return [[{k: v for k, v in o.items() if k != "traceback"} for o in c.outputs] for c in out.cells], execute

    quick, _ = run(quick_kernel.QuickKernelManager)
    theirs, _ = run(AsyncKernelManager)
    pid = int(quick[5][0]["text"])
    assert quick[:5] == theirs[:5]
    assert quick[0][0]["text"] == "one\n" and quick[3][0]["ename"] == "ValueError" and quick[4][0]["text"]
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
