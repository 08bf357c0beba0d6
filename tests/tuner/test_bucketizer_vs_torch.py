"""ddpscope's bucket plan against torch's own _compute_bucket_assignment_by_size.

For random workloads (fixed seed), plan_buckets_tool's buckets must equal what
DDP's rebuild_buckets() gets from torch: the tensors in ready order,
tensor_indices = the ready order (torch returns those indices, not list
positions), limits [first_bucket_bytes, cap_bytes] with DDP's
int(mb * 1024 * 1024). Order included. In `constructor` mode they must equal
the layout DDP's constructor keeps when it never rebuilds
(find_unused_parameters): the tensors in module order without tensor_indices
(torch sorts the buckets by their lowest index), the list then reversed. Run by each torch Python of
tests/torch_pythons.cmake (the PyPI wheel, Debian's python3-torch);
PLAN_BUCKETS_TOOL names the tool.
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import unittest

import torch
import torch.distributed as dist

TOOL = os.environ.get("PLAN_BUCKETS_TOOL", "")
FLOATS = ["float32", "float16", "bfloat16", "float64"]
# Every dtype torch 1.13 has that ddpscope's workload format names.
ALL_DTYPES = FLOATS + ["int8", "uint8", "int32", "int64"]


def mib_to_bytes(mb):
    return int(mb * 1024 * 1024)  # DDP's bucket_bytes_cap


def torch_plan(params, ready_order, cap_mb, first_mb, device):
    # Meta tensors have a size and a dtype but no storage: 50M-element tensors cost nothing.
    tensors = [torch.empty(params[i][0], dtype=getattr(torch, params[i][1]), device=device)
               for i in ready_order]
    limits = [mib_to_bytes(first_mb), mib_to_bytes(cap_mb)]
    buckets, _ = dist._compute_bucket_assignment_by_size(
        tensors, limits, [False] * len(tensors), list(ready_order))
    return [list(b) for b in buckets]


def torch_constructor_plan(params, cap_mb, first_mb, device):
    tensors = [torch.empty(n, dtype=getattr(torch, d), device=device) for n, d in params]
    limits = [mib_to_bytes(first_mb), mib_to_bytes(cap_mb)]
    buckets, _ = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * len(tensors))
    return [list(b) for b in reversed(buckets)]  # DDP reverses them


def tool_plan(directory, params, ready_order, cap_mb, first_mb, mode=None):
    workload = {
        "name": "random", "forward_us": 1000.0, "optimizer_us": 100.0,
        "params": [{"name": "p%d" % i, "numel": n, "dtype": d, "backward_us": 1.0}
                   for i, (n, d) in enumerate(params)],
        "ready_order": list(ready_order),
    }
    path = os.path.join(directory, "workload.json")
    with open(path, "w") as f:
        json.dump(workload, f)
    # repr() round-trips: the tool's std::stod reads the same double.
    out = subprocess.run([TOOL, path, repr(cap_mb), repr(first_mb)] + ([mode] if mode else []),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["buckets"]


def log_uniform(rng, low, high):
    return 10 ** rng.uniform(math.log10(low), math.log10(high))


def random_numel(rng, huge):
    kind = rng.random()
    if kind < 0.15:
        return 1
    if kind < 0.3:
        return rng.randint(2, 100)
    return int(log_uniform(rng, 1, huge))


def random_case(rng, dtypes, huge):
    n = rng.choice([1, 2, 3, rng.randint(1, 20), rng.randint(1, 300), rng.randint(200, 300)])
    kinds = rng.sample(dtypes, rng.randint(1, len(dtypes)))
    params = [(random_numel(rng, huge), rng.choice(kinds)) for _ in range(n)]
    shape = rng.random()
    ready_order = list(range(n))
    if shape < 0.3:
        ready_order.reverse()  # DDP's assumption before the first iteration
    elif shape < 0.9:
        rng.shuffle(ready_order)
    largest = max(numel * torch.empty(0, dtype=getattr(torch, d)).element_size()
                  for numel, d in params)
    if rng.random() < 0.3:  # a cap below the largest tensor
        cap_mb = max(0.001, largest * rng.uniform(0.05, 0.99) / 2**20)
    else:
        cap_mb = log_uniform(rng, 0.001, 100)
    first_mb = log_uniform(rng, 0.0001, 5)
    return params, ready_order, cap_mb, first_mb, largest


class BucketizerVsTorch(unittest.TestCase):
    def setUp(self):
        self.assertTrue(os.access(TOOL, os.X_OK), "PLAN_BUCKETS_TOOL must name plan_buckets_tool")
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def compare(self, params, ready_order, cap_mb, first_mb, device):
        expected = torch_plan(params, ready_order, cap_mb, first_mb, device)
        got = tool_plan(self.dir.name, params, ready_order, cap_mb, first_mb)
        self.assertEqual(got, expected, "params=%r ready_order=%r cap_mb=%r first_mb=%r" %
                         (params, ready_order, cap_mb, first_mb))

    def test_examples(self):
        params = [(10, "float32"), (300 * 1024, "float16"), (200 * 1024, "float32"), (5, "float16")]
        self.compare(params, [0, 1, 2, 3], 2.0, 1.0, "cpu")
        self.assertEqual(torch_plan(params, [0, 1, 2, 3], 2.0, 1.0, "cpu"), [[1, 3], [0, 2]])
        reverse = params[::-1]
        self.compare(reverse, [3, 2, 1, 0], 1000 / 2**20, 100 / 2**20, "cpu")
        self.assertEqual(torch_plan(reverse, [3, 2, 1, 0], 1000 / 2**20, 100 / 2**20, "cpu"),
                         [[2], [3, 1], [0]])

    def run_random(self, seed, count, dtypes, huge, device):
        rng = random.Random(seed)
        below_cap = 0
        for _ in range(count):
            params, ready_order, cap_mb, first_mb, largest = random_case(rng, dtypes, huge)
            below_cap += mib_to_bytes(cap_mb) < largest
            self.compare(params, ready_order, cap_mb, first_mb, device)
        print("\n%s: %d/%d random workloads matched torch (%d with the cap below the largest "
              "tensor)" % (device, count, count, below_cap), file=sys.stderr)
        self.assertGreater(below_cap, count // 10)

    def test_random_float_workloads(self):
        # Up to 50M elements, so meta tensors; the four dtypes gradients have.
        self.run_random(5489, 250, FLOATS, 50_000_000, "meta")

    def test_random_constructor_layouts(self):
        rng = random.Random(2718)
        for _ in range(150):
            params, ready_order, cap_mb, first_mb, _ = random_case(rng, FLOATS, 50_000_000)
            expected = torch_constructor_plan(params, cap_mb, first_mb, "meta")
            got = tool_plan(self.dir.name, params, ready_order, cap_mb, first_mb, "constructor")
            self.assertEqual(got, expected, "params=%r cap_mb=%r first_mb=%r" %
                             (params, cap_mb, first_mb))

    def test_random_workloads_of_every_dtype_on_cpu(self):
        # The CPU device hash is the one ddpscope models; real storage, so smaller tensors.
        self.run_random(1234, 100, ALL_DTYPES, 100_000, "cpu")


if __name__ == "__main__":
    unittest.main()
