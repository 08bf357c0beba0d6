"""The workload of the model's accuracy benches (model_accuracy.sh,
one_node_launches.sh): 32 layers of 512 KiB, 300 us of backward each, 2 ms
forward, 0.5 ms optimizer. Writes it to the path given."""
import json
import sys

params = [{"name": f"layer{i}.weight", "numel": 131072, "dtype": "float32",
           "backward_us": 300.0} for i in range(32)]
with open(sys.argv[1], "w") as out:
    json.dump({"name": "layers", "params": params, "forward_us": 2000, "optimizer_us": 500}, out)
