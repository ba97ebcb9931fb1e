"""Notebook execution for tests: nbclient, without its stand-in for the Output widget.

nbclient mimics a frontend's Output widget by sending comm messages on the shell
channel from the coroutine that reads IOPub, while another coroutine waits on that
same socket for the cell's execute_reply. Under load the waiting poll can miss the
reply's wake-up and sleep until the cell's timeout, then go on as if nothing had
happened (nbclient issue #312): the 07 notebook's interact cell took 40 s of a 40 s
timeout in four runs of six beside two busy processes, 3 s with the stand-in off.
The tests look at what cells print and raise, never at widget state, so it is off.
"""
from __future__ import annotations

from nbclient import NotebookClient


def notebook_client(nb, **kwargs) -> NotebookClient:
    """A NotebookClient for ``nb`` that leaves Output widgets to the kernel (no comm messages sent back)."""
    client = NotebookClient(nb, **kwargs)
    client.widget_registry = {}
    return client
