"""Tests for course_lib/gpt/cpu_share.py: the CPUs a process may use, and the threads torch trains with."""
from __future__ import annotations

import pytest
import torch

from course_lib.gpt import cpu_share
from course_lib.gpt.cpu_share import FollowShare, Share, ThreadChoice, cgroup_quota, choose_threads, threads_for


def _write(folder, **files):
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name.replace("_", ".", 1)).write_text(text)


def test_a_cgroup_v2_quota_is_the_tightest_up_the_path(tmp_path):
    """Does a v2 cgroup's quota come from cpu.max on the process's cgroup or any parent, the tightest winning?"""
    root = tmp_path / "fs"
    _write(root, cgroup_controllers="cpu memory")
    _write(root / "hub", cpu_max="150000 100000")
    _write(root / "hub" / "student1", cpu_max="max 100000")
    (tmp_path / "cgroup").write_text("0::/hub/student1\n")
    assert cgroup_quota(tmp_path / "cgroup", root) == 1.5
    _write(root / "hub" / "student1", cpu_max="50000 100000")
    assert cgroup_quota(tmp_path / "cgroup", root) == 0.5
    (tmp_path / "cgroup").write_text("0::/elsewhere\n")  # a container's own cgroup is its mount's root
    assert cgroup_quota(tmp_path / "cgroup", root) is None


def test_a_cgroup_v1_quota_and_a_hybrid_machine(tmp_path):
    """Does a v1 cgroup's cfs quota over its period count, -1 meaning none, beside a v2 hierarchy at unified/?"""
    root = tmp_path / "fs"
    _write(root / "unified" / "job")
    _write(root / "cpu,cpuacct", cpu_cfs_quota_us="-1", cpu_cfs_period_us="100000")
    _write(root / "cpu,cpuacct" / "job", cpu_cfs_quota_us="200000", cpu_cfs_period_us="100000")
    (tmp_path / "cgroup").write_text("5:memory:/job\n3:cpu,cpuacct:/job\n0::/job\n")
    assert cgroup_quota(tmp_path / "cgroup", root) == 2.0
    (tmp_path / "cgroup").write_text("3:cpu,cpuacct:/\n0::/\n")
    assert cgroup_quota(tmp_path / "cgroup", root) is None
    assert cgroup_quota(tmp_path / "no such file", root) is None


def test_the_share_is_the_smallest_bound_and_says_whose(monkeypatch):
    """Is the share the least of the affinity, the cgroup quota and CPU_LIMIT, described as the machine's when
    the CPUs alone bound it and as this server's when a quota or limit does?"""
    monkeypatch.setattr(cpu_share, "affinity", lambda: {0, 1, 2, 3})
    monkeypatch.setattr(cpu_share, "cgroup_quota", lambda: None)
    monkeypatch.delenv("CPU_LIMIT", raising=False)
    assert cpu_share.cpu_share() == Share(4, 4) and Share(4, 4).describe() == "this machine's share: 4 CPUs"
    monkeypatch.setenv("CPU_LIMIT", "1.5")
    share = cpu_share.cpu_share()
    assert share.cpus == 1.5 and share.threads == 1 and share.describe() == "this server's share: 1.5 CPUs"
    monkeypatch.setattr(cpu_share, "cgroup_quota", lambda: 0.5)
    assert cpu_share.cpu_share().threads == 1 and cpu_share.cpu_share().describe() == "this server's share: 0.5 CPUs"
    monkeypatch.setenv("CPU_LIMIT", "not a number")
    assert cpu_share.cpu_share().cpus == 0.5


def test_threads_take_what_other_work_leaves_of_the_share():
    """Does a run take every whole CPU of its share that other work leaves free, and always at least one?"""
    two = Share(2, 2)
    assert [threads_for(two, others) for others in (None, 0.0, 0.3, 0.8, 1.0, 1.9, 3.0)] == [2, 2, 2, 1, 1, 1, 1]
    assert threads_for(Share(2, 8), 5.0) == 2 and threads_for(Share(2, 8), 6.5) == 1  # a hub's quota on a big machine


def test_an_asked_number_wins_and_says_so(monkeypatch):
    """Do COURSE_THREADS and an explicit number fix the threads (and say which), refusing fewer than one?"""
    monkeypatch.setenv("COURSE_THREADS", "3")
    assert choose_threads().describe() == "3 CPU threads (COURSE_THREADS=3)" and not choose_threads().follows
    assert choose_threads(1).describe() == "1 CPU thread (asked for)"
    with pytest.raises(ValueError, match="at least 1"):
        choose_threads(0)


def test_the_choice_says_the_share_and_the_busy_cpus(monkeypatch):
    """Measured, does the choice name the share, and the other work when it keeps a CPU busy?"""
    monkeypatch.delenv("COURSE_THREADS", raising=False)
    monkeypatch.setattr(cpu_share.CpuMeter, "others", lambda self: 1.8)
    monkeypatch.setattr(cpu_share, "cpu_share", lambda: Share(2, 2))
    choice = choose_threads(window=0)
    assert choice.follows and choice.describe() == "1 CPU thread (this machine's share: 2 CPUs, 1.8 kept busy by " \
                                                   "other work)"
    assert ThreadChoice(1, Share(1, 2, quota=1)).describe() == "1 CPU thread (this server's share: 1 CPU)"


def test_the_meter_counts_only_other_processes_time(tmp_path, monkeypatch):
    """Does the meter count busy time on the process's CPUs (not idle, not iowait, not other CPUs) less its own?"""
    monkeypatch.setattr(cpu_share, "affinity", lambda: {0, 1})
    stat = tmp_path / "stat"
    line = "cpu{} {} 0 {} {} 50 0 0 0 0 0\n"
    stat.write_text("cpu 0 0 0 0 0 0 0 0\n" + line.format(0, 100, 0, 900) + line.format(1, 100, 0, 900)
                    + line.format(2, 0, 0, 0))
    meter = cpu_share.CpuMeter(stat)
    monkeypatch.setattr(cpu_share.time, "monotonic", lambda: 12.0)
    monkeypatch.setattr(cpu_share.time, "process_time", lambda: 5.0)
    meter.last = (10.0, 2.0, 4.0)
    stat.write_text(line.format(0, 250, 50, 900) + line.format(1, 100, 0, 1100) + line.format(2, 500, 0, 0))
    # our CPUs went from 2.0 to 4.0 busy seconds (ticks of 1/100 s), 1.0 of them ours, over 2 s: 0.5 CPUs
    assert meter.others() == pytest.approx(0.5)


def test_following_the_share_changes_torch_threads_and_says_so(monkeypatch):
    """While training, does the follower set torch's threads to what the share and other work leave, saying so?"""
    said = []
    follower = FollowShare(Share(2, 2), seconds=0, say=said.append)
    monkeypatch.setattr(follower.meter, "others", lambda: 1.9)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        follower()
        assert torch.get_num_threads() == 1
        assert said == ["threads 2 -> 1: other work kept 1.9 of 2 CPUs busy (this machine's share: 2 CPUs)"]
        monkeypatch.setattr(follower.meter, "others", lambda: 0.1)
        follower()
        assert torch.get_num_threads() == 2 and len(said) == 2
    finally:
        torch.set_num_threads(before)
