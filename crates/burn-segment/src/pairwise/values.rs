//! The differentiable scores of chosen pairs, formed on the device from the inputs.

use burn::tensor::{Int, Tensor};

use super::{PairScore, composite};

/// Rows scaled to unit length (`max(|x|, 1e-8)`), as cosine similarity normalises.
pub(super) fn unit_rows(x: &Tensor<2>) -> Tensor<2> {
    let norm = x.clone().square().sum_dim(1).sqrt().clamp_min(1e-8);
    x.clone() / norm
}

/// `score(x_i, y_{columns[i, r]})`, `[N, k]`, differentiable (clamped columns where -1).
pub(super) fn scores_at(
    x: &Tensor<2>,
    y: &Tensor<2>,
    columns: &Tensor<2, Int>,
    score: PairScore,
) -> Tensor<2> {
    let ([n, d], [_, k]) = (x.dims(), columns.dims());
    // A few ranks at a time, so that the gathered rows stay within a tile (outside autodiff).
    let step = (composite::TILE_ELEMENTS / (n * d).max(1)).clamp(1, k.max(1));
    let blocks: Vec<Tensor<2>> = (0..k)
        .step_by(step)
        .map(|r0| {
            let b = step.min(k - r0);
            let cols = columns.clone().slice([0..n, r0..r0 + b]).clamp_min(0);
            let picked = y.clone().select(0, cols.reshape([n * b]));
            let queries = x
                .clone()
                .reshape([n, 1, d])
                .expand([n, b, d])
                .reshape([n * b, d]);
            let s = match score {
                PairScore::Dot => (queries * picked).sum_dim(1),
                PairScore::SqEuclidean | PairScore::Euclidean => {
                    let sq = (queries - picked).square().sum_dim(1);
                    if score == PairScore::Euclidean {
                        // sqrt with a zero gradient at distance 0 (e.g. a point and itself).
                        let zero = sq.clone().equal_elem(0.0);
                        sq.clamp_min(f32::MIN_POSITIVE).sqrt().mask_fill(zero, 0.0)
                    } else {
                        sq
                    }
                }
            };
            s.reshape([n, b])
        })
        .collect();
    if blocks.is_empty() {
        return Tensor::zeros([n, 0], (&x.device(), x.dtype()));
    }
    Tensor::cat(blocks, 1)
}
