"""OGB's own evaluators on seeded inputs: writes evaluator_cases.txt, the expected values that
crates/burn-gnn-data/tests/ogb.rs checks `burn_gnn_data::ogb` against.

The inputs are not stored: both sides draw them from the same 64-bit LCG (the test has a copy
of `Draw` below), so the fixture is a few lines. Run with numpy, pandas and scikit-learn
installed and the `ogb` package installed without its torch dependency
(`pip install --no-deps ogb==1.3.6`); the evaluators are loaded straight from their files
because `ogb.*proppred/__init__.py` imports torch.
"""
import importlib.util
import math
import os

import numpy as np
import ogb
import sklearn

NAN = float("nan")


class Draw:
    def __init__(self, seed):
        self.s = seed

    def __call__(self, m):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.s >> 33) % m


def evaluator(level, name):
    path = os.path.join(os.path.dirname(ogb.__file__), f"{level}proppred", "evaluate.py")
    spec = importlib.util.spec_from_file_location(f"ogb_eval_{level}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Evaluator(name)


class DimSum(np.ndarray):
    """OGB 1.3.6's numpy path of `mrr` calls `.sum(dim=1)`, which numpy does not have (only
    torch tensors work there); this view maps `dim` to `axis` and changes nothing else."""

    def sum(self, *args, dim=None, **kwargs):
        if dim is not None:
            kwargs["axis"] = dim
        return np.asarray(np.ndarray.sum(self, *args, **kwargs))


def matrix(rows, tasks, cell):
    return np.array([[cell() for _ in range(tasks)] for _ in range(rows)], dtype=np.float64)


def main():
    out = []

    def put(name, value):
        out.append(f"{name} {float(value)!r}")

    d = Draw(1)
    y = matrix(300, 1, lambda: d(40))
    pred = np.array([[v if d(100) < 60 else d(40) for v in row] for row in y], dtype=np.float64)
    put("node_arxiv_acc", evaluator("node", "ogbn-arxiv").eval({"y_true": y, "y_pred": pred})["acc"])

    d = Draw(2)
    y = matrix(50, 112, lambda: d(2))
    y[:, 0] = 0.0  # one task with a single class: skipped
    score = matrix(50, 112, lambda: d(10) / 10)
    put("node_proteins_rocauc", evaluator("node", "ogbn-proteins").eval({"y_true": y, "y_pred": score})["rocauc"])

    d = Draw(3)
    y = matrix(200, 1, lambda: NAN if d(10) == 0 else d(2))
    score = matrix(200, 1, lambda: d(1000) / 1000)
    put("graph_molhiv_rocauc", evaluator("graph", "ogbg-molhiv").eval({"y_true": y, "y_pred": score})["rocauc"])

    d = Draw(4)
    y = matrix(60, 128, lambda: NAN if d(4) == 0 else d(2))
    y[:, 5] = NAN  # a task without labels
    y[:, 6] = np.where(np.isnan(y[:, 6]), NAN, 1.0)  # a task without negatives
    score = matrix(60, 128, lambda: d(20) / 20)
    put("graph_molpcba_ap", evaluator("graph", "ogbg-molpcba").eval({"y_true": y, "y_pred": score})["ap"])

    d = Draw(5)
    y = matrix(100, 1, lambda: NAN if d(10) == 0 else (d(2000) - 1000) / 100)
    pred = matrix(100, 1, lambda: (d(2000) - 1000) / 100)
    put("graph_molesol_rmse", evaluator("graph", "ogbg-molesol").eval({"y_true": y, "y_pred": pred})["rmse"])

    d = Draw(6)
    y = matrix(100, 1, lambda: d(37))
    pred = np.array([[v if d(10) < 3 else d(37) for v in row] for row in y], dtype=np.float64)
    put("graph_ppa_acc", evaluator("graph", "ogbg-ppa").eval({"y_true": y, "y_pred": pred})["acc"])

    for case, name, seed, n_pos, n_neg in [
        ("link_collab_hits", "ogbl-collab", 7, 100, 400),
        ("link_ddi_hits", "ogbl-ddi", 8, 50, 10),
        ("link_ppa_hits", "ogbl-ppa", 9, 300, 1000),
        ("link_vessel_rocauc", "ogbl-vessel", 10, 100, 150),
    ]:
        d = Draw(seed)
        pos = np.array([d(1000) / 1000 for _ in range(n_pos)], dtype=np.float64)
        neg = np.array([d(1000) / 1000 for _ in range(n_neg)], dtype=np.float64)
        result = evaluator("link", name).eval({"y_pred_pos": pos, "y_pred_neg": neg})
        (value,) = result.values()
        put(case, value)

    d = Draw(11)
    pos = np.array([d(20) / 20 for _ in range(40)], dtype=np.float64)
    neg = np.array([[d(20) / 20 for _ in range(30)] for _ in range(40)], dtype=np.float64)
    result = evaluator("link", "ogbl-citation2").eval({"y_pred_pos": pos, "y_pred_neg": neg.view(DimSum)})
    for key in ["mrr", "hits@1", "hits@3", "hits@10"]:
        put(f"link_citation2_{key}", result[f"{key}_list"].mean())

    d = Draw(12)
    words = ["get", "set", "name", "value", "add", "to", "list", "init"]
    refs = [[words[d(8)] for _ in range(d(4))] for _ in range(50)]
    preds = [[words[d(8)] for _ in range(d(4))] for _ in range(50)]
    result = evaluator("graph", "ogbg-code2").eval({"seq_ref": refs, "seq_pred": preds})
    for key in ["precision", "recall", "F1"]:
        put(f"graph_code2_{key}", result[key])

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "evaluator_cases.txt"), "w") as f:
        f.write(f"# ogb {ogb.__version__}, numpy {np.__version__}, scikit-learn {sklearn.__version__}\n")
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
