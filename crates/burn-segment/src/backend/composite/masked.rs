//! Composite defaults of the masked ops: fill the left-out entries, run the plain op, and (for
//! max / min) find the first kept row attaining each result.

use burn::backend::{
    Backend, Scalar, TensorMetadata, get_device_settings,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{IntDType, Shape};

use super::gather_rows;
use crate::shape::rows_shape;
use crate::{SegmentBackend, SegmentExtreme, SegmentIndex, SegmentReduction};

/// `data` with the entries `mask` leaves out set to 0: `mask` is `[E]` (one flag per row) or
/// the data's shape. What a masked sum reduces.
pub fn zero_masked_out<B: Backend>(data: FloatTensor<B>, mask: BoolTensor<B>) -> FloatTensor<B> {
    fill_masked_out::<B>(data, mask, 0.0).0
}

/// `data` with the entries `mask` leaves out set to `fill`, and where they are (a mask of the
/// data's shape; `None` for an empty tensor, where nothing is filled).
fn fill_masked_out<B: Backend>(
    data: FloatTensor<B>,
    mask: BoolTensor<B>,
    fill: f64,
) -> (FloatTensor<B>, Option<BoolTensor<B>>) {
    let shape = data.shape();
    if shape.num_elements() == 0 {
        // Burn 0.22's wgpu comparison kernels panic on empty tensors; there is nothing to fill.
        return (data, None);
    }
    let mask = if mask.shape().num_dims() < shape.num_dims() {
        let mut rows = vec![1; shape.num_dims()];
        rows[0] = shape[0];
        B::bool_expand(B::bool_reshape(mask, Shape::from(rows)), shape)
    } else {
        mask
    };
    let out = B::bool_not(mask);
    (
        B::float_mask_fill(data, out.clone(), Scalar::Float(fill)),
        Some(out),
    )
}

/// The composite of a masked softmax: `softmax` (the plain op, over ids or a plan) of the data
/// with the left-out entries at `-inf`, then 0 there (a segment with nothing kept gives NaN
/// before that, 0 after).
pub fn softmax_masked<B: Backend>(
    data: FloatTensor<B>,
    mask: BoolTensor<B>,
    softmax: impl FnOnce(FloatTensor<B>) -> FloatTensor<B>,
) -> FloatTensor<B> {
    let (data, out) = fill_masked_out::<B>(data, mask, f64::NEG_INFINITY);
    let y = softmax(data);
    match out {
        Some(out) => B::float_mask_fill(y, out, Scalar::Float(0.0)),
        None => y,
    }
}

/// Max or min of the entries `mask` keeps (`∓inf` where none is), with the first kept row
/// attaining it (the first NaN where a column holds one; -1 where none is kept): a left-out
/// row never wins, not even a tie at `∓inf`.
pub fn extreme_masked<B: SegmentBackend>(
    data: FloatTensor<B>,
    mask: BoolTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    which: SegmentExtreme,
) -> (FloatTensor<B>, IntTensor<B>) {
    let (shape, device) = (data.shape(), data.device());
    let (fill, reduction) = match which {
        SegmentExtreme::Max => (f64::NEG_INFINITY, SegmentReduction::Max),
        SegmentExtreme::Min => (f64::INFINITY, SegmentReduction::Min),
    };
    let idt = IntDType::from(ids.dtype());
    let (filled, out) = fill_masked_out::<B>(data.clone(), mask, fill);
    let values = B::segment_reduce(filled, SegmentIndex::ids(ids.clone(), n), reduction);
    let Some(out) = out else {
        let none = B::int_full(rows_shape(&shape, n), Scalar::Int(-1), &device, idt);
        return (values, none);
    };
    let bd = get_device_settings::<B>(&device).bool_dtype;
    let best = gather_rows::<B>(values.clone(), ids.clone());
    let nan_both = B::bool_and(
        B::float_is_nan(data.clone(), bd),
        B::float_is_nan(best.clone(), bd),
    );
    let ties = B::bool_or(B::float_equal(data, best, bd), nan_both);
    let candidates = B::bool_and(ties, B::bool_not(out));
    let e = shape[0];
    let mut dims = vec![1; shape.num_dims()];
    dims[0] = e;
    let rows = B::int_reshape(B::int_arange(0..e as i64, &device, idt), Shape::from(dims));
    let rows = B::int_expand(rows, shape);
    let rows = B::int_mask_fill(rows, B::bool_not(candidates), Scalar::Int(e as i64));
    // An empty segment's minimum is the dtype's largest value, also at least `e`.
    let first = B::int_segment_reduce(rows, SegmentIndex::ids(ids, n), SegmentReduction::Min);
    let none = B::int_greater_equal_elem(first.clone(), Scalar::Int(e as i64), bd);
    (values, B::int_mask_fill(first, none, Scalar::Int(-1)))
}
