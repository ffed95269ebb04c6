//! Median and quantiles of each segment's rows, per column, with numpy's interpolations.
//!
//! The witness rows are chosen on the host, as top-k's are (one read of the data and ids: a
//! device sync on a GPU): each column sorted stably, so among equal values the smaller row is
//! the witness. The value is then interpolated on the data's device from the witnesses, so the
//! gradient reaches them: all of it to the single witness, or `1 − t` and `t` to the two of a
//! linear interpolation.

pub use crate::host::QuantileInterpolation;
use burn::tensor::{DType, Int, Tensor, TensorData};

use crate::host::{CsrPlan, quantile_rows};
use crate::{SegmentError, SegmentIds, Segments};

/// The `q`-quantile of each segment's rows, per column: `[E, ...] -> [N, ...]`. NaN in gives
/// NaN out; an empty segment gives NaN. The gradient reaches the witness rows (the smaller row
/// among equal values).
///
/// # Errors
/// [`SegmentError::QuantileOutOfRange`] unless `0 ≤ q ≤ 1`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// use burn_segment::QuantileInterpolation;
/// let device = Device::flex();
/// let x = Tensor::<2>::from_floats([[1.0], [4.0], [2.0], [8.0], [5.0]], &device);
/// let ids = Tensor::<1, Int>::from_ints([0, 0, 0, 0, 1], &device);
/// // Segment 0 sorted: 1, 2, 4, 8; q = 0.5 sits half-way between 2 and 4.
/// let q = burn_segment::segment_quantile(x, ids, 2, 0.5, QuantileInterpolation::Linear);
/// assert_eq!(q.unwrap().into_data().to_vec::<f32>().unwrap(), [3.0, 5.0]);
/// ```
pub fn segment_quantile<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    q: f64,
    interpolation: QuantileInterpolation,
) -> Result<Tensor<D>, SegmentError> {
    quantile(
        &SegmentIds::new(segment_ids, num_segments),
        data,
        q,
        interpolation,
    )
}

/// The median of each segment's rows, per column: the lower of the two middle values for an
/// even count (`quantile(0.5, Lower)`, as torch's `median`); NaN for an empty segment or a
/// column holding NaN.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
pub fn segment_median<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D> {
    median(&SegmentIds::new(segment_ids, num_segments), data)
}

/// [`segment_median`] over `g`.
pub(crate) fn median<const D: usize, S: Segments + ?Sized>(g: &S, data: Tensor<D>) -> Tensor<D> {
    quantile(g, data, 0.5, QuantileInterpolation::Lower).expect("0.5 is a quantile")
}

/// [`segment_quantile`] over `g`.
pub(crate) fn quantile<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
    q: f64,
    interp: QuantileInterpolation,
) -> Result<Tensor<D>, SegmentError> {
    g.check_rows(data.dims()[0]);
    if !(0.0..=1.0).contains(&q) {
        return Err(SegmentError::QuantileOutOfRange { q });
    }
    let (dims, n) = (data.dims(), g.num_segments());
    let (e, d) = (dims[0], dims[1..].iter().product::<usize>());
    let mut out_dims = dims;
    out_dims[0] = n;
    let device = data.device();
    if e == 0 || n == 0 || d == 0 {
        return Ok(crate::statistics::nan_tensor(out_dims, &data));
    }
    let ids: Vec<i64> = g.segment_ids().into_data().iter::<i64>().collect();
    let plan = CsrPlan::new(&ids, n);
    let values = data.clone().detach().into_data();
    let (lo, hi, t) = match values.dtype() {
        DType::F32 => quantile_rows(values.as_slice::<f32>().expect("f32"), d, &plan, q, interp),
        _ => {
            let values: Vec<f64> = values.iter::<f64>().collect();
            quantile_rows(&values, d, &plan, q, interp)
        }
    };
    let rows = |r: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(r, [n, d]), &device);
    let (lo, hi) = (rows(lo), rows(hi));
    let empty = lo.clone().equal_elem(-1);
    let flat = data.reshape([e, d]);
    let (a, b) = (
        flat.clone().gather(0, lo.clamp_min(0)),
        flat.gather(0, hi.clamp_min(0)),
    );
    let t = Tensor::<2>::from_data(TensorData::new(t, [n, d]), (&device, a.dtype()));
    // numpy's lerp: from the nearer end, so that an infinite end stays exact; `t = 0` is `a`.
    let diff = b.clone() - a.clone();
    let from_a = a.clone() + diff.clone() * t.clone();
    let from_b = b - diff * (t.clone().neg() + 1.0);
    let value = from_a
        .mask_where(t.clone().greater_equal_elem(0.5), from_b)
        .mask_where(t.equal_elem(0.0), a);
    Ok(value.mask_fill(empty, f64::NAN).reshape(out_dims))
}
