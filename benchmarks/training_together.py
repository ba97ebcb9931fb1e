"""Training beside other work on this machine: a class of students at once, and one student beside busy programs.

    python benchmarks/training_together.py class --students 1 2 4 [--threads auto today] [--cgroup-cpus 1]
    python benchmarks/training_together.py busy --notebooks 02 04 [--busy 2] [--threads auto today]

Each student is a process of its own, ``python -m course_lib run ... --preset cpu --fresh`` on the reference
notebooks' glue, from a seed of its own, into a folder of its own. ``--threads today`` sets COURSE_THREADS to this
machine's CPUs, torch's own default (what every run did before issue 51); ``auto`` leaves the choice to the course
(``course_lib.gpt.cpu_share``); a number sets that many.

``class``: 1, 2, 4, ... students start the same run at once (notebook 02's finetune, ``--epochs`` long, so that
training rather than start-up fills the round; ``--run`` another). Prints each student's training rate (steps over
the training seconds of its log) and the class's (every step over the time from the first training's start to the
last's end). With ``--cgroup-cpus X`` (as root) each student runs in a cgroup of its own capped at X CPUs, as the
hub's servers are.

``busy``: each notebook's ``cpu`` runs as its training cell runs them (02: the finetune and both answer runs; 04:
pretraining, finetuning and both answer runs), alone and then beside ``--busy`` processes that keep a CPU busy
each (``python -c 'while True: pass'``): the wall time of each, and how many times longer beside them. Issue 51's
bar: at most 3 times.

Every process starts in a session of its own, as Jupyter starts kernels and a desktop its programs: where Linux
groups the scheduling by session (autogroup), the CPUs are shared between sessions first. Every measurement prints
the load average first: on a machine others share, "alone" is only as alone as they let it.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK_RUNS = {
    "02": ["vanilla_finetune_without_pretrain", "vanilla_eval_dev_without_pretrain",
           "vanilla_eval_test_without_pretrain"],
    "04": ["vanilla_pretrain", "vanilla_finetune_with_pretrain", "vanilla_eval_dev_with_pretrain",
           "vanilla_eval_test_with_pretrain"],
}


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").is_file() else "?"


def environment(threads: str) -> dict[str, str]:
    """The students' environment: COURSE_THREADS as ``threads`` says (none for auto)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_THREADS", "OMP_NUM_THREADS", "CPU_LIMIT")}
    if threads == "today":
        env["COURSE_THREADS"] = str(os.cpu_count())
    elif threads != "auto":
        env["COURSE_THREADS"] = threads
    return env


def command(runs: list[str], world: Path, out: Path, seed: int, settings: list[str]) -> list[str]:
    return [sys.executable, "-m", "course_lib", "run", *runs, "--notebooks", str(REPO / "solutions" / "a5"),
            "--preset", "cpu", "--data-dir", str(world), "--out-dir", str(out), "--seed", str(seed), "--quiet",
            "--fresh", *[arg for s in settings for arg in ("--set", s)]]


def start_students(commands: list[list[str]], env: dict[str, str], cgroup_cpus: float | None):
    """Start every student at once: (process, its cgroup or None)."""
    started = []
    for cmd in commands:
        group = None
        if cgroup_cpus is not None:
            from autograder.confinement.cgroups import Cgroup
            from autograder.confinement.limits import Limits

            group = Cgroup(Limits(memory_mb=4096, max_processes=4096, cpus=cgroup_cpus))
        # a session of its own, as Jupyter starts each kernel: Linux's autogroup shares the CPUs between sessions
        process = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, preexec_fn=group.enter if group else None, start_new_session=True)
        started.append((process, group))
    return started


def wait_all(started) -> list[float]:
    """Wait for every student; the time each ended (time.monotonic). A failed student stops the benchmark."""
    ends = [None] * len(started)
    while any(e is None for e in ends):
        for i, (process, _) in enumerate(started):
            if ends[i] is None and process.poll() is not None:
                ends[i] = time.monotonic()
        time.sleep(0.05)
    for process, group in started:
        output = process.stdout.read()
        if group is not None:
            group.kill()
        if process.returncode != 0:
            raise SystemExit(f"a student failed:\n{output[-3000:]}")
    return ends


def trained(out: Path, run: str) -> tuple[int, float, str]:
    """(steps, training seconds, threads) from a run's log."""
    log = json.loads((out / f"{run}.json").read_text())
    return log["history"][-1]["step"], log["history"][-1]["seconds"], log.get("threads", "")


def class_round(k: int, threads: str, args, world: Path, tmp: Path) -> None:
    outs = [tmp / f"class-{threads}-{k}-{i}" for i in range(k)]
    settings = [f"finetune_without_pretrain.max_epochs={args.epochs}"]
    commands = [command([args.run], world, out, 100 + i, settings) for i, out in enumerate(outs)]
    print(f"  load {load()}", flush=True)
    begin = time.monotonic()
    ends = wait_all(start_students(commands, environment(threads), args.cgroup_cpus))
    rows = [trained(out, args.run) for out in outs]
    first_start = min(end - seconds for end, (_, seconds, _) in zip(ends, rows))
    class_rate = sum(steps for steps, _, _ in rows) / (max(ends) - first_start)
    rates = ", ".join(f"{steps / seconds:.1f}" for steps, seconds, _ in rows)
    print(f"  {k} student{'s' * (k > 1)}, threads {threads}: wall {max(ends) - begin:.1f} s; each student's steps/s: "
          f"{rates}; the class's steps/s: {class_rate:.1f}", flush=True)
    print(f"    first student's threads: {rows[0][2]}", flush=True)


def busy_round(notebook: str, threads: str, busy: int, world: Path, tmp: Path) -> float:
    out = tmp / f"busy-{notebook}-{threads}-{busy}"
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
             for _ in range(busy)]
    try:
        time.sleep(0.5 if busy else 0)
        print(f"  load {load()}", flush=True)
        begin = time.monotonic()
        wait_all(start_students([command(NOTEBOOK_RUNS[notebook], world, out, 7, [])], environment(threads), None))
        wall = time.monotonic() - begin
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    parts = [f"{run} {trained(out, run)[1]:.1f} s" for run in NOTEBOOK_RUNS[notebook] if "eval" not in run]
    print(f"  {notebook}, threads {threads}, beside {busy} busy: {wall:.1f} s ({'; '.join(parts)}; "
          f"{trained(out, NOTEBOOK_RUNS[notebook][0])[2]})", flush=True)
    return wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    together = sub.add_parser("class", help="1, 2, 4, ... students training at once")
    together.add_argument("--students", type=int, nargs="+", default=[1, 2, 4])
    together.add_argument("--threads", nargs="+", default=["auto", "today"])
    together.add_argument("--run", default="vanilla_finetune_without_pretrain")
    together.add_argument("--epochs", type=int, default=100, help="epochs of the run (02's cpu finetune has 20)")
    together.add_argument("--cgroup-cpus", type=float, default=None, help="each student in a cgroup of X CPUs")
    beside = sub.add_parser("busy", help="a notebook's runs alone and beside busy processes")
    beside.add_argument("--notebooks", nargs="+", default=["02", "04"], choices=sorted(NOTEBOOK_RUNS))
    beside.add_argument("--busy", type=int, default=2)
    beside.add_argument("--threads", nargs="+", default=["auto"])
    args = parser.parse_args(argv)
    from course_lib.world import write_world

    with tempfile.TemporaryDirectory(prefix="training-together-") as name:
        tmp = Path(name)
        write_world(tmp / "world", 0)
        print(f"{os.cpu_count()} CPUs; {args.what}", flush=True)
        if args.what == "class":
            for threads in args.threads:
                for k in args.students:
                    class_round(k, threads, args, tmp / "world", tmp)
        else:
            for notebook in args.notebooks:
                for threads in args.threads:
                    alone = busy_round(notebook, threads, 0, tmp / "world", tmp)
                    crowded = busy_round(notebook, threads, args.busy, tmp / "world", tmp)
                    print(f"{notebook}, threads {threads}: {crowded / alone:.2f} times as long beside {args.busy} busy "
                          f"processes", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
