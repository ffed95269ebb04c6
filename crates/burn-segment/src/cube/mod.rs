//! The wgpu backend (CubeCL, also reached through `Fusion`): hand-written kernels for f32 and
//! i32 data with i32 or i64 ids; other dtypes take the composite defaults.
//!
//! Each call first runs two small kernels: one sets a device flag when the ids are not sorted,
//! one finds the segment offsets by binary search (when they are). Then both strategies are
//! launched and the flag picks the one that works, so the host never waits on the device:
//!
//! - **sorted ids** (`partition_*`, receiver-sorted graphs): CSR kernels, one unit per output
//!   element folding its segment's rows in row order, with no atomics. Results are bitwise
//!   repeatable, and equal to the CPU kernels' for sum, prod, max, min and count.
//! - **unsorted ids**: atomics. Sums use float atomic adds where the device has them (the order
//!   of the adds, and so the last bits of a sum, may change from run to run); otherwise, and for
//!   products, one unit per column walks the rows in order (deterministic, less parallel). Max /
//!   min use integer atomic max / min on order-preserving keys of the f32 bits, and the argument
//!   an atomic min over the rows that attain them, so they are exact and repeatable. Softmax is
//!   max (keys), `exp(x - max)`, sum (as above), divide.
//!
//! Rows whose id is outside `[0, num_segments)` are dropped inside every kernel (their softmax
//! output is 0): nothing is ever written out of bounds, and nothing panics, unlike the CPU
//! backends. Max / min of `-0.0` and `0.0` give `0.0` (they share a key).
//!
//! Through a `SegmentPlan`, unsorted ids are put in grouped order first (a gather through the
//! plan's permutation), so planned reductions, softmax, `spmm` and attention always take the
//! CSR kernels (see `planned`).
//!
//! The masked sum, softmax and max / min are the plain kernels reading a mask (`[E]` or the
//! data's shape, `U8`/`U32` storage) beside the data; top-k (`k ≤ 32`) runs over sorted or
//! planned ids only (`topk`).
//!
//! The fused `spmm` follows the sum's two strategies over the receivers, `sddmm` runs one unit
//! per edge and head, and `attention_softmax` one logits kernel before the softmax kernels, its
//! backward the segment-sum kernels and one gradient kernel (see the `fused` module).

mod attention;
pub(crate) mod csr;
mod fused;
mod ops;
mod planned;
pub(crate) mod rank;
mod topk;
mod unsorted;

/// Every kernel, by name.
mod kernels {
    pub use super::csr::*;
    pub use super::unsorted::*;
}

use std::sync::atomic::{AtomicUsize, Ordering};

use burn::backend::cubecl::{dtype_to_elem_type, dtype_to_storage_type};
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::{
    Scalar,
    tensor::{BoolTensor, FloatTensor, IntTensor},
};
use burn::tensor::{DType, FloatDType, IntDType, Shape};
use burn_cubecl::{CubeBackend, tensor::CubeTensor};
use cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise, features::AtomicUsage, ir::Type};

use crate::composite;
use crate::plan::{SegmentIndex, SegmentPlanPrimitive};
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};
use ops::{count, extreme, gather, softmax, sum_prod};

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many segment ops the wgpu kernels have executed in this process. Tests use it to prove
/// that calls through `Fusion` reach the kernels rather than a composite default.
#[doc(hidden)]
pub fn wgpu_kernel_calls() -> usize {
    CALLS.load(Ordering::Relaxed)
}

pub(crate) fn called() {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

/// The two dims of a rank-2 tensor.
fn dims2(t: &CubeTensor) -> [usize; 2] {
    let shape = t.meta.shape();
    [shape[0], shape[1]]
}

/// Launch geometry for one unit per element of `units`.
fn grid(t: &CubeTensor, units: usize) -> (CubeCount, CubeDim) {
    let dim = CubeDim::new(&t.client, units);
    (calculate_cube_count_elemwise(&t.client, units, dim), dim)
}

pub(super) fn ids_ok(ids: &CubeTensor) -> bool {
    matches!(ids.dtype, DType::I32 | DType::I64)
}

/// A tensor of `shape` filled with `value` (an f32 or an integer dtype).
fn full(shape: Shape, value: f64, dtype: DType, like: &CubeTensor) -> CubeTensor {
    if shape.num_elements() == 0 {
        // Nothing to fill: no kernel launch over zero elements.
        return match dtype {
            DType::F32 => CubeBackend::float_empty(shape, &like.device, FloatDType::F32),
            other => CubeBackend::int_empty(shape, &like.device, IntDType::from(other)),
        };
    }
    match dtype {
        DType::F32 => {
            CubeBackend::float_full(shape, Scalar::Float(value), &like.device, FloatDType::F32)
        }
        other => CubeBackend::int_full(
            shape,
            Scalar::Int(value as i64),
            &like.device,
            IntDType::from(other),
        ),
    }
}

/// Whether the device adds `dtype` atomically in global memory.
fn adds_atomically(t: &CubeTensor) -> bool {
    t.client
        .properties()
        .atomic_type_usage(Type::atomic(dtype_to_elem_type(t.dtype)))
        .contains(AtomicUsage::Add)
}

/// The unsorted flag and, for sorted ids, the CSR offsets `[n + 1]`.
struct Plan {
    flag: CubeTensor,
    offsets: CubeTensor,
}

fn plan(ids: &CubeTensor, n: usize) -> Plan {
    let e = ids.meta.shape()[0];
    let it = dtype_to_storage_type(ids.dtype);
    let flag = full(Shape::new([1]), 0.0, DType::U32, ids);
    if e >= 2 {
        let (count, dim) = grid(ids, e - 1);
        kernels::unsorted_flag::launch(
            &ids.client,
            count,
            dim,
            ids.clone().into_tensor_arg(),
            flag.clone().into_tensor_arg(),
            it,
        );
    }
    let offsets = CubeBackend::int_empty(Shape::new([n + 1]), &ids.device, IntDType::U32);
    let (count, dim) = grid(ids, n + 1);
    kernels::csr_offsets::launch(
        &ids.client,
        count,
        dim,
        ids.clone().into_tensor_arg(),
        flag.clone().into_tensor_arg(),
        offsets.clone().into_tensor_arg(),
        n,
        it,
    );
    Plan { flag, offsets }
}

/// The entries `mask` keeps, for a masked kernel over f32 `data` and `ids`; `None` where the
/// composite runs (other dtypes, a bool storage the kernels do not read).
fn kept(mask: &CubeTensor, data: &CubeTensor, ids: &CubeTensor) -> Option<ops::Kept> {
    let takes = data.dtype == DType::F32 && ids_ok(ids);
    ops::Kept::by(mask.clone(), data).filter(|_| takes)
}

/// A float or int reduction on the kernels: sums and products share one kernel, extremes
/// another.
fn reduce(data: CubeTensor, ids: CubeTensor, n: usize, r: SegmentReduction) -> CubeTensor {
    match r {
        SegmentReduction::Sum => sum_prod(data, None, ids, n, false),
        SegmentReduction::Prod => sum_prod(data, None, ids, n, true),
        SegmentReduction::Max => extreme(data, None, ids, n, SegmentExtreme::Max).0,
        SegmentReduction::Min => extreme(data, None, ids, n, SegmentExtreme::Min).0,
    }
}

/// The planned path of an op: the plan's, when its index tensors are ones the kernels take.
pub(super) fn taken(
    index: &SegmentIndex<CubeBackend>,
) -> Option<&SegmentPlanPrimitive<CubeBackend>> {
    match index {
        SegmentIndex::Plan(p) if planned::takes(p) => Some(p),
        _ => None,
    }
}

/// The planned path of a two-index op: both plans, taken and of one ids dtype.
fn taken_pair<'a>(
    s: &'a SegmentIndex<CubeBackend>,
    r: &'a SegmentIndex<CubeBackend>,
) -> Option<(
    &'a SegmentPlanPrimitive<CubeBackend>,
    &'a SegmentPlanPrimitive<CubeBackend>,
)> {
    let (s, r) = (taken(s)?, taken(r)?);
    (s.segment_ids.dtype == r.segment_ids.dtype).then_some((s, r))
}

impl SegmentBackend for CubeBackend {
    fn segment_gather(data: FloatTensor<Self>, index: SegmentIndex<Self>) -> FloatTensor<Self> {
        let (ids, _) = index.into_ids();
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::gather::<Self>(data, ids);
        }
        gather(data, ids)
    }

    fn int_segment_gather(data: IntTensor<Self>, index: SegmentIndex<Self>) -> IntTensor<Self> {
        let (ids, _) = index.into_ids();
        if data.dtype != DType::I32 || !ids_ok(&ids) {
            return composite::int_gather::<Self>(data, ids);
        }
        gather(data, ids)
    }

    fn segment_reduce(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        r: SegmentReduction,
    ) -> FloatTensor<Self> {
        if data.dtype == DType::F32
            && let Some(p) = taken(&index)
        {
            return planned::reduce_planned(data, p, r, false);
        }
        let (ids, n) = index.into_ids();
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::float_reduce::<Self>(data, ids, n, r);
        }
        reduce(data, ids, n, r)
    }

    fn segment_extreme(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        if data.dtype == DType::F32
            && let Some(p) = taken(&index)
        {
            return planned::extreme_planned(data, p, which, false);
        }
        let (ids, n) = index.into_ids();
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::float_extreme::<Self>(data, ids, n, which);
        }
        extreme(data, None, ids, n, which)
    }

    // ANCHOR: cube_softmax
    fn segment_softmax(data: FloatTensor<Self>, index: SegmentIndex<Self>) -> FloatTensor<Self> {
        if data.dtype == DType::F32
            && let Some(p) = taken(&index)
        {
            return planned::softmax_planned(data, p);
        }
        let (ids, n) = index.into_ids();
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::softmax::<Self>(data, ids, n);
        }
        softmax(data, None, ids, n)
    }
    // ANCHOR_END: cube_softmax

    fn int_segment_reduce(
        data: IntTensor<Self>,
        index: SegmentIndex<Self>,
        r: SegmentReduction,
    ) -> IntTensor<Self> {
        if data.dtype == DType::I32
            && let Some(p) = taken(&index)
        {
            return planned::reduce_planned(data, p, r, true);
        }
        let (ids, n) = index.into_ids();
        if data.dtype != DType::I32 || !ids_ok(&ids) {
            return composite::int_reduce::<Self>(data, ids, n, r);
        }
        reduce(data, ids, n, r)
    }

    fn int_segment_extreme(
        data: IntTensor<Self>,
        index: SegmentIndex<Self>,
        which: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        if data.dtype == DType::I32
            && let Some(p) = taken(&index)
        {
            return planned::extreme_planned(data, p, which, true);
        }
        let (ids, n) = index.into_ids();
        if data.dtype != DType::I32 || !ids_ok(&ids) {
            return composite::int_extreme::<Self>(data, ids, n, which);
        }
        extreme(data, None, ids, n, which)
    }

    /// Sorted plans read the mask in place (as given ids); others fill first and sum in grouped
    /// order (the flags would need regrouping too).
    fn segment_sum_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        if let SegmentIndex::Plan(p) = &index
            && !p.sorted
        {
            let data = composite::zero_masked_out::<Self>(data, mask);
            return Self::segment_reduce(data, index, SegmentReduction::Sum);
        }
        let (ids, n) = index.into_ids();
        match kept(&mask, &data, &ids) {
            Some(kept) => sum_prod(data, Some(kept), ids, n, false),
            None => {
                let data = composite::zero_masked_out::<Self>(data, mask);
                Self::segment_reduce(data, SegmentIndex::ids(ids, n), SegmentReduction::Sum)
            }
        }
    }

    /// The unplanned kernels, plan or not: over unsorted ids their atomic max / min of keys is
    /// exact and repeatable, so nothing needs regrouping (unlike a sum's atomic adds).
    fn segment_extreme_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (ids, n) = index.into_ids();
        match kept(&mask, &data, &ids) {
            Some(kept) => extreme(data, Some(kept), ids, n, which),
            None => composite::extreme_masked::<Self>(data, mask, ids, n, which),
        }
    }

    /// As the masked sum: sorted plans read the mask in place, others fill first.
    fn segment_softmax_masked(
        data: FloatTensor<Self>,
        mask: BoolTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        if let SegmentIndex::Plan(p) = &index
            && !p.sorted
        {
            return composite::softmax_masked::<Self>(data, mask, |data| {
                Self::segment_softmax(data, index)
            });
        }
        let (ids, n) = index.into_ids();
        match kept(&mask, &data, &ids) {
            Some(kept) => softmax(data, Some(kept), ids, n),
            None => composite::softmax_masked::<Self>(data, mask, |data| {
                Self::segment_softmax(data, SegmentIndex::ids(ids, n))
            }),
        }
    }

    fn segment_count_nonzero(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
    ) -> IntTensor<Self> {
        let (ids, n) = index.into_ids();
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::count_nonzero::<Self>(data, ids, n);
        }
        ops::count_nonzero(data, ids, n)
    }

    fn segment_count(index: SegmentIndex<Self>) -> IntTensor<Self> {
        let (ids, n) = index.into_ids();
        if !ids_ok(&ids) {
            return composite::count::<Self>(ids, n);
        }
        count(ids, n)
    }

    fn segment_spmm(
        x: FloatTensor<Self>,
        weights: FloatTensor<Self>,
        senders: SegmentIndex<Self>,
        receivers: SegmentIndex<Self>,
    ) -> FloatTensor<Self> {
        let f32s = x.dtype == DType::F32 && weights.dtype == DType::F32;
        if f32s && let Some((s, r)) = taken_pair(&senders, &receivers) {
            return planned::spmm_planned(x, weights, s, r);
        }
        let ((senders, _), (receivers, n)) = (senders.into_ids(), receivers.into_ids());
        if !f32s || !ids_ok(&senders) || senders.dtype != receivers.dtype {
            return composite::spmm::<Self>(x, weights, senders, receivers, n);
        }
        fused::spmm(x, weights, senders, receivers, n)
    }

    fn segment_attention_softmax(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: SegmentIndex<Self>,
        receivers: SegmentIndex<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let f32s = [&src, &dst, &bias].iter().all(|t| t.dtype == DType::F32);
        if f32s && let Some((s, r)) = taken_pair(&senders, &receivers) {
            return planned::attention_planned([src, dst, bias], s, r, negative_slope);
        }
        let ((senders, _), (receivers, _)) = (senders.into_ids(), receivers.into_ids());
        if !f32s || !ids_ok(&senders) || senders.dtype != receivers.dtype {
            return composite::attention_softmax::<Self>(
                src,
                dst,
                bias,
                senders,
                receivers,
                negative_slope,
            );
        }
        attention::attention_softmax(src, dst, bias, senders, receivers, negative_slope)
    }

    fn segment_attention_backward(
        src: FloatTensor<Self>,
        dst: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        senders: SegmentIndex<Self>,
        receivers: SegmentIndex<Self>,
        alpha: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        negative_slope: f64,
    ) -> FloatTensor<Self> {
        let tensors = [src, dst, bias, alpha, grad];
        let f32s = tensors.iter().all(|t| t.dtype == DType::F32);
        if f32s && let Some((s, r)) = taken_pair(&senders, &receivers) {
            return planned::attention_backward_planned(tensors, s, r, negative_slope);
        }
        let [src, dst, bias, alpha, grad] = tensors;
        let ((senders, _), (receivers, _)) = (senders.into_ids(), receivers.into_ids());
        if !f32s || !ids_ok(&senders) || senders.dtype != receivers.dtype {
            return composite::attention_backward::<Self>(
                src,
                dst,
                bias,
                senders,
                receivers,
                alpha,
                grad,
                negative_slope,
            );
        }
        attention::attention_backward(
            src,
            dst,
            bias,
            senders,
            receivers,
            alpha,
            grad,
            negative_slope,
        )
    }

    fn segment_sddmm(
        a: FloatTensor<Self>,
        b: FloatTensor<Self>,
        a_index: SegmentIndex<Self>,
        b_index: SegmentIndex<Self>,
        heads: usize,
    ) -> FloatTensor<Self> {
        let ((a_index, _), (b_index, _)) = (a_index.into_ids(), b_index.into_ids());
        let f32s = a.dtype == DType::F32 && b.dtype == DType::F32;
        if !f32s || !ids_ok(&a_index) || a_index.dtype != b_index.dtype {
            return composite::sddmm::<Self>(a, b, a_index, b_index, heads);
        }
        fused::sddmm(a, b, a_index, b_index, heads)
    }
}

/// ELU and the linear product keep their composite defaults on the CubeCL backends (Burn's own
/// element-wise and matmul kernels).
impl crate::DenseBackend for CubeBackend {}
