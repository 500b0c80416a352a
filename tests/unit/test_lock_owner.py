"""Which lock holders may be taken over at once: only a process of this host that is gone."""

from __future__ import annotations

import os
import socket
import subprocess

from kg_platform.graph.lock import dead_local_owner


def test_only_a_dead_process_of_this_host_is_a_dead_owner():
    done = subprocess.Popen(["true"])
    done.wait()
    host = socket.gethostname()
    assert dead_local_owner(f"{host}:{done.pid}:abcd1234")
    assert not dead_local_owner(f"{host}:{os.getpid()}:abcd1234")  # ourselves
    assert not dead_local_owner(f"{host}:{os.getppid()}:abcd1234")  # alive
    assert not dead_local_owner(f"other-{host}:{done.pid}:abcd1234")  # another host
    for odd in (None, "", "nohost", "a:b", f"{host}:x:y", f"{host}::y"):
        assert not dead_local_owner(odd)


def test_a_host_name_with_colons_is_kept_whole():
    done = subprocess.Popen(["true"])
    done.wait()
    assert not dead_local_owner(f"fe80::1:{done.pid}:abcd")
