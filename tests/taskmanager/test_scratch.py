"""The scratch sweep: a TaskManager's folder whose process has exited is removed, with its
cluster's folder once empty; a folder of a running process, of another host, or naming no
owner is kept. The exited owner is a real process, started and waited for."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from taskmanager import scratch


def exited_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def folder_of(base, cluster: str, name: str, owner: str | None):
    folder = base / cluster / name
    (folder / ".spark" / "tmp").mkdir(parents=True)
    (folder / ".spark" / "tmp" / "shuffle_0_0_0.data").write_bytes(b"x" * 1024)
    if owner is not None:
        (folder / scratch.OWNER_FILE).write_text(owner)
    return folder


def test_the_folders_of_exited_task_managers_on_this_host_are_removed_and_no_other(tmp_path):
    host = socket.gethostname()
    gone = folder_of(tmp_path, "ended-cluster", "tidal-tm-0", f"{host} {exited_pid()}\n")
    gone_too = folder_of(tmp_path, "ended-cluster", "tidal-tm-1", f"{host} {exited_pid()}\n")
    running = folder_of(tmp_path, "live-cluster", "tidal-tm-0", f"{host} {os.getppid()}\n")
    gone_here = folder_of(tmp_path, "live-cluster", "tidal-tm-1", f"{host} {exited_pid()}\n")
    elsewhere = folder_of(tmp_path, "live-cluster", "tidal-tm-2", f"other-{host} {exited_pid()}\n")
    unnamed = folder_of(tmp_path, "old-cluster", "tidal-tm-0", None)
    (tmp_path / ".swept-cut-short" / "x").mkdir(parents=True)  # a sweep killed half-way

    removed = scratch.sweep_abandoned(tmp_path)

    assert sorted(removed) == sorted([gone, gone_too, gone_here])
    assert not gone.exists() and not gone_here.exists()
    assert not (tmp_path / "ended-cluster").exists()  # emptied, so removed
    assert running.exists() and elsewhere.exists() and unnamed.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live-cluster", "old-cluster"]


def test_a_claimed_folder_names_this_process_and_is_kept_while_it_runs(tmp_path):
    folder = tmp_path / "cluster" / "tidal-tm-3"
    scratch.claim(folder)
    assert (folder / scratch.OWNER_FILE).read_text().split() == [socket.gethostname(),
                                                                 str(os.getpid())]
    assert scratch.sweep_abandoned(tmp_path) == [] and folder.exists()


def test_a_base_not_there_is_an_empty_sweep(tmp_path):
    assert scratch.sweep_abandoned(tmp_path / "never-made") == []
