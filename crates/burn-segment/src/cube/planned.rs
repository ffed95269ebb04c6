//! Planned ops on wgpu: the rows of unsorted ids are put in the plan's grouped order (a gather
//! through its permutation, stable), so every planned reduction runs the sorted CSR kernels —
//! no atomics, bitwise repeatable, sums equal to the CPU kernels' bits for segments of up to
//! `CHUNK_ROWS` rows — and results that are per row go back to the rows' own order.

use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::{Scalar, TensorMetadata, get_device_settings};
use burn::tensor::{DType, Shape, ops::IndexingUpdateOp};
use burn_cubecl::{CubeBackend, tensor::CubeTensor};

use super::{attention, extreme, fused, reduce, softmax};
use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentExtreme, SegmentReduction};

type Plan = SegmentPlanPrimitive<CubeBackend>;

/// Whether the kernels take this plan's index tensors (and so the planned path applies).
pub(super) fn takes(p: &Plan) -> bool {
    let ok = |t: &CubeTensor| matches!(t.dtype, DType::I32 | DType::I64);
    ok(&p.segment_ids) && ok(&p.order) && p.order.dtype == p.segment_ids.dtype
}

/// The rows (dim 0) of `data` in the plan's grouped order, and the ids in that order (sorted).
fn grouped(data: CubeTensor, p: &Plan, int: bool) -> (CubeTensor, CubeTensor) {
    if p.sorted {
        return (data, p.segment_ids.clone());
    }
    let order = p.order.clone();
    let data = match int {
        true => CubeBackend::int_select(data, 0, order.clone()),
        false => CubeBackend::float_select(data, 0, order.clone()),
    };
    (
        data,
        CubeBackend::int_select(p.segment_ids.clone(), 0, order),
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
    let (values, arg) = extreme(data, ids, p.num_segments, which);
    if p.sorted || arg.shape().num_elements() == 0 {
        return (values, arg);
    }
    let shape = arg.shape();
    let flat = CubeBackend::int_reshape(arg.clone(), Shape::new([shape.num_elements()]));
    let picked = CubeBackend::int_clamp_min(flat, Scalar::Int(0));
    let original = CubeBackend::int_select(p.order.clone(), 0, picked);
    let original = CubeBackend::int_reshape(original, shape);
    // -1 (an empty segment) stays -1.
    let bool_dtype = get_device_settings::<CubeBackend>(&arg.device).bool_dtype;
    let empty = CubeBackend::int_lower_elem(arg.clone(), Scalar::Int(0), bool_dtype);
    (values, CubeBackend::int_mask_where(original, empty, arg))
}

/// Softmax through the plan, back in the rows' order.
pub(super) fn softmax_planned(data: CubeTensor, p: &Plan) -> CubeTensor {
    let (grouped_data, ids) = grouped(data.clone(), p, false);
    let y = softmax(grouped_data, ids, p.num_segments);
    if p.sorted {
        return y;
    }
    // Row k of the grouped order is row order[k]: each output row written once.
    let zeros = CubeBackend::float_zeros(data.shape(), &data.device, data.dtype.into());
    CubeBackend::float_select_assign(zeros, 0, p.order.clone(), y, IndexingUpdateOp::Add)
}

/// Rows (dim 0) of per-edge `values` in the receivers' grouped order.
fn edges_grouped(values: CubeTensor, r: &Plan) -> CubeTensor {
    match r.sorted {
        true => values,
        false => CubeBackend::float_select(values, 0, r.order.clone()),
    }
}

/// Per-edge results in grouped order, back in the edges' order (each row written once).
fn edges_back(grouped: CubeTensor, r: &Plan) -> CubeTensor {
    if r.sorted {
        return grouped;
    }
    let zeros = CubeBackend::float_zeros(grouped.shape(), &grouped.device, grouped.dtype.into());
    CubeBackend::float_select_assign(zeros, 0, r.order.clone(), grouped, IndexingUpdateOp::Add)
}

/// The senders and receivers in the receivers' grouped order.
fn ids_grouped(s: &Plan, r: &Plan) -> (CubeTensor, CubeTensor) {
    let (senders, receivers) = (s.segment_ids.clone(), r.segment_ids.clone());
    if r.sorted {
        return (senders, receivers);
    }
    let order = r.order.clone();
    (
        CubeBackend::int_select(senders, 0, order.clone()),
        CubeBackend::int_select(receivers, 0, order),
    )
}

/// GAT's attention softmax with the edges in the receivers' grouped order, back in edge order.
pub(super) fn attention_planned(
    [src, dst, bias]: [CubeTensor; 3],
    s: &Plan,
    r: &Plan,
    slope: f64,
) -> CubeTensor {
    let (si, ri) = ids_grouped(s, r);
    let alpha = attention::attention_softmax(src, dst, edges_grouped(bias, r), si, ri, slope);
    edges_back(alpha, r)
}

/// The attention's raw-score gradient with the edges in grouped order, back in edge order.
pub(super) fn attention_backward_planned(
    [src, dst, bias, alpha, grad]: [CubeTensor; 5],
    s: &Plan,
    r: &Plan,
    slope: f64,
) -> CubeTensor {
    let (si, ri) = ids_grouped(s, r);
    let [bias, alpha, grad] = [bias, alpha, grad].map(|t| edges_grouped(t, r));
    edges_back(
        attention::attention_backward(src, dst, bias, si, ri, alpha, grad, slope),
        r,
    )
}

/// `spmm` with the edges in the receivers' grouped order.
pub(super) fn spmm_planned(x: CubeTensor, w: CubeTensor, s: &Plan, r: &Plan) -> CubeTensor {
    let (senders, receivers) = ids_grouped(s, r);
    fused::spmm(x, edges_grouped(w, r), senders, receivers, r.num_segments)
}
