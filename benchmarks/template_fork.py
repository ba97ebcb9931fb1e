"""What would a class-wide preloaded interpreter save, forked into each student's new sandbox? (issue 50 item 8)

Each student's kernel sandbox (``autograder.nbgrader_glue.zygote_server``) imports its preload anew, and so does each
probe job: about 3 and 2 CPU-s a student. This study measures, per sandbox, the CPU of two ways to reach the same
state, a preloaded interpreter as ``nobody`` in a sandbox of the course's own bubblewrap command line:

  fresh     what the grader does: bubblewrap runs ``python -I``, which imports the preload, then does a small piece of
            work (one AdamW step, which imports torch._dynamo when the preload has not)
  template  a root process that imported the preload once forks a child for each sandbox. bubblewrap makes the
            sandbox around a holder that runs no Python (``sleep``); the child opens the holder's namespaces, enters
            them (setns: IPC, UTS, network, cgroup, PID, mount), forks into the PID namespace, becomes nobody with no
            capabilities and no_new_privs (as setpriv does), and does the same work

Before the timings, a process made each way says what it sees (its uid, groups, capability sets, no_new_privs,
hostname, network devices, root folder, working folder, environment); the study fails when the two differ. The grader's
jobs and each student's kernel sandbox server now start this way (``autograder.confinement.template``). Run as root
on a machine with bubblewrap and setpriv:

    python benchmarks/template_fork.py --rounds 5 --preload kernel   (or --preload probe)
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# NAMESPACES: the namespaces bubblewrap makes, entered one by one here, the mount namespace last (entering it changes
# what /proc shows; the PID namespace takes effect for the next fork); and the prctl numbers the grader's template uses
from autograder.confinement import NOBODY, Limits, Mounts, bwrap_argv, status, template  # noqa: E402
from autograder.confinement.template_server import (  # noqa: E402
    LAST_CAP,
    NAMESPACES,
    PR_CAPBSET_DROP,
    PR_SET_NO_NEW_PRIVS,
)
from autograder.nbgrader_glue.zygote_server import PRELOAD  # noqa: E402

QUIET = {"PYDEVD_DISABLE_FILE_VALIDATION": "1"}  # debugpy's note on frozen modules, at each preload of ipykernel
# what each sandbox imports: the kernel sandbox's fork server, or the score of record's probe job (torch, and
# torch._dynamo through the first optimizer of the 02 check)
PRELOADS = {"kernel": PRELOAD, "probe": template.PRELOAD}
WORK = ("import torch\n"
        "model = torch.nn.Linear(64, 64)\n"
        "optimizer = torch.optim.AdamW(model.parameters())\n"
        "model(torch.randn(8, 64)).sum().backward()\n"
        "optimizer.step()\n")
SEEN = ("import json, os, socket\n"
        "lines = open('/proc/self/status').read().splitlines()\n"
        "status = dict(line.split(':\\t', 1) for line in lines if ':\\t' in line)\n"
        "print(json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'groups': os.getgroups(),"
        " 'caps': [status[k].strip() for k in ('CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb')],"
        " 'no_new_privs': status['NoNewPrivs'].strip(), 'host': socket.gethostname(),"
        " 'net': sorted(os.listdir('/sys/class/net')) if os.path.isdir('/sys/class/net') else None,"
        " 'root': sorted(os.listdir('/')), 'cwd': os.getcwd(), 'env': dict(os.environ),"
        " 'mounts': [line.split()[4] for line in open('/proc/self/mountinfo')],"
        " 'cgroups': open('/proc/self/cgroup').read().split(), 'limits': open('/proc/self/limits').read()}),"
        " flush=True)\n")


class CpuGroup:
    """A cgroup that counts the CPU of the processes put in it (bubblewrap's descendants are not reaped into this
    process's own rusage): cgroup v1's cpuacct or v2's cpu.stat."""

    def __init__(self, name: str):
        v1 = Path("/sys/fs/cgroup/cpuacct")
        self.path = (v1 if v1.is_dir() else Path("/sys/fs/cgroup")) / name
        self.path.mkdir(exist_ok=True)

    def enter(self, pid: int = 0) -> None:
        (self.path / "cgroup.procs").write_text(str(pid or os.getpid()))

    def cpu(self) -> float:
        """CPU-s used in the group so far."""
        if (self.path / "cpuacct.usage").exists():
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
        return int(stat["usage_usec"]) / 1e6

    def remove(self) -> None:
        """Remove the group once its last process (a holder's sleep dies with bubblewrap, a moment later) is gone."""
        for _ in range(500):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.01)
        self.path.rmdir()


def _own_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def sandbox_environment() -> dict[str, str]:
    """The environment the course's command line gives a sandbox (its --setenv pairs)."""
    return template.sandbox_environment(bwrap_argv(["true"], Mounts(), Limits(), env=QUIET))


def seen_fresh(group: CpuGroup) -> dict:
    """What a process of the course's sandbox sees (in the CPU group, as the timed ones are)."""
    done = subprocess.run(bwrap_argv([sys.executable, "-I", "-c", SEEN], Mounts(), Limits(), env=QUIET),
                          check=True, capture_output=True, text=True, preexec_fn=group.enter)
    return json.loads(done.stdout)


def seen_template(group: CpuGroup) -> dict:
    """What a process the template forked into a sandbox sees (in the CPU group, as the fresh one is)."""
    read_end, write_end = os.pipe()
    template_sandbox(group, say=write_end)
    os.close(write_end)
    with os.fdopen(read_end) as seen:
        return json.loads(seen.read())


def fresh_sandbox(preload: list[str], group: CpuGroup) -> float:
    """CPU-s of one sandbox as the grader makes it: bubblewrap, python, the preload, the work."""
    code = "".join(f"import {name}\n" for name in preload) + WORK
    before = group.cpu()
    subprocess.run(bwrap_argv([sys.executable, "-I", "-c", code], Mounts(), Limits(), env=QUIET), check=True,
                   preexec_fn=group.enter)
    return group.cpu() - before


def _holder(group: CpuGroup) -> tuple[subprocess.Popen, int]:
    """A sandbox of the course's command line around ``sleep`` (no Python), and the host pid of a process in it."""
    proc = subprocess.Popen(bwrap_argv(["sleep", "600"], Mounts(), Limits()), preexec_fn=group.enter)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # bwrap's child is the namespace's pid 1; it starts sleep once set up
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        if children:
            inner = Path(f"/proc/{children[0]}/task/{children[0]}/children").read_text().split()
            if inner and Path(f"/proc/{inner[0]}/comm").read_text().strip() == "sleep":
                return proc, int(inner[0])
        time.sleep(0.005)
    proc.kill()
    raise RuntimeError("the holder sandbox did not start")


def _enter_and_work(holder: int, say: int | None) -> None:
    """In the forked child (root, preloaded): enter the holder's namespaces, fork into its PID namespace, become
    nobody with no capabilities, do the work (with ``say``, a descriptor: write what it sees there); never
    returns."""
    libc = ctypes.CDLL(None, use_errno=True)
    status_code = 1
    try:
        fds = [(os.open(f"/proc/{holder}/ns/{name}", os.O_RDONLY), flag) for name, flag in NAMESPACES]
        for fd, flag in fds:
            if libc.setns(fd, flag) != 0:
                raise OSError(ctypes.get_errno(), f"setns {flag:#x}")
            os.close(fd)
        pid = os.fork()
        if pid:
            status_code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        else:
            code = 1
            try:
                os.setsid()
                for cap in range(LAST_CAP + 1):  # the bounding set, while root may still drop it
                    libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
                os.setgroups([])
                os.setresgid(NOBODY, NOBODY, NOBODY)
                os.setresuid(NOBODY, NOBODY, NOBODY)  # from root to nobody: permitted and effective sets cleared
                if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "no_new_privs")
                os.chdir("/tmp")
                os.environ.clear()  # the sandbox's own environment, as bwrap --clearenv --setenv gives it
                os.environ.update(sandbox_environment(), PWD=os.getcwd())  # PWD: as bwrap's --chdir sets it
                if say is not None:
                    os.dup2(say, 1)
                exec(compile(WORK + (SEEN if say is not None else ""), "work", "exec"), {})
                code = 0
            finally:
                sys.stdout.flush()
                os._exit(code)
    finally:
        os._exit(status_code)


def template_sandbox(group: CpuGroup, say: int | None = None) -> tuple[float, float]:
    """(CPU-s of the sandbox's processes, the holder's included, and CPU-s of the template's own fork) for one
    sandbox entered from this process, which has imported the preload."""
    before = group.cpu()
    holder, inside = _holder(group)
    own = _own_cpu()
    try:
        sys.stdout.flush()
        child = os.fork()
        if child == 0:
            group.enter()
            _enter_and_work(inside, say)
        fork_cost = _own_cpu() - own
        code = os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])
        if code != 0:
            raise RuntimeError(f"the template's child ended with {code}")
    finally:
        holder.kill()
        holder.wait()
    return group.cpu() - before, fork_cost


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="sandboxes made each way")
    parser.add_argument("--preload", choices=sorted(PRELOADS), default="kernel", help="whose imports to preload")
    args = parser.parse_args(argv)
    if os.geteuid() != 0 or status() is not None:
        print(f"template_fork: needs root and the grader's confinement ({status() or 'not root'})", file=sys.stderr)
        return 2
    os.environ.update(QUIET)
    preload = list(PRELOADS[args.preload])
    group = CpuGroup(f"template-study-{os.getpid()}")
    try:
        fresh = [fresh_sandbox(preload, group) for _ in range(args.rounds)]
        started = _own_cpu()
        for name in preload:
            __import__(name)
        template_preload = _own_cpu() - started
        seen = {"fresh": seen_fresh(group), "template": seen_template(group)}  # once, outside the timings
        entered = [template_sandbox(group) for _ in range(args.rounds)]
    finally:
        group.remove()
    print(json.dumps({
        "rounds": args.rounds, "preload": args.preload, "modules_preloaded": len(preload),
        "fresh_cpu_s": [round(x, 3) for x in fresh], "fresh_median": round(statistics.median(fresh), 3),
        "template_preload_once_cpu_s": round(template_preload, 3),
        "template_cpu_s": [round(x, 3) for x, _ in entered],
        "template_median": round(statistics.median(x for x, _ in entered), 3),
        "template_fork_cpu_s": [round(y, 4) for _, y in entered],
        "same_state": seen["fresh"] == seen["template"], "seen": seen["template"],
    }, indent=1))
    if seen["fresh"] != seen["template"]:
        print(f"template_fork: the two sandboxes' processes see different things: {seen}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
