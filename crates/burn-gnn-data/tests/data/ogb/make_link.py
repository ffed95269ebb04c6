"""Writes ogbl_collab/: a six-node graph in OGB's link-dataset layout, shaped as ogbl-collab
(raw/edge.csv.gz with add_inverse_edge, node-feat, the additional edge files edge_weight and
edge_year, split/time/{train,valid,test}.pt written by torch.save), then reads it with OGB's
own LinkPropPredDataset (on a copy, which OGB writes its cache into) and records what OGB
read in ogbl_collab_expected.txt, for crates/burn-gnn-data/tests/ogb.rs.

Needs torch, numpy, pandas and ogb 1.3.6.
"""
import gzip
import os
import shutil
import tempfile

import numpy as np
import ogb
import torch
from ogb.linkproppred import LinkPropPredDataset

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "ogbl_collab")
shutil.rmtree(root, ignore_errors=True)
os.makedirs(os.path.join(root, "raw"))
os.makedirs(os.path.join(root, "split", "time"))


def gz(name, rows):
    # mtime=0: the same bytes on every run.
    with open(os.path.join(root, name), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write("".join(",".join(str(v) for v in row) + "\n" for row in rows).encode())


edges = [(0, 1), (1, 2), (3, 1), (4, 5), (5, 0)]
gz("raw/edge.csv.gz", edges)
gz("raw/num-node-list.csv.gz", [[6]])
gz("raw/num-edge-list.csv.gz", [[len(edges)]])
gz("raw/node-feat.csv.gz", [[0.5 * i, -1.0, i * i / 8] for i in range(6)])
gz("raw/edge_weight.csv.gz", [[w] for w in [1, 2, 1, 3, 1]])
gz("raw/edge_year.csv.gz", [[y] for y in [2010, 2011, 2011, 2012, 2009]])
with open(os.path.join(root, "RELEASE_v1.txt"), "w") as f:
    f.write("ogbl-collab-shaped fixture\n")

split = os.path.join(root, "split", "time")
torch.save(
    {
        "edge": torch.tensor(edges, dtype=torch.long),
        "weight": torch.tensor([1, 2, 1, 3, 1], dtype=torch.long),
        "year": torch.tensor([2010, 2011, 2011, 2012, 2009], dtype=torch.long),
    },
    os.path.join(split, "train.pt"),
)
for name, pos, neg in [
    ("valid", [(2, 4), (0, 3)], [(1, 4), (2, 5), (3, 3)]),
    ("test", [(1, 5)], [(0, 4), (4, 2)]),
]:
    torch.save(
        {
            "edge": torch.tensor(pos, dtype=torch.long),
            "weight": torch.ones(len(pos), dtype=torch.long),
            "year": torch.full((len(pos),), 2019, dtype=torch.long),
            "edge_neg": torch.tensor(neg, dtype=torch.long),
        },
        os.path.join(split, f"{name}.pt"),
    )

with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(root, os.path.join(tmp, "ogbl_collab"))
    # OGB's zips ship an empty processed/ folder, where OGB caches what it read.
    os.makedirs(os.path.join(tmp, "ogbl_collab", "processed"))
    dataset = LinkPropPredDataset(name="ogbl-collab", root=tmp)
    graph = dataset[0]
    split_edge = dataset.get_edge_split()

lines = [f"# ogb {ogb.__version__}, torch {torch.__version__}: what LinkPropPredDataset read"]


def put(name, array):
    values = np.asarray(array).reshape(-1)
    lines.append(f"{name} {list(np.asarray(array).shape)} " + " ".join(repr(v.item()) for v in values))


put("edge_index", graph["edge_index"])
put("node_feat", graph["node_feat"])
put("edge_weight", graph["edge_weight"])
put("edge_year", graph["edge_year"])
put("num_nodes", [graph["num_nodes"]])
for part in ["train", "valid", "test"]:
    for key, tensor in sorted(split_edge[part].items()):
        put(f"{part}.{key}", tensor.numpy())
with open(os.path.join(here, "ogbl_collab_expected.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
