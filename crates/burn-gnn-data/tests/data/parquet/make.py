"""Parquet fixtures for crates/burn-gnn-data/tests/io_parquet.rs, written by pyarrow, each with
the CSV pandas writes from the same table beside it (the test reads both and compares).

- edges.parquet / edges.csv: int64 src, dst and a float weight, in 4 row groups, snappy.
- nodes.parquet / nodes.csv: text ids, int32 and float64 features, a list<float> vector, a
  text label with a null, a dictionary-encoded category; zstd.
- small_ints.parquet: uint16 / int8 endpoints (converted exactly).
- timestamps.parquet: a timestamp column (a type the reader refuses).
Needs pyarrow and pandas.
"""
import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

here = os.path.dirname(os.path.abspath(__file__))

src = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5]
dst = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5, 0]
weight = [0.5, 1.0, 1.5, 2.0, 0.25, 3.0, 1e-3, 7.5, 2.5, 1.0, 0.125, 9.0]
edges = pa.table({"src": pa.array(src, pa.int64()), "dst": pa.array(dst, pa.int64()), "weight": weight})
pq.write_table(edges, os.path.join(here, "edges.parquet"), row_group_size=3, compression="snappy")
edges.to_pandas().to_csv(os.path.join(here, "edges.csv"), index=False)

ids = ["n7", "n3", "a,b", "n0"]
nodes = pa.table(
    {
        "id": ids,
        "age": pa.array([31, 25, 47, 52], pa.int32()),
        "score": pa.array([0.5, -1.25, 3.0, 1e-4], pa.float64()),
        "emb": pa.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [-1.0, 2.0]], pa.list_(pa.float32())),
        "team": ["red", None, "blue", "red"],
        "kind": pa.array(["x", "y", "x", "x"]).dictionary_encode(),
    }
)
pq.write_table(nodes, os.path.join(here, "nodes.parquet"), row_group_size=2, compression="zstd")
frame = nodes.to_pandas()
# CSV has no list type: the vector as "[a,b]", as the Parquet reader shows it.
frame["emb"] = ["[" + ",".join(repr(float(pa.scalar(v, pa.float32()).as_py())) for v in row) + "]" for row in nodes.column("emb").to_pylist()]
frame.to_csv(os.path.join(here, "nodes.csv"), index=False)

pq.write_table(
    pa.table({"s": pa.array([0, 2, 65535], pa.uint16()), "t": pa.array([1, -1, 3], pa.int8())}),
    os.path.join(here, "small_ints.parquet"),
)
pq.write_table(
    pa.table({"s": [0, 1], "t": [1, 0], "when": pa.array([1, 2], pa.timestamp("s"))}),
    os.path.join(here, "timestamps.parquet"),
)
