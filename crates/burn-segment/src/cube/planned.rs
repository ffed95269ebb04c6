//! Planned ops on wgpu: the rows of unsorted ids are put in the plan's grouped order (a gather
//! through its permutation, stable), so every planned reduction runs the sorted CSR kernels —
//! no atomics, bitwise repeatable, sums equal to the CPU kernels' bits for segments of up to
//! `CHUNK_ROWS` rows — and results that are per row go back to the rows' own order.

use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::{Scalar, TensorMetadata, get_device_settings};
use burn::tensor::{DType, Shape, ops::IndexingUpdateOp};
use burn_cubecl::{CubeBackend, tensor::CubeTensor};

use super::{attention, extreme, fused, reduce, softmax, topk};
use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentExtreme, SegmentReduction};

type Plan = SegmentPlanPrimitive<CubeBackend>;

/// Whether the kernels take this plan's index tensors (and so the planned path applies).
pub(super) fn takes(p: &Plan) -> bool {
    let ok = |t: &CubeTensor| matches!(t.dtype, DType::I32 | DType::I64);
    ok(&p.segment_ids) && ok(&p.order) && p.order.dtype == p.segment_ids.dtype
}

/// The rows (dim 0) of `values` in `p`'s grouped order.
fn in_order(values: CubeTensor, p: &Plan, int: bool) -> CubeTensor {
    match (p.sorted, int) {
        (true, _) => values,
        (false, true) => CubeBackend::int_select(values, 0, p.order.clone()),
        (false, false) => CubeBackend::float_select(values, 0, p.order.clone()),
    }
}

/// Float rows in `p`'s grouped order, back in the rows' own order (row `k` of the grouped
/// order is row `order[k]`: each output row is written once).
fn back_in_order(grouped: CubeTensor, p: &Plan) -> CubeTensor {
    if p.sorted {
        return grouped;
    }
    let zeros = CubeBackend::float_zeros(grouped.shape(), &grouped.device, grouped.dtype.into());
    CubeBackend::float_select_assign(zeros, 0, p.order.clone(), grouped, IndexingUpdateOp::Add)
}

/// The rows (dim 0) of `data` in the plan's grouped order, and the ids in that order (sorted).
fn grouped(data: CubeTensor, p: &Plan, int: bool) -> (CubeTensor, CubeTensor) {
    (
        in_order(data, p, int),
        in_order(p.segment_ids.clone(), p, true),
    )
}

/// Sum, product, max or min through the plan.
pub(super) fn reduce_planned(
    data: CubeTensor,
    p: &Plan,
    r: SegmentReduction,
    int: bool,
) -> CubeTensor {
    let (data, ids) = grouped(data, p, int);
    reduce(data, ids, p.num_segments, r)
}

/// Max or min with arguments through the plan; an argument (a row of the grouped order) is
/// mapped back to the row it came from.
pub(super) fn extreme_planned(
    data: CubeTensor,
    p: &Plan,
    which: SegmentExtreme,
    int: bool,
) -> (CubeTensor, CubeTensor) {
    let (data, ids) = grouped(data, p, int);
    let (values, arg) = extreme(data, None, ids, p.num_segments, which);
    (values, original_rows(arg, p))
}

/// Top-k through the plan (the grouped ids are sorted), rows mapped back as for
/// [`extreme_planned`].
pub(super) fn topk_planned(
    data: CubeTensor,
    p: &Plan,
    k: usize,
    largest: bool,
) -> (CubeTensor, CubeTensor) {
    let (data, ids) = grouped(data, p, false);
    let (values, rows) = topk::topk(data, ids, p.num_segments, k, largest, true)
        .expect("the grouped ids are sorted");
    (values, original_rows(rows, p))
}

/// Rows of the grouped order (an argument or a top-k row, -1 for none) as the rows they came
/// from.
fn original_rows(arg: CubeTensor, p: &Plan) -> CubeTensor {
    if p.sorted || arg.shape().num_elements() == 0 {
        return arg;
    }
    let shape = arg.shape();
    let flat = CubeBackend::int_reshape(arg.clone(), Shape::new([shape.num_elements()]));
    let picked = CubeBackend::int_clamp_min(flat, Scalar::Int(0));
    let original = CubeBackend::int_select(p.order.clone(), 0, picked);
    let original = CubeBackend::int_reshape(original, shape);
    // -1 (an empty segment) stays -1.
    let bool_dtype = get_device_settings::<CubeBackend>(&arg.device).bool_dtype;
    let empty = CubeBackend::int_lower_elem(arg.clone(), Scalar::Int(0), bool_dtype);
    CubeBackend::int_mask_where(original, empty, arg)
}

/// Softmax through the plan, back in the rows' order.
pub(super) fn softmax_planned(data: CubeTensor, p: &Plan) -> CubeTensor {
    let (data, ids) = grouped(data, p, false);
    back_in_order(softmax(data, None, ids, p.num_segments), p)
}

/// The senders and receivers in the receivers' grouped order.
fn ids_grouped(s: &Plan, r: &Plan) -> (CubeTensor, CubeTensor) {
    let senders = in_order(s.segment_ids.clone(), r, true);
    (senders, in_order(r.segment_ids.clone(), r, true))
}

/// GAT's attention softmax with the edges in the receivers' grouped order, back in edge order.
pub(super) fn attention_planned(
    [src, dst, bias]: [CubeTensor; 3],
    s: &Plan,
    r: &Plan,
    slope: f64,
) -> CubeTensor {
    let (si, ri) = ids_grouped(s, r);
    let alpha = attention::attention_softmax(src, dst, in_order(bias, r, false), si, ri, slope);
    back_in_order(alpha, r)
}

/// The attention's raw-score gradient with the edges in grouped order, back in edge order.
pub(super) fn attention_backward_planned(
    [src, dst, bias, alpha, grad]: [CubeTensor; 5],
    s: &Plan,
    r: &Plan,
    slope: f64,
) -> CubeTensor {
    let (si, ri) = ids_grouped(s, r);
    let [bias, alpha, grad] = [bias, alpha, grad].map(|t| in_order(t, r, false));
    back_in_order(
        attention::attention_backward(src, dst, bias, si, ri, alpha, grad, slope),
        r,
    )
}

/// `spmm` with the edges in the receivers' grouped order.
pub(super) fn spmm_planned(x: CubeTensor, w: CubeTensor, s: &Plan, r: &Plan) -> CubeTensor {
    let (senders, receivers) = ids_grouped(s, r);
    fused::spmm(x, in_order(w, r, false), senders, receivers, r.num_segments)
}
