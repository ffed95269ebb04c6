"""The peers' figures for `benches/gpu.sh`: torch / PyG or JAX on the cells our benches run.

    python3 benches/peers/gpu_peers.py torch OUT.csv   # torch 2.x + torch_geometric
    python3 benches/peers/gpu_peers.py jax OUT.csv     # jax with its CUDA plugin

Cells (as `benches/segment.rs` and `benches/gnn.rs` name them): segment sum / max / softmax over
sorted and uniformly random ids, E = 1e6 and 1e7, D = 16 and 64, N = E / 10, f32 data; and, for
torch, one layer's forward + backward (`sum` of the output, gradients of the parameters) on a
directed Erdős–Rényi-like graph (uniform senders and receivers), E = 1e5 and 1e6, N = E / 10,
64 -> 64 features: `GCNConv(cached=True)`, `GATConv(64, 8, heads=8)`, `SAGEConv(64, 64)`.
Each cell is the median of 20 calls after 3 warm-ups, waiting for the device after each call
(as our benches do). Each variant a peer offers is timed; the CSV keeps every variant.
`PEERS_MAX_E` caps E (a dry run on a CPU: the script falls back to it without a GPU).
"""

import csv
import os
import statistics
import sys
import time

import numpy as np

MAX_E = int(os.environ.get("PEERS_MAX_E", "10000000"))
REPS = 20


def timed(fn, sync):
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(REPS):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def cells():
    rng = np.random.default_rng(42)
    for e in [1_000_000, 10_000_000]:
        if e > MAX_E:
            continue
        n = e // 10
        random = rng.integers(0, n, size=e)
        ordered = np.sort(random)
        for d in [16, 64]:
            data = rng.random((e, d), dtype=np.float32) * 10
            for order, ids in [("sorted", ordered), ("random", random)]:
                yield e, d, n, order, ids, data


def run_torch(rows):
    import torch
    import torch_geometric
    from torch_geometric.nn import GATConv, GCNConv, SAGEConv
    from torch_geometric.utils import scatter, softmax

    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    name = torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu"
    print(f"torch {torch.__version__}, PyG {torch_geometric.__version__}, {name}", flush=True)
    with torch.no_grad():
        for e, d, n, order, ids, data in cells():
            x = torch.from_numpy(data).to(dev)
            index = torch.from_numpy(ids).to(dev)
            wide = index.view(-1, 1).expand(-1, d)
            variants = {
                "sum": {
                    "index_add_": lambda: torch.zeros(n, d, device=dev).index_add_(0, index, x),
                    "pyg_scatter": lambda: scatter(x, index, 0, n, reduce="sum"),
                },
                "max_values": {
                    "scatter_reduce_": lambda: torch.zeros(n, d, device=dev).scatter_reduce_(
                        0, wide, x, "amax", include_self=False
                    ),
                    "pyg_scatter": lambda: scatter(x, index, 0, n, reduce="max"),
                },
                "softmax": {"pyg_softmax": lambda: softmax(x, index, num_nodes=n)},
            }
            for op, fns in variants.items():
                for variant, fn in fns.items():
                    ms = timed(fn, sync)
                    rows.append(["torch", op, order, e, d, variant, f"{ms:.4f}"])
                    print(f"torch {op}/{order}/E={e},D={d} {variant}: {ms:.3f} ms", flush=True)
            del x, index, wide
    rng = np.random.default_rng(7)
    for e in [100_000, 1_000_000]:
        if e > MAX_E:
            continue
        n = e // 10
        edge_index = torch.from_numpy(rng.integers(0, n, size=(2, e))).to(dev)
        x = torch.randn(n, 64, device=dev)
        layers = {
            "gcn": GCNConv(64, 64, cached=True),
            "gat": GATConv(64, 8, heads=8),
            "sage": SAGEConv(64, 64),
        }
        for layer, conv in layers.items():
            conv = conv.to(dev)

            def step(conv=conv):
                conv.zero_grad(set_to_none=True)
                conv(x, edge_index).sum().backward()

            ms = timed(step, sync)
            rows.append(["torch", f"conv/{layer}", "er", e, 64, "pyg", f"{ms:.4f}"])
            print(f"torch conv/{layer}/E={e}: {ms:.3f} ms", flush=True)


def run_jax(rows):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp

    print(f"jax {jax.__version__}, {jax.devices()[0]}", flush=True)

    def softmax(x, ids, n, ordered):
        m = jax.ops.segment_max(x, ids, n, indices_are_sorted=ordered)
        z = jnp.exp(x - m[ids])
        return z / jax.ops.segment_sum(z, ids, n, indices_are_sorted=ordered)[ids]

    ops = {
        "sum": lambda x, i, n, o: jax.ops.segment_sum(x, i, n, indices_are_sorted=o),
        "max_values": lambda x, i, n, o: jax.ops.segment_max(x, i, n, indices_are_sorted=o),
        "softmax": softmax,
    }
    jitted = {op: jax.jit(fn, static_argnums=(2, 3)) for op, fn in ops.items()}
    for e, d, n, order, ids, data in cells():
        x = jax.device_put(data)
        index = jax.device_put(ids.astype(np.int32))
        for op, fn in jitted.items():
            # Both hints: `indices_are_sorted` only where the ids are sorted.
            for hint in [False, True] if order == "sorted" else [False]:
                ms = timed(lambda: fn(x, index, n, hint).block_until_ready(), lambda: None)
                variant = "sorted_hint" if hint else "plain"
                rows.append(["jax", op, order, e, d, variant, f"{ms:.4f}"])
                print(f"jax {op}/{order}/E={e},D={d} {variant}: {ms:.3f} ms", flush=True)
        del x, index


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("torch", "jax"):
        sys.exit("usage: gpu_peers.py torch|jax OUT.csv")
    rows = []
    try:
        (run_torch if sys.argv[1] == "torch" else run_jax)(rows)
    finally:
        with open(sys.argv[2], "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["peer", "op", "ids", "E", "D", "variant", "median_ms"])
            out.writerows(rows)


if __name__ == "__main__":
    main()
