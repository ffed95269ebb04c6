//! Top-k per segment and column: the `k` largest (or smallest) rows of each segment with their
//! row indices, ties to the smaller row, NaN above every number.
//!
//! One backend op, `SegmentBackend::segment_topk` (and its planned form), chooses the rows and
//! reads their values. Its default chooses on the host (a device sync on a GPU); the CPU
//! backends run the same host kernel on their data in place, and wgpu a kernel for `k ≤ 32`
//! over sorted or planned ids. Where the data
//! is tracked, the values are gathered from it at the rows on its device, so gradients reach the
//! selected rows (and only them). Every backend selects the same rows.

use burn::tensor::{Int, Tensor};

use crate::{SegmentIds, Segments};

/// The `k` largest (or smallest) rows of each segment, per column: values `[N, k, C]` and rows
/// `[N, k, C]` Int, as [`SegmentStatistics::topk`](crate::SegmentStatistics::topk) (ties to the smaller row, NaN above every number,
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
    topk(
        &SegmentIds::new(segment_ids, num_segments),
        data,
        k,
        largest,
    )
}

/// [`segment_topk`] over `g`, whose backend op gives the rows (and the values of untracked
/// data): tracked data is gathered at the rows on its own device, so gradients reach the
/// selected rows, and only them.
pub(crate) fn topk<S: Segments + ?Sized>(
    g: &S,
    data: Tensor<2>,
    k: usize,
    largest: bool,
) -> (Tensor<3>, Tensor<3, Int>) {
    g.check_rows(data.dims()[0]);
    let [_, c] = data.dims();
    let n = g.num_segments();
    let (values, rows) = g.topk_rows(data.clone().detach(), k, largest);
    if !data.is_tracked() || k == 0 || n == 0 || c == 0 || data.dims()[0] == 0 {
        return (values, rows);
    }
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let picked = rows.clone().reshape([n * k, c]).clamp_min(0);
    let values = data.gather(0, picked).reshape([n, k, c]);
    (values.mask_fill(rows.clone().equal_elem(-1), fill), rows)
}
