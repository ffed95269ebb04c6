//! Composite defaults of the [`SegmentBackend`] ops, built from Burn
//! primitives (`select_assign`, `select`, masks) so that every backend works.
//!
//! Ids outside `[0, num_segments)` are redirected to a sentinel row `num_segments` that is
//! dropped at the end, so no backend ever writes out of bounds: those rows are ignored by the
//! reductions (their softmax values are unspecified).

use burn::backend::{
    Backend, Scalar, TensorMetadata, get_device_settings,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{
    BoolDType, DType, FloatDType, IntDType, Shape, Slice, TensorData, ops::IndexingUpdateOp as Op,
};

use crate::shape::rows_shape;
use crate::{SegmentBackend, SegmentExtreme, SegmentIndex, SegmentReduction};

mod activation;
mod fused;
mod linear;
mod masked;

pub use activation::{elu, elu_backward};
pub use fused::{attention_backward, attention_softmax, sddmm, spmm};
pub use linear::{linear, linear_weight_backward};
pub use masked::{extreme_masked, softmax_masked, zero_masked_out};

/// A tensor's data read to the host (a copy on the CPU backends, a device sync on a GPU), for
/// the ops that choose on the host; `what` names the op in the panic of a backend that cannot.
pub(crate) fn read_host<E: core::fmt::Debug>(
    read: impl Future<Output = Result<TensorData, E>>,
    what: &str,
) -> TensorData {
    let refused = || format!("burn-segment: {what} reads its inputs on the host, refused here");
    match burn_std::reader::try_read_sync(read) {
        Some(Ok(data)) => data,
        Some(Err(e)) => panic!("{}: {e:?}", refused()),
        None => panic!("{}", refused()),
    }
}

fn bool_dtype<B: Backend>(device: &B::Device) -> BoolDType {
    get_device_settings::<B>(device).bool_dtype
}

/// The ids with every out-of-range id replaced by the sentinel `n`.
fn safe_ids<B: Backend>(ids: IntTensor<B>, n: usize) -> IntTensor<B> {
    let bd = bool_dtype::<B>(&ids.device());
    let below = B::int_lower_elem(ids.clone(), Scalar::Int(0), bd);
    let above = B::int_greater_equal_elem(ids.clone(), Scalar::Int(n as i64), bd);
    B::int_mask_fill(ids, B::bool_or(below, above), Scalar::Int(n as i64))
}

fn first_rows(shape: &Shape, n: usize) -> Vec<Slice> {
    let mut slices = vec![Slice::from(0..n)];
    slices.extend(shape.as_slice()[1..].iter().map(|&d| Slice::from(0..d)));
    slices
}

fn float_head<B: Backend>(t: FloatTensor<B>, n: usize) -> FloatTensor<B> {
    let slices = first_rows(&t.shape(), n);
    B::float_slice(t, &slices)
}

fn int_head<B: Backend>(t: IntTensor<B>, n: usize) -> IntTensor<B> {
    let slices = first_rows(&t.shape(), n);
    B::int_slice(t, &slices)
}

/// The float identity of `reduction` (what a left-out or absent entry counts as).
pub(crate) fn float_identity(reduction: SegmentReduction) -> f64 {
    match reduction {
        SegmentReduction::Sum => 0.0,
        SegmentReduction::Prod => 1.0,
        SegmentReduction::Max => f64::NEG_INFINITY,
        SegmentReduction::Min => f64::INFINITY,
    }
}

/// The integer identity of `reduction` for `dtype`.
pub(crate) fn int_identity(reduction: SegmentReduction, dtype: DType) -> i64 {
    let (min, max) = match dtype {
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::U8 => (0, u8::MAX as i64),
        DType::U16 => (0, u16::MAX as i64),
        DType::U32 => (0, u32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    };
    match reduction {
        SegmentReduction::Sum => 0,
        SegmentReduction::Prod => 1,
        SegmentReduction::Max => min,
        SegmentReduction::Min => max,
    }
}

fn update_op(reduction: SegmentReduction) -> Op {
    match reduction {
        SegmentReduction::Sum => Op::Add,
        SegmentReduction::Prod => Op::Mul,
        SegmentReduction::Max => Op::Max,
        SegmentReduction::Min => Op::Min,
    }
}

/// Sum / prod over `[n + 1, ...]` (sentinel row last) with already safe ids.
fn float_add_mul_full<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    reduction: SegmentReduction,
) -> FloatTensor<B> {
    let shape = rows_shape(&data.shape(), n + 1);
    let init = B::float_full(
        shape,
        Scalar::Float(float_identity(reduction)),
        &data.device(),
        data.dtype().into(),
    );
    B::float_select_assign(init, 0, ids, data, update_op(reduction))
}

/// Composite default of [`SegmentBackend::segment_reduce`].
pub fn float_reduce<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    reduction: SegmentReduction,
) -> FloatTensor<B> {
    if n == 0 || data.shape()[0] == 0 {
        let shape = rows_shape(&data.shape(), n);
        let value = Scalar::Float(float_identity(reduction));
        return B::float_full(shape, value, &data.device(), data.dtype().into());
    }
    match reduction {
        SegmentReduction::Max => float_extreme::<B>(data, ids, n, SegmentExtreme::Max).0,
        SegmentReduction::Min => float_extreme::<B>(data, ids, n, SegmentExtreme::Min).0,
        _ => {
            let full = float_add_mul_full::<B>(data, safe_ids::<B>(ids, n), n, reduction);
            float_head::<B>(full, n)
        }
    }
}

/// Values over `[n + 1, ...]` with NaN propagated, plus the data's NaN mask.
fn float_extreme_values_full<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    extreme: SegmentExtreme,
) -> (FloatTensor<B>, BoolTensor<B>) {
    let device = data.device();
    let bd = bool_dtype::<B>(&device);
    let fd: FloatDType = data.dtype().into();
    let reduction = extreme.reduction();
    let full_shape = rows_shape(&data.shape(), n + 1);
    let init = B::float_full(
        full_shape.clone(),
        Scalar::Float(float_identity(reduction)),
        &device,
        fd,
    );
    let values = B::float_select_assign(init, 0, ids.clone(), data.clone(), update_op(reduction));
    // `select_assign(Max)` need not propagate NaN: count NaNs per segment and patch them in.
    let is_nan = B::float_is_nan(data, bd);
    let nans = B::float_select_assign(
        B::float_zeros(full_shape, &device, fd),
        0,
        ids,
        B::bool_into_float(is_nan.clone(), fd),
        Op::Add,
    );
    let has_nan = B::float_greater_elem(nans, Scalar::Float(0.0), bd);
    (
        B::float_mask_fill(values, has_nan, Scalar::Float(f64::NAN)),
        is_nan,
    )
}

/// All -1, the argument of empty segments, in the ids' dtype.
fn empty_arg<B: Backend>(ids: &IntTensor<B>, shape: &Shape) -> IntTensor<B> {
    B::int_full(
        shape.clone(),
        Scalar::Int(-1),
        &ids.device(),
        ids.dtype().into(),
    )
}

/// `[0, 1, .., E-1]` broadcast along the trailing dims of `shape`.
fn row_index<B: Backend>(shape: &Shape, device: &B::Device, dtype: IntDType) -> IntTensor<B> {
    let e = shape[0];
    let rows = B::int_arange(0..e as i64, device, dtype);
    let mut dims = vec![1; shape.num_dims()];
    dims[0] = e;
    B::int_expand(B::int_reshape(rows, Shape::from(dims)), shape.clone())
}

/// The smallest row index whose value `hit`s its segment's extreme, over `[n + 1, ...]`.
fn arg_of_hits<B: Backend>(
    hit: BoolTensor<B>,
    ids: IntTensor<B>,
    shape: &Shape,
    n: usize,
) -> IntTensor<B> {
    let device = ids.device();
    let idt: IntDType = ids.dtype().into();
    let e = shape[0] as i64;
    let rows = row_index::<B>(shape, &device, idt);
    let cand = B::int_mask_where(
        B::int_full(shape.clone(), Scalar::Int(e), &device, idt),
        hit,
        rows,
    );
    let init = B::int_full(rows_shape(shape, n + 1), Scalar::Int(e), &device, idt);
    let arg = int_head::<B>(B::int_select_assign(init, 0, ids, cand, Op::Min), n);
    let bd = bool_dtype::<B>(&device);
    B::int_mask_fill(
        arg.clone(),
        B::int_equal_elem(arg, Scalar::Int(e), bd),
        Scalar::Int(-1),
    )
}

/// Composite default of [`SegmentBackend::segment_extreme`].
pub fn float_extreme<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    extreme: SegmentExtreme,
) -> (FloatTensor<B>, IntTensor<B>) {
    let shape = data.shape();
    if n == 0 || shape[0] == 0 {
        let reduction = extreme.reduction();
        let arg = empty_arg::<B>(&ids, &rows_shape(&shape, n));
        return (float_reduce::<B>(data, ids, n, reduction), arg);
    }
    let ids = safe_ids::<B>(ids, n);
    let (full, is_nan) = float_extreme_values_full::<B>(data.clone(), ids.clone(), n, extreme);
    let bd = bool_dtype::<B>(&data.device());
    let picked = B::float_select(full.clone(), 0, ids.clone());
    let both_nan = B::bool_and(is_nan, B::float_is_nan(picked.clone(), bd));
    let hit = B::bool_or(B::float_equal(data, picked, bd), both_nan);
    (
        float_head::<B>(full, n),
        arg_of_hits::<B>(hit, ids, &shape, n),
    )
}

// ANCHOR: composite_softmax
/// Composite default of [`SegmentBackend::segment_softmax`].
pub fn softmax<B: Backend>(data: FloatTensor<B>, ids: IntTensor<B>, n: usize) -> FloatTensor<B> {
    if n == 0 || data.shape()[0] == 0 {
        return B::float_zeros(data.shape(), &data.device(), data.dtype().into());
    }
    let ids = safe_ids::<B>(ids, n);
    let bd = bool_dtype::<B>(&data.device());
    let (max, _) =
        float_extreme_values_full::<B>(data.clone(), ids.clone(), n, SegmentExtreme::Max);
    // Shift by the maximum, or by 0 where it is -inf (all logits -inf: 0/0 = NaN).
    let all_neg_inf = B::float_equal_elem(max.clone(), Scalar::Float(f64::NEG_INFINITY), bd);
    let shift = B::float_mask_fill(max, all_neg_inf, Scalar::Float(0.0));
    let exp = B::float_exp(B::float_sub(data, B::float_select(shift, 0, ids.clone())));
    let sum = float_add_mul_full::<B>(exp.clone(), ids.clone(), n, SegmentReduction::Sum);
    B::float_div(exp, B::float_select(sum, 0, ids))
}
// ANCHOR_END: composite_softmax

/// Composite default of [`SegmentBackend::int_segment_reduce`].
pub fn int_reduce<B: Backend>(
    data: IntTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    reduction: SegmentReduction,
) -> IntTensor<B> {
    let dtype = data.dtype();
    if n == 0 || data.shape()[0] == 0 {
        let value = Scalar::Int(int_identity(reduction, dtype));
        return B::int_full(
            rows_shape(&data.shape(), n),
            value,
            &data.device(),
            dtype.into(),
        );
    }
    let ids = safe_ids::<B>(ids, n);
    let shape = rows_shape(&data.shape(), n + 1);
    let init = B::int_full(
        shape,
        Scalar::Int(int_identity(reduction, dtype)),
        &data.device(),
        dtype.into(),
    );
    int_head::<B>(
        B::int_select_assign(init, 0, ids, data, update_op(reduction)),
        n,
    )
}

/// Composite default of [`SegmentBackend::int_segment_extreme`].
pub fn int_extreme<B: Backend>(
    data: IntTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    extreme: SegmentExtreme,
) -> (IntTensor<B>, IntTensor<B>) {
    let shape = data.shape();
    let reduction = extreme.reduction();
    if n == 0 || shape[0] == 0 {
        let arg = empty_arg::<B>(&ids, &rows_shape(&shape, n));
        return (int_reduce::<B>(data, ids, n, reduction), arg);
    }
    let ids = safe_ids::<B>(ids, n);
    let dtype = data.dtype();
    let init = B::int_full(
        rows_shape(&shape, n + 1),
        Scalar::Int(int_identity(reduction, dtype)),
        &data.device(),
        dtype.into(),
    );
    let full = B::int_select_assign(init, 0, ids.clone(), data.clone(), update_op(reduction));
    let bd = bool_dtype::<B>(&data.device());
    let hit = B::int_equal(data, B::int_select(full.clone(), 0, ids.clone()), bd);
    (
        int_head::<B>(full, n),
        arg_of_hits::<B>(hit, ids, &shape, n),
    )
}

/// Number of nonzero entries per segment and column (NaN counts, `±0` does not), in the ids'
/// dtype: the flags `data != 0` summed as integers.
pub fn count_nonzero<B: SegmentBackend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
) -> IntTensor<B> {
    let (shape, device, idt) = (data.shape(), data.device(), IntDType::from(ids.dtype()));
    if shape.num_elements() == 0 {
        // No comparison kernel on an empty tensor (Burn 0.22's wgpu ones panic).
        return B::int_zeros(rows_shape(&shape, n), &device, idt);
    }
    let nonzero = B::float_not_equal_elem(data, Scalar::Float(0.0), bool_dtype::<B>(&device));
    let counts = B::bool_into_int(nonzero, idt);
    B::int_segment_reduce(counts, SegmentIndex::ids(ids, n), SegmentReduction::Sum)
}

/// Rows `ids` of `data` through the backend's gather, the ids given over `data`'s rows.
pub(crate) fn gather_rows<B: SegmentBackend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
) -> FloatTensor<B> {
    let rows = data.shape()[0];
    B::segment_gather(data, SegmentIndex::ids(ids, rows))
}

/// Composite default of [`SegmentBackend::segment_count`].
pub fn count<B: Backend>(ids: IntTensor<B>, n: usize) -> IntTensor<B> {
    let device = ids.device();
    let idt: IntDType = ids.dtype().into();
    let e = ids.shape()[0];
    if n == 0 || e == 0 {
        return B::int_zeros(Shape::from([n]), &device, idt);
    }
    let ids = safe_ids::<B>(ids, n);
    let init = B::int_zeros(Shape::from([n + 1]), &device, idt);
    let ones = B::int_ones(Shape::from([e]), &device, idt);
    int_head::<B>(B::int_select_assign(init, 0, ids, ones, Op::Add), n)
}

/// Composite default of [`SegmentBackend::segment_gather`]:
/// a select from `data` with a zero row appended, which out-of-range ids are redirected to.
pub fn gather<B: Backend>(data: FloatTensor<B>, ids: IntTensor<B>) -> FloatTensor<B> {
    let shape = data.shape();
    let (n, e) = (shape[0], ids.shape()[0]);
    let dtype: FloatDType = data.dtype().into();
    if e == 0 {
        // An empty index corrupts later results on wgpu through Fusion: never select with one.
        return B::float_zeros(rows_shape(&shape, 0), &data.device(), dtype);
    }
    let pad = B::float_zeros(rows_shape(&shape, 1), &data.device(), dtype);
    let padded = B::float_cat(vec![data, pad], 0);
    B::float_select(padded, 0, safe_ids::<B>(ids, n))
}

/// Composite default of [`SegmentBackend::int_segment_gather`].
pub fn int_gather<B: Backend>(data: IntTensor<B>, ids: IntTensor<B>) -> IntTensor<B> {
    let shape = data.shape();
    let (n, e) = (shape[0], ids.shape()[0]);
    let dtype: IntDType = data.dtype().into();
    if e == 0 {
        return B::int_zeros(rows_shape(&shape, 0), &data.device(), dtype);
    }
    let pad = B::int_zeros(rows_shape(&shape, 1), &data.device(), dtype);
    let padded = B::int_cat(vec![data, pad], 0);
    B::int_select(padded, 0, safe_ids::<B>(ids, n))
}
