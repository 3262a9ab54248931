"""Starts N processes of a script as torchrun does for one host (RANK,
WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: what
torch.distributed.init_process_group's env:// reads), for the tests:
Debian 12's torchrun (torch 1.13 on Python 3.11) fails before it starts any.

    python3 launch.py N script.py [args...]

Exits with the first failure's status, after ending the other processes, so
that none waits for a failed one; else 0.
"""
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ranks, command = int(sys.argv[1]), sys.argv[2:]
    port = str(free_port())
    processes = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(ranks), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        processes.append(subprocess.Popen([sys.executable] + command, env=env))
    while True:
        statuses = [p.poll() for p in processes]
        failed = [s for s in statuses if s not in (None, 0)]
        if failed or all(s == 0 for s in statuses):
            break
        time.sleep(0.05)
    for p in processes:
        if p.poll() is None:
            p.kill()
        p.wait()
    sys.exit(failed[0] if failed else 0)


if __name__ == "__main__":
    main()
