//! [`knn_interpolate`]: features carried from one point set to another by inverse squared
//! distance over the nearest points (PointNet++'s feature propagation).

use burn::tensor::{Int, Tensor};
use burn_gnn_graph::knn;
use burn_segment::segment_sum;

use crate::NnError;

/// PyG's `knn_interpolate` ([Qi et al., NeurIPS 2017](https://arxiv.org/abs/1706.02413)):
/// `y_i = Σ_j w_ij x_j / Σ_j w_ij` over the `k` nearest points `j` of `pos_x` to `pos_y[i]` in
/// the same graph, `w_ij = 1 / max(|pos_x[j] - pos_y[i]|², 1e-16)`. The neighbours and weights
/// carry no gradient (as PyG's `no_grad` block); `x` does. A point without neighbours (an empty
/// graph in `batch_x`) gets NaN.
///
/// # Shapes
/// `x: [N, C]`, `pos_x: [N, D]`, `pos_y: [M, D]`, `batch_x: [N]`, `batch_y: [M]` (sorted graph
/// ids) -> `[M, C]`.
///
/// # Errors
/// [`NnError::Graph`] for a bad batch vector or positions of different widths.
pub fn knn_interpolate(
    x: Tensor<2>,
    pos_x: &Tensor<2>,
    pos_y: &Tensor<2>,
    batch_x: Option<&Tensor<1, Int>>,
    batch_y: Option<&Tensor<1, Int>>,
    k: usize,
) -> Result<Tensor<2>, NnError> {
    let m = pos_y.dims()[0];
    let assign = knn(pos_x, pos_y, k, batch_x, batch_y)?;
    let e = assign.dims()[1];
    let y_idx = assign.clone().slice([0..1, 0..e]).reshape([e]);
    let x_idx = assign.slice([1..2, 0..e]).reshape([e]);
    let (pos_x, pos_y) = (pos_x.clone().detach(), pos_y.clone().detach());
    let diff = pos_x.select(0, x_idx.clone()) - pos_y.select(0, y_idx.clone());
    let weights = diff.square().sum_dim(1).clamp_min(1e-16).recip();
    let weighted = x.select(0, x_idx) * weights.clone();
    let total = segment_sum(weights, y_idx.clone(), m);
    Ok(segment_sum(weighted, y_idx, m) / total)
}
