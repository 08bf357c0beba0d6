"""Running examples/ddp_train.py the way `record --nproc` does, without
ddpscope: the baseline a recorded job's parameters must equal, bit for bit
(the injector never changes what the job computes)."""
import json
import os
import socket
import subprocess
import sys


def run_plain(train, job_args, nproc, params_out, env):
    """The job's nproc ranks with torchrun's variables; their exit codes."""
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    env = dict(env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port.getsockname()[1]),
               WORLD_SIZE=str(nproc), LOCAL_WORLD_SIZE=str(nproc))
    port.close()
    procs = [subprocess.Popen([sys.executable, train, *job_args, "--params-out", params_out],
                              env=dict(env, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for r in range(nproc)]
    return [p.wait(timeout=300) for p in procs]


def digests(folder, nproc):
    """Each rank's parameter digest, as ddp_train.py --params-out wrote it."""
    out = []
    for r in range(nproc):
        with open(os.path.join(folder, f"params-rank{r}.json")) as f:
            out.append(json.load(f)["sha256"])
    return out
