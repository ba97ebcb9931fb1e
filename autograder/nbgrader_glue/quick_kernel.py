"""nbgrader's autograde kernels, started and stopped without jupyter_client's fixed waits.

Once a kernel answers ``kernel_info``, jupyter_client's client waits for one IOPub message (0.2 s at most) to know
IOPub is connected, then for 0.2 s of silence on IOPub to flush it; its manager polls a stopping kernel every 0.1 s.
That is about 0.4 s a notebook of waiting with nothing running, over 3 s a student of eight notebooks
(benchmarks/FINDINGS.md). Here the client is ready once IOPub has carried the *idle* status of the very request the
kernel answered last: IOPub is one ordered stream, so everything the kernel published before it (the start, earlier
``kernel_info`` requests) has arrived, and is dropped, as jupyter_client's flush drops it; the manager polls a
stopping kernel every 10 ms. A kernel whose IOPub is not connected yet is asked again, as jupyter_client does, but
after 20 ms first (then 40, 80 and up to jupyter_client's 200).
"""
from __future__ import annotations

import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager, KernelManager
from traitlets import DottedObjectName, Type

# how long IOPub may take to carry the answered request's idle before the kernel is asked again: a kernel's first
# answer usually comes before the client's IOPub has connected (its status is then lost), so the first wait is short,
# and each next one twice as long, up to jupyter_client's 0.2 s (a slow machine still gets there)
FIRST_IOPUB_SECONDS, IOPUB_SECONDS = 0.02, 0.2
SHELL_SECONDS = 1.0  # jupyter_client's wait for the kernel_info reply, before asking again
STOP_POLL_SECONDS = 0.01  # how often a stopping kernel is polled (jupyter_client: 0.1)


def _is_idle(message: dict) -> bool:
    """Is ``message`` IOPub's idle status of a request (one with a parent)?"""
    return (message.get("msg_type") == "status" and message.get("content", {}).get("execution_state") == "idle"
            and bool(message.get("parent_header", {}).get("msg_id")))


def _is_idle_of(message: dict, msg_id: str | None) -> bool:
    """Is ``message`` IOPub's idle status of the request ``msg_id``?"""
    return _is_idle(message) and msg_id is not None and message["parent_header"]["msg_id"] == msg_id


class ReadyKernelClient(AsyncKernelClient):
    """The async client, ready as soon as IOPub has delivered the idle status of the last request the kernel
    answered."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        if not isinstance(self.parent, KernelManager):  # a kernel of no manager: heartbeats first, jupyter_client's way
            return await super()._async_wait_for_ready(timeout)
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        iopub_seconds = FIRST_IOPUB_SECONDS
        idle: set[str] = set()  # the requests whose idle status IOPub carried
        while True:
            # only the latest request counts: an earlier one's reply and status come before its own, and are dropped,
            # so nothing of them is left for the first cell
            msg_id = self.kernel_info()
            reply = await self._reply_to(msg_id)
            if reply is not None:
                if await self._idle_seen(msg_id, iopub_seconds, idle):
                    self._handle_kernel_info_reply(reply)
                    break
                iopub_seconds = min(2 * iopub_seconds, IOPUB_SECONDS)
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")
        while True:  # what IOPub holds already: nothing of the kernel's comes after that idle unasked
            try:
                await self.iopub_channel.get_msg(timeout=0)
            except Empty:
                return None

    wait_for_ready = _async_wait_for_ready

    async def _reply_to(self, msg_id: str) -> dict | None:
        """The kernel's reply to ``msg_id`` within ``SHELL_SECONDS`` (earlier requests' replies dropped), or None."""
        until = time.monotonic() + SHELL_SECONDS
        while (left := until - time.monotonic()) > 0:
            try:
                reply = await self.shell_channel.get_msg(timeout=left)
            except Empty:
                return None
            if reply.get("parent_header", {}).get("msg_id") == msg_id and reply["msg_type"] == "kernel_info_reply":
                return reply
        return None

    async def _idle_seen(self, msg_id: str, seconds: float, idle: set[str]) -> bool:
        """Has IOPub carried the idle status of ``msg_id``, before or within ``seconds``? Every idle status read is
        added to ``idle``; whatever else IOPub carried meanwhile is dropped."""
        until = time.monotonic() + seconds
        while msg_id not in idle and (left := until - time.monotonic()) > 0:
            try:
                message = await self.iopub_channel.get_msg(timeout=left)
            except Empty:
                return False
            if _is_idle(message):
                idle.add(message["parent_header"]["msg_id"])
        return msg_id in idle


class QuickKernelManager(AsyncKernelManager):
    """The async manager, with ``ReadyKernelClient`` and a stopping kernel polled every ``STOP_POLL_SECONDS``."""

    client_class = DottedObjectName(f"{__name__}.{ReadyKernelClient.__name__}", config=True)
    client_factory = Type(ReadyKernelClient, klass=AsyncKernelClient, config=True)  # what ``client()`` makes

    async def _async_wait(self, pollinterval: float = STOP_POLL_SECONDS) -> None:
        await super()._async_wait(pollinterval=min(pollinterval, STOP_POLL_SECONDS))
