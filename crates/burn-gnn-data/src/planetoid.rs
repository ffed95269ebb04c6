//! [`Planetoid`]: Cora, CiteSeer and PubMed with PyG's public split.

use std::borrow::Cow;

use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;

use crate::DataError;
use crate::pickle::{self, CsrMatrix};

/// A Planetoid citation graph with PyG's public split (`Planetoid(root, name, split="public")`).
#[derive(Clone, Debug)]
pub struct Planetoid {
    /// `cora`, `citeseer` or `pubmed`.
    pub name: String,
    /// Nodes.
    pub num_nodes: usize,
    /// Features per node.
    pub num_features: usize,
    /// Classes.
    pub num_classes: usize,
    /// Node features, row-major `[num_nodes, num_features]`.
    pub features: Vec<f32>,
    /// Class of each node (CiteSeer's isolated test-range nodes without a label get 0, as PyG).
    pub labels: Vec<i64>,
    /// Edge senders: undirected (both directions), no self loops, no duplicates, sorted.
    pub senders: Vec<i64>,
    /// Edge receivers.
    pub receivers: Vec<i64>,
    /// The 20-per-class training nodes.
    pub train_mask: Vec<bool>,
    /// The 500 validation nodes.
    pub val_mask: Vec<bool>,
    /// The 1000 test nodes.
    pub test_mask: Vec<bool>,
}

/// The bytes of one raw file, `ind.<name>.<suffix>`, given its suffix.
type Files<'a> = dyn Fn(&str) -> Result<Cow<'static, [u8]>, DataError> + 'a;

fn load_pickle<T>(
    files: &Files,
    name: &str,
    suffix: &str,
    f: impl FnOnce(&pickle::Pickle) -> Result<T, DataError>,
) -> Result<T, DataError> {
    let bytes = files(suffix)?;
    let p = pickle::parse(&bytes)?;
    f(&p).map_err(|e| match e {
        DataError::Pickle(m) => DataError::Pickle(format!("ind.{name}.{suffix}: {m}")),
        other => other,
    })
}

fn dense(m: &CsrMatrix) -> Vec<f32> {
    let mut out = vec![0f32; m.rows * m.cols];
    for r in 0..m.rows {
        for k in m.indptr[r]..m.indptr[r + 1] {
            out[r * m.cols + m.indices[k]] = m.data[k] as f32;
        }
    }
    out
}

/// `[rows, classes]` one-hot labels as an array (numpy), checked.
fn one_hot(p: &pickle::Pickle, what: &str) -> Result<(usize, usize, Vec<f64>), DataError> {
    let a = p.array(p.root)?;
    let [rows, classes] = a.shape[..] else {
        return Err(DataError::Inconsistent(format!(
            "{what} labels are not a 2-D array"
        )));
    };
    Ok((rows, classes, a.values))
}

impl Planetoid {
    /// Parses the raw files of `name` (lowercase, known), read through `files`.
    pub(crate) fn from_files(
        name: &str,
        files: impl Fn(&str) -> Result<Cow<'static, [u8]>, DataError>,
    ) -> Result<Planetoid, DataError> {
        let files: &Files = &files;
        let name = name.to_string();
        let n = &name;
        let x = load_pickle(files, n, "x", |p| p.csr(p.root))?;
        let tx = load_pickle(files, n, "tx", |p| p.csr(p.root))?;
        let allx = load_pickle(files, n, "allx", |p| p.csr(p.root))?;
        let (y_rows, classes, _) = load_pickle(files, n, "y", |p| one_hot(p, "y"))?;
        let (ty_rows, ty_classes, ty) = load_pickle(files, n, "ty", |p| one_hot(p, "ty"))?;
        let (ally_rows, ally_classes, ally) =
            load_pickle(files, n, "ally", |p| one_hot(p, "ally"))?;
        let adjacency = load_pickle(files, n, "graph", |p| p.adjacency(p.root))?;
        let test_text = files("test.index")?;
        let test_index: Vec<usize> = std::str::from_utf8(&test_text)
            .map_err(|_| DataError::Inconsistent("test.index is not text".into()))?
            .split_whitespace()
            .map(|t| {
                t.parse::<usize>()
                    .map_err(|_| DataError::Inconsistent(format!("test.index entry `{t}`")))
            })
            .collect::<Result<_, _>>()?;
        let f = allx.cols;
        if x.cols != f
            || tx.cols != f
            || ty_classes != classes
            || ally_classes != classes
            || tx.rows != ty_rows
            || allx.rows != ally_rows
            || test_index.is_empty()
        {
            return Err(DataError::Inconsistent(format!(
                "{n}: feature widths, label widths or row counts disagree"
            )));
        }
        let _ = (x, y_rows); // x / y are the first rows of allx / ally: the split is by position.

        // PyG: CiteSeer has isolated nodes inside the test range; pad tx/ty with zero rows.
        let (lo, hi) = (
            *test_index.iter().min().expect("non-empty"),
            *test_index.iter().max().expect("non-empty"),
        );
        let mut sorted = test_index.clone();
        sorted.sort_unstable();
        let (tx_rows, mut txd, mut tyd) = if n == "citeseer" {
            let len = hi - lo + 1;
            let (mut xs, mut ys) = (vec![0f32; len * f], vec![0f64; len * classes]);
            let dx = dense(&tx);
            for (row, &t) in sorted.iter().enumerate() {
                let at = t - lo;
                xs[at * f..(at + 1) * f].copy_from_slice(&dx[row * f..(row + 1) * f]);
                ys[at * classes..(at + 1) * classes]
                    .copy_from_slice(&ty[row * classes..(row + 1) * classes]);
            }
            (len, xs, ys)
        } else {
            (tx.rows, dense(&tx), ty)
        };
        let num_nodes = allx.rows + tx_rows;
        if hi >= num_nodes || lo < allx.rows {
            return Err(DataError::Inconsistent(format!(
                "test indices {lo}..={hi} outside {}..{num_nodes}",
                allx.rows
            )));
        }
        let mut features = dense(&allx);
        features.append(&mut txd);
        let mut onehot = ally;
        onehot.append(&mut tyd);
        // Labels: argmax, first maximum (0 for all-zero rows, as torch's max).
        let mut labels: Vec<i64> = onehot
            .chunks(classes)
            .map(|row| {
                row.iter()
                    .enumerate()
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |b, (i, &v)| if v > b.1 { (i, v) } else { b },
                    )
                    .0 as i64
            })
            .collect();
        // PyG: x[test_index] = x[sorted_test_index], likewise y.
        let (xs, ls) = (features.clone(), labels.clone());
        for (&t, &s) in test_index.iter().zip(&sorted) {
            features[t * f..(t + 1) * f].copy_from_slice(&xs[s * f..(s + 1) * f]);
            labels[t] = ls[s];
        }
        let mask = |ids: &mut dyn Iterator<Item = usize>| {
            let mut m = vec![false; num_nodes];
            ids.for_each(|i| m[i] = true);
            m
        };
        let train_mask = mask(&mut (0..y_rows));
        let val_mask = mask(&mut (y_rows..y_rows + 500));
        let test_mask = mask(&mut test_index.iter().copied());

        // Edges: both directions, no self loops, no duplicates, sorted (PyG's
        // edge_index_from_dict + to_undirected).
        let mut edges = Vec::new();
        for (k, vs) in &adjacency {
            for &v in vs {
                let (a, b) = (*k, v);
                if a < 0 || b < 0 || a as usize >= num_nodes || b as usize >= num_nodes {
                    return Err(DataError::Inconsistent(format!(
                        "edge {a} -> {b} outside 0..{num_nodes}"
                    )));
                }
                if a != b {
                    edges.push((a, b));
                    edges.push((b, a));
                }
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let (senders, receivers) = edges.into_iter().unzip();
        Ok(Planetoid {
            name: name.clone(),
            num_nodes,
            num_features: f,
            num_classes: classes,
            features,
            labels,
            senders,
            receivers,
            train_mask,
            val_mask,
            test_mask,
        })
    }

    /// Divides each node's features by their sum (PyG's `NormalizeFeatures`); all-zero rows
    /// stay zero.
    pub fn row_normalize(&mut self) {
        for row in self.features.chunks_mut(self.num_features) {
            let s: f32 = row.iter().sum();
            if s != 0.0 {
                row.iter_mut().for_each(|v| *v /= s);
            }
        }
    }

    /// The graph on `device`, node features `[num_nodes, num_features]` as its `nodes`.
    ///
    /// # Errors
    /// None for a loaded dataset; the builder's checks run anyway.
    pub fn graph(&self, device: &Device) -> Result<GraphsTuple, DataError> {
        let x = Tensor::<2>::from_data(
            TensorData::new(self.features.clone(), [self.num_nodes, self.num_features]),
            device,
        );
        let g = GraphsTuple::from_coo(&self.senders, &self.receivers, self.num_nodes, device)?;
        Ok(g.with_nodes(x)?)
    }

    /// Labels, `[num_nodes]` Int.
    pub fn labels(&self, device: &Device) -> Tensor<1, Int> {
        Tensor::from_data(
            TensorData::new(self.labels.clone(), [self.num_nodes]),
            device,
        )
    }

    /// A mask as a tensor, `[num_nodes]` Bool.
    pub fn mask(mask: &[bool], device: &Device) -> Tensor<1, Bool> {
        Tensor::from_data(TensorData::new(mask.to_vec(), [mask.len()]), device)
    }

    /// The rows a mask selects, in increasing order, as an index tensor `[rows]` Int (for
    /// `select`); any split mask works, not only Planetoid's.
    pub fn mask_indices(mask: &[bool], device: &Device) -> Tensor<1, Int> {
        let rows: Vec<i64> = (0..mask.len() as i64)
            .filter(|&i| mask[i as usize])
            .collect();
        let n = rows.len();
        Tensor::from_data(TensorData::new(rows, [n]), device)
    }
}
