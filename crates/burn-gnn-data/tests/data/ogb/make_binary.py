"""Writes binary_node/: a six-node graph in OGB's binary (`.npz`) node-dataset layout, as
ogbn-papers100M ships it (raw/data.npz with edge_index, num_nodes_list, num_edges_list,
node_feat, node_year; raw/node-label.npz with node_label, NaN for unlabelled nodes;
split/time/{train,valid,test}.csv.gz), for crates/burn-gnn-data/tests/ogb.rs. Needs numpy."""
import gzip
import os

import numpy as np

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "binary_node")
os.makedirs(os.path.join(here, "raw"), exist_ok=True)
os.makedirs(os.path.join(here, "split", "time"), exist_ok=True)
np.savez_compressed(
    os.path.join(here, "raw", "data.npz"),
    edge_index=np.array([[0, 1, 2, 3, 5], [1, 2, 0, 4, 4]], dtype=np.int64),
    num_nodes_list=np.array([6], dtype=np.int64),
    num_edges_list=np.array([5], dtype=np.int64),
    node_feat=np.arange(18, dtype=np.float32).reshape(6, 3) / 4,
    node_year=np.array([[2010], [2011], [2012], [2013], [2014], [2015]], dtype=np.int64),
)
np.savez_compressed(
    os.path.join(here, "raw", "node-label.npz"),
    node_label=np.array([[3], [np.nan], [1], [0], [np.nan], [2]], dtype=np.float32),
)
for name, ids in [("train", [0, 2]), ("valid", [3]), ("test", [5])]:
    # mtime=0: the same bytes on every run.
    with open(os.path.join(here, "split", "time", f"{name}.csv.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write("".join(f"{i}\n" for i in ids).encode())
