//! Sparse feature matrices: bag-of-words node features (Cora's are 1.3 % non-zero) multiplied
//! into a dense weight without ever forming the dense `[N, F]` input.

use std::sync::{Arc, OnceLock};

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_segment::{SegmentPlan, Segments};

use crate::GraphError;

/// A sparse matrix `[rows, cols]` in coordinate form, its entries sorted by row (then column),
/// on a device: typically a node feature matrix whose product with a weight is the first layer
/// of a model.
///
/// [`matmul`](Self::matmul) runs as one fused [`burn_segment::spmm`] (gather weight rows, scale,
/// sum per row), so its cost is `O(nnz · d)` instead of the dense `O(rows · cols · d)`, forward
/// and backward; [`with_values`](Self::with_values) swaps the stored values (e.g. for dropout,
/// which on the stored entries is dropout on the dense matrix: zeros stay zero).
#[derive(Clone, Debug)]
pub struct SparseMatrix {
    rows: Tensor<1, Int>,
    cols: Tensor<1, Int>,
    /// Value of each stored entry, `[nnz]`.
    pub values: Tensor<1>,
    shape: [usize; 2],
    /// The plans of `cols` (over the columns) and `rows` (over the rows) that `matmul` runs
    /// through, built on first use and shared by clones (the pattern never changes).
    plans: Arc<OnceLock<(SegmentPlan, SegmentPlan)>>,
}

impl SparseMatrix {
    /// The non-zero entries of `x` (read to the host once), on `x`'s device.
    pub fn from_dense(x: &Tensor<2>) -> SparseMatrix {
        let [n, f] = x.dims();
        let values: Vec<f32> = x
            .clone()
            .into_data()
            .convert::<f32>()
            .try_into_vec()
            .expect("f32 values after convert");
        let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
        for (k, &v) in values.iter().enumerate() {
            if v != 0.0 {
                rows.push((k / f) as i64);
                cols.push((k % f) as i64);
                vals.push(v);
            }
        }
        Self::sorted(rows, cols, vals, [n, f], &x.device())
    }

    /// A matrix from coordinate lists (any order; duplicates are kept and add up in
    /// products).
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] if the lists differ in length or an entry lies outside
    /// `shape`.
    pub fn from_coo(
        rows: &[i64],
        cols: &[i64],
        values: &[f32],
        shape: [usize; 2],
        device: &Device,
    ) -> Result<SparseMatrix, GraphError> {
        if rows.len() != cols.len() || rows.len() != values.len() {
            return Err(GraphError::InvalidArgument(format!(
                "SparseMatrix: {} rows, {} columns and {} values given; one of each per entry",
                rows.len(),
                cols.len(),
                values.len()
            )));
        }
        if let Some(k) = (0..rows.len()).find(|&k| {
            !(0..shape[0] as i64).contains(&rows[k]) || !(0..shape[1] as i64).contains(&cols[k])
        }) {
            return Err(GraphError::InvalidArgument(format!(
                "SparseMatrix: entry {k} at ({}, {}) lies outside the {} × {} shape",
                rows[k], cols[k], shape[0], shape[1]
            )));
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&k| (rows[k], cols[k]));
        Ok(Self::sorted(
            order.iter().map(|&k| rows[k]).collect(),
            order.iter().map(|&k| cols[k]).collect(),
            order.iter().map(|&k| values[k]).collect(),
            shape,
            device,
        ))
    }

    fn sorted(
        rows: Vec<i64>,
        cols: Vec<i64>,
        values: Vec<f32>,
        shape: [usize; 2],
        device: &Device,
    ) -> Self {
        let nnz = rows.len();
        SparseMatrix {
            rows: Tensor::from_data(TensorData::new(rows, [nnz]), device),
            cols: Tensor::from_data(TensorData::new(cols, [nnz]), device),
            values: Tensor::from_data(TensorData::new(values, [nnz]), device),
            shape,
            plans: Arc::default(),
        }
    }

    /// Row of each stored entry, `[nnz]`, non-decreasing.
    pub fn rows(&self) -> &Tensor<1, Int> {
        &self.rows
    }

    /// Column of each stored entry, `[nnz]`.
    pub fn cols(&self) -> &Tensor<1, Int> {
        &self.cols
    }

    /// `[rows, cols]`.
    pub fn shape(&self) -> [usize; 2] {
        self.shape
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.dims()[0]
    }

    /// Stored entries over `rows · cols`.
    pub fn density(&self) -> f64 {
        self.nnz() as f64 / (self.shape[0] * self.shape[1]).max(1) as f64
    }

    /// The same pattern with other values, `[nnz]` (e.g. `dropout.forward(m.values.clone())`).
    ///
    /// # Panics
    /// If `values` does not hold one value per stored entry.
    pub fn with_values(&self, values: Tensor<1>) -> SparseMatrix {
        assert_eq!(
            values.dims()[0],
            self.nnz(),
            "SparseMatrix::with_values: one value per entry"
        );
        SparseMatrix {
            values,
            ..self.clone()
        }
    }

    /// The dense matrix.
    pub fn to_dense(&self) -> Tensor<2> {
        let ids = self.rows.clone().mul_scalar(self.shape[1] as i64) + self.cols.clone();
        let cells = self.shape[0] * self.shape[1];
        burn_segment::segment_sum(self.values.clone().unsqueeze_dim::<2>(1), ids, cells)
            .reshape([self.shape[0], self.shape[1]])
    }

    /// `self · w` without forming the dense matrix; differentiable in `w` (and in the values).
    ///
    /// # Shapes
    /// `w: [cols, d]` -> `[rows, d]`.
    ///
    /// # Panics
    /// If `w` does not have `cols` rows.
    pub fn matmul(&self, w: Tensor<2>) -> Tensor<2> {
        assert_eq!(
            w.dims()[0],
            self.shape[1],
            "SparseMatrix::matmul: a {} × {} matrix times {} rows",
            self.shape[0],
            self.shape[1],
            w.dims()[0]
        );
        if self.nnz() == 0 {
            return Tensor::zeros([self.shape[0], w.dims()[1]], (&w.device(), w.dtype()));
        }
        let values = self.values.clone().cast(w.dtype()).unsqueeze_dim(1);
        let (cols, rows) = self.plans.get_or_init(|| {
            let plan = |ids: &Tensor<1, Int>, n| {
                SegmentPlan::new(ids.clone(), n).expect("entries checked at construction")
            };
            (
                plan(&self.cols, self.shape[1]),
                plan(&self.rows, self.shape[0]),
            )
        });
        SegmentPlan::spmm(w, cols, rows, Some(values))
    }

    /// The matrix on `device`.
    pub fn to_device(&self, device: &Device) -> SparseMatrix {
        SparseMatrix {
            rows: self.rows.clone().to_device(device),
            cols: self.cols.clone().to_device(device),
            values: self.values.clone().to_device(device),
            shape: self.shape,
            plans: Arc::default(),
        }
    }
}
