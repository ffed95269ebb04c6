//! Top-k per segment and column: the `k` largest (or smallest) rows of each segment with their
//! row indices, ties to the smaller row, NaN above every number.
//!
//! The rows are chosen on the host, as a [`SegmentPlan`](crate::SegmentPlan) groups its ids
//! there: one read of the data and the ids (a copy on the CPU backends, a device sync on a
//! GPU), a rayon kernel keeping a sorted buffer of `k` per segment and column
//! (`cpu::kernels::topk_rows`, comparing integer rank keys), and the rows written back to the
//! data's device. Where the data is tracked, the values are then gathered from it on its
//! device, so gradients reach the selected rows (and only them); otherwise they are read from
//! the host copy with the rows. Every backend selects the same rows.

use burn::tensor::{DType, Int, Tensor, TensorData};

use crate::cpu::kernels::{CsrPlan, topk_rows};
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
    let (device, ids) = (data.device(), g.segment_ids());
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let ids_dtype = ids.dtype();
    if k == 0 || n == 0 || c == 0 || e == 0 {
        // Nothing to select (and no kernel launched on an empty tensor).
        let values = Tensor::full([n, k, c], fill, (&device, data.dtype()));
        return (values, Tensor::full([n, k, c], -1, (&device, ids_dtype)));
    }
    let host_ids: Vec<i64> = ids.into_data().iter::<i64>().collect();
    let plan = CsrPlan::new(&host_ids, n);
    let values = data.clone().detach().into_data();
    // Without gradients to route, the values are read from the host copy with the rows
    // instead of gathered again on the device (and compared with -1 there).
    let tracked = data.is_tracked();
    let (rows, host_values) = match values.dtype() {
        DType::F32 => {
            let values = values.as_slice::<f32>().expect("f32 data");
            let rows = topk_rows(values, c, &plan, k, largest);
            let picked = (!tracked).then(|| picked_values(values, &rows, c, fill as f32));
            (rows, picked)
        }
        _ => {
            let values: Vec<f64> = values.iter::<f64>().collect();
            (topk_rows(&values, c, &plan, k, largest), None)
        }
    };
    let idx = Tensor::<3, Int>::from_data(TensorData::new(rows, [n, k, c]), (&device, ids_dtype));
    if let Some(picked) = host_values {
        let values = Tensor::from_data(TensorData::new(picked, [n, k, c]), (&device, DType::F32));
        return (values, idx);
    }
    let picked = idx.clone().reshape([n * k, c]).clamp_min(0);
    let values = data.gather(0, picked).reshape([n, k, c]);
    (values.mask_fill(idx.clone().equal_elem(-1), fill), idx)
}

/// `data[rows[i]]` of column `i % c` for every entry of `rows` (`[N, k, c]`), `fill` at -1.
fn picked_values(data: &[f32], rows: &[i64], c: usize, fill: f32) -> Vec<f32> {
    use rayon::prelude::*;
    let mut out = vec![0.0f32; rows.len()];
    out.par_chunks_mut(c)
        .zip(rows.par_chunks(c))
        .with_min_len(1024)
        .for_each(|(out, rows)| {
            for (col, (o, &r)) in out.iter_mut().zip(rows).enumerate() {
                *o = if r < 0 {
                    fill
                } else {
                    data[r as usize * c + col]
                };
            }
        });
    out
}
