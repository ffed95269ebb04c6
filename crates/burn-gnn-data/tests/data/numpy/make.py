"""Writes the NumPy fixtures of tests/io_numpy.rs with NumPy itself (run from this folder:
`python make.py`; CI never runs it, the files are committed).

Every array's value at multi-index (i, j, ...) is a formula the test recomputes on its own:
`a2[i, j] = 10 * i + j - 5` (shape (3, 4)), `a3[i, j, k] = 100 * i + 10 * j + k` (shape (2, 3, 2)),
written in each dtype, byte order and memory order the reader must take.
"""
import numpy as np

i, j = np.indices((3, 4))
a2 = 10 * i + j - 5
a3 = np.fromfunction(lambda i, j, k: 100 * i + 10 * j + k, (2, 3, 2), dtype=np.int64)

for dtype in ["<f4", ">f4", "<f8", ">f8", "<i4", ">i4", "<i8", ">i8"]:
    for order in ["C", "F"]:
        name = f"a2_{dtype[1:]}_{'le' if dtype[0] == '<' else 'be'}_{order}.npy"
        arr = np.asarray(a2, dtype=dtype, order=order)
        assert arr.flags[f"{order}_CONTIGUOUS"] and arr.dtype.str == dtype
        np.save(name, arr)
np.save("a3_i8_F.npy", np.asfortranarray(a3))
np.save("mask_b1.npy", (a2 % 3 == 0))
np.save("scalar_i8.npy", np.int64(-7))
np.save("u2.npy", np.arange(4, dtype="<u2"))
np.save("strings.npy", np.array(["a", "b"]))

# A small graph in PyG's names: 4 nodes, 5 directed edges, features, labels, masks.
edge_index = np.array([[0, 1, 1, 2, 3], [1, 0, 2, 3, 0]], dtype=np.int64)
x = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
y = np.array([1, 0, 2, 1], dtype=np.int64)
train_mask = np.array([True, True, False, False])
edge_attr = np.arange(10, dtype=np.float64).reshape(5, 2)
np.savez("graph.npz", edge_index=edge_index, x=x, y=y, train_mask=train_mask, edge_attr=edge_attr)
# The same, compressed, with a Fortran-order big-endian edge index and int32 labels.
np.savez_compressed(
    "graph_compressed.npz",
    edge_index=np.asfortranarray(edge_index.astype(">i8")),
    x=x,
    y=y.astype(np.int32),
    train_mask=train_mask,
    edge_attr=edge_attr,
)
