//! Top-k per segment and column: the `k` largest (or smallest) rows of each segment with their
//! row indices, ties to the smaller row, NaN above every number.
//!
//! Composed from the masked extremes, one round per rank: each round takes the extreme of the
//! rows not taken yet (NaN first for the largest; for the smallest, the numbers first and NaN
//! after them), then marks its row taken. So every backend runs it through its kernels, with
//! the masked extremes' tie rule, in `k` rounds of segment reductions. The values are gathered
//! from the data by the indices, so gradients reach the selected rows (and only them).

use burn::tensor::{Bool, Int, Tensor, ops::IndexingUpdateOp};

use crate::{SegmentIds, Segments};

/// The `k` largest (or smallest) rows of each segment, per column: values `[N, k, C]` and rows
/// `[N, k, C]` Int, as [`Segments::topk`] (ties to the smaller row, NaN above every number,
/// `∓inf` and -1 where a segment has fewer than `k` rows).
///
/// # Shapes
/// `data: [E, C]`, `segment_ids: [E]` -> `([N, k, C], [N, k, C] Int)`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::flex();
/// let x = Tensor::<2>::from_floats([[3.0], [f32::NAN], [3.0], [7.0], [1.0]], &device);
/// let ids = Tensor::<1, Int>::from_ints([0, 0, 0, 1, 2], &device);
/// let (values, rows) = burn_segment::segment_topk(x, ids, 3, 2, true);
/// let rows: Vec<i64> = rows.into_data().iter::<i64>().collect();
/// assert_eq!(rows, [1, 0, 3, -1, 4, -1]); // NaN first, then the first of the tied 3s
/// let values: Vec<f32> = values.into_data().iter::<f32>().collect();
/// assert!(values[0].is_nan() && values[1] == 3.0 && values[3] == f32::NEG_INFINITY);
/// ```
pub fn segment_topk(
    data: Tensor<2>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    k: usize,
    largest: bool,
) -> (Tensor<3>, Tensor<3, Int>) {
    SegmentIds::new(segment_ids, num_segments).topk(data, k, largest)
}

/// [`Segments::topk`] over `g`.
pub(crate) fn topk<S: Segments + ?Sized>(
    g: &S,
    data: Tensor<2>,
    k: usize,
    largest: bool,
) -> (Tensor<3>, Tensor<3, Int>) {
    let ([e, c], n) = (data.dims(), g.num_segments());
    let (device, ids_dtype) = (data.device(), g.segment_ids().dtype());
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    if k == 0 || n == 0 || c == 0 || e == 0 {
        // Nothing to select (and no kernel launched on an empty tensor).
        let values = Tensor::full([n, k, c], fill, (&device, data.dtype()));
        return (values, Tensor::full([n, k, c], -1, (&device, ids_dtype)));
    }
    let x = data.clone().detach();
    let nan = x.clone().is_nan();
    let mut taken = Tensor::<2, Int>::zeros([e, c], (&device, ids_dtype));
    let mut ranks = Vec::with_capacity(k);
    for _ in 0..k {
        let free: Tensor<2, Bool> = taken.clone().equal_elem(0);
        let idx = if largest {
            // The masked maximum lets NaN win and breaks ties to the smaller row.
            g.masked(free).argmax(x.clone())
        } else {
            let numbers = free.clone().bool_and(nan.clone().bool_not());
            let smallest = g.masked(numbers).argmin(x.clone());
            let first_nan = g.masked(free.bool_and(nan.clone())).argmax(x.clone());
            smallest
                .clone()
                .mask_where(smallest.equal_elem(-1), first_nan)
        };
        let hit = idx.clone().greater_equal_elem(0).int().cast(ids_dtype);
        taken = taken.scatter(0, idx.clone().clamp_min(0), hit, IndexingUpdateOp::Add);
        ranks.push(idx);
    }
    let idx: Tensor<3, Int> = Tensor::stack(ranks, 1);
    let rows = idx.clone().reshape([n * k, c]).clamp_min(0);
    let values = data.gather(0, rows).reshape([n, k, c]);
    (values.mask_fill(idx.clone().equal_elem(-1), fill), idx)
}
