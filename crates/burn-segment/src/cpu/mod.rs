//! CPU kernels: written once over slices (`kernels`), adapted to NdArray and Flex through the
//! small `CpuTensor` trait (crate-private).

mod heap;
mod kernels;
mod output;
mod plan_cache;
pub(crate) mod simd;

pub use heap::retain_freed_memory;
pub use output::{
    DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES, clear_output_pool,
    output_pool_stats, set_output_pool_capacity,
};
pub use plan_cache::{
    DEFAULT_PLAN_CACHE_BYTES, MAX_PLAN_CACHE_ENTRIES, PlanCacheStats, clear_plan_cache,
    plan_cache_stats, set_plan_cache_capacity,
};

use std::borrow::Cow;
use std::sync::Arc;

use burn::backend::{Flex, NdArray, TensorMetadata};
use burn::tensor::{DType, Shape, TensorData};
use burn_flex::{FlexTensor, Layout};
use burn_ndarray::NdArrayTensor;

use crate::backend::flat_rows;
use crate::{SegmentExtreme, SegmentReduction};
use kernels::{CsrPlan, Elem, FloatElem, IdElem};
use output::{Alloc, Out};
use simd::Simd;

/// A CPU tensor primitive whose values can be read as a slice and built from a `Vec`.
pub(crate) trait CpuTensor: TensorMetadata + Sized {
    /// The values in row-major order (borrowed when contiguous).
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]>;
    /// A tensor owning `values` with the given shape.
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self;
    /// Where this backend's kernel outputs are allocated: from the output pool where its
    /// tensors can hold a pooled block without a copy.
    const ALLOC: Alloc;
    /// A tensor owning a kernel's output with the given shape.
    fn from_out<E: CpuElem>(out: Out<E>, shape: Shape) -> Self {
        Self::from_values(out.into_vec(), shape)
    }
    /// The values in row-major order, to overwrite in place: `Some` only where this tensor
    /// alone owns its buffer and the buffer holds exactly its values, contiguously.
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]>;
}

/// Element types the CPU adapters can read out of a tensor primitive.
pub(crate) trait CpuElem: burn::tensor::Element + bytemuck::Pod {
    fn from_ndarray(t: &NdArrayTensor) -> Option<Cow<'_, [Self]>>;
}

macro_rules! cpu_elem {
    ($t:ty, $variant:ident) => {
        impl CpuElem for $t {
            fn from_ndarray(t: &NdArrayTensor) -> Option<Cow<'_, [Self]>> {
                match t {
                    NdArrayTensor::$variant(s) => {
                        let view = s.view();
                        Some(match view.to_slice() {
                            Some(slice) => Cow::Borrowed(slice),
                            None => Cow::Owned(view.iter().copied().collect()),
                        })
                    }
                    _ => None,
                }
            }
        }
    };
}
cpu_elem!(f32, F32);
cpu_elem!(f64, F64);
cpu_elem!(i32, I32);
cpu_elem!(i64, I64);

impl CpuTensor for NdArrayTensor {
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]> {
        E::from_ndarray(self).unwrap_or_else(|| {
            panic!(
                "burn-segment: expected {:?} data, got {:?}",
                E::dtype(),
                self.dtype()
            )
        })
    }
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self {
        NdArrayTensor::from_data(TensorData::new(values, shape))
    }
    // An ndarray owns a `Vec`: a pooled block would be copied into one.
    const ALLOC: Alloc = Alloc::Vec;
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]> {
        // NdArray (deprecated in Burn 0.22) always gets a fresh output.
        None
    }
}

impl CpuTensor for FlexTensor {
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]> {
        assert_eq!(self.dtype(), E::dtype(), "burn-segment: unexpected dtype");
        match self.as_slice::<E>() {
            Some(slice) => Cow::Borrowed(slice),
            None => Cow::Owned(self.to_contiguous().storage::<E>().to_vec()),
        }
    }
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self {
        FlexTensor::from_data(TensorData::new(values, shape))
    }
    const ALLOC: Alloc = Alloc::Pool;
    fn from_out<E: CpuElem>(out: Out<E>, shape: Shape) -> Self {
        match out {
            Out::Vec(values) => Self::from_values(values, shape),
            Out::Pooled(block) => {
                FlexTensor::new(block.into_bytes(), Layout::contiguous(shape), E::dtype())
            }
        }
    }
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]> {
        let len = self.shape().num_elements();
        if self.dtype() != E::dtype()
            || self.layout().contiguous_offsets() != Some((0, len))
            || self.storage::<E>().len() != len
        {
            return None;
        }
        self.try_storage_mut::<E>()
    }
}

/// The CSR plan of a 1-D id tensor (i32 or i64), from the plan cache when these ids were
/// planned before.
fn plan<T: CpuTensor>(ids: &T, num_segments: usize) -> Arc<CsrPlan> {
    match ids.dtype() {
        DType::I64 => plan_cache::plan(&ids.values::<i64>(), num_segments),
        DType::I32 => plan_cache::plan(&ids.values::<i32>(), num_segments),
        other => panic!("burn-segment: segment ids must be i32 or i64, got {other:?}"),
    }
}

/// Whether the CPU kernels handle this data dtype (others take the composite default).
pub(crate) fn supports(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::I32 | DType::I64)
}

fn check_len(e: usize, ids_len: usize) {
    assert_eq!(
        e, ids_len,
        "burn-segment: data has {e} rows but segment_ids has {ids_len} entries"
    );
}

/// Sum / product / max / min, values only.
pub(crate) fn reduce<T: CpuTensor>(data: T, ids: T, n: usize, op: SegmentReduction) -> T {
    match op {
        SegmentReduction::Max => return extreme(data, ids, n, SegmentExtreme::Max).0,
        SegmentReduction::Min => return extreme(data, ids, n, SegmentExtreme::Min).0,
        _ => {}
    }
    let (e, d, out_shape) = flat_rows(&data.shape(), n);
    check_len(e, ids.shape()[0]);
    let prod = op == SegmentReduction::Prod;
    let plan = plan(&ids, n);
    fn go<E: CpuElem + Elem, T: CpuTensor>(
        data: &T,
        d: usize,
        p: &CsrPlan,
        prod: bool,
        s: Shape,
    ) -> T {
        T::from_out(
            kernels::reduce_add_mul(Simd::detect(), T::ALLOC, &data.values::<E>(), d, p, prod),
            s,
        )
    }
    match data.dtype() {
        DType::F32 => go::<f32, T>(&data, d, &plan, prod, out_shape),
        DType::F64 => go::<f64, T>(&data, d, &plan, prod, out_shape),
        DType::I32 => go::<i32, T>(&data, d, &plan, prod, out_shape),
        DType::I64 => go::<i64, T>(&data, d, &plan, prod, out_shape),
        other => unreachable!("unsupported dtype {other:?} reached the CPU kernel"),
    }
}

/// Max / min with the row that attains it; the argument tensor has the ids' dtype.
pub(crate) fn extreme<T: CpuTensor>(data: T, ids: T, n: usize, which: SegmentExtreme) -> (T, T) {
    let (e, d, out_shape) = flat_rows(&data.shape(), n);
    check_len(e, ids.shape()[0]);
    let plan = plan(&ids, n);
    fn go<E: CpuElem + Elem, I: CpuElem + IdElem, T: CpuTensor>(
        data: &T,
        d: usize,
        plan: &CsrPlan,
        which: SegmentExtreme,
        shape: Shape,
    ) -> (T, T) {
        let simd = kernels::extreme_simd();
        let (v, a) =
            kernels::reduce_extreme::<E, I>(simd, T::ALLOC, &data.values::<E>(), d, plan, which);
        (T::from_out(v, shape.clone()), T::from_out(a, shape))
    }
    macro_rules! by_id {
        ($e:ty) => {
            match ids.dtype() {
                DType::I32 => go::<$e, i32, T>(&data, d, &plan, which, out_shape),
                _ => go::<$e, i64, T>(&data, d, &plan, which, out_shape),
            }
        };
    }
    match data.dtype() {
        DType::F32 => by_id!(f32),
        DType::F64 => by_id!(f64),
        DType::I32 => by_id!(i32),
        DType::I64 => by_id!(i64),
        other => unreachable!("unsupported dtype {other:?} reached the CPU kernel"),
    }
}

/// Segment softmax, `[E, ...] -> [E, ...]`.
pub(crate) fn softmax<T: CpuTensor>(data: T, ids: T, n: usize) -> T {
    let shape = data.shape();
    let (e, d, _) = flat_rows(&shape, n);
    check_len(e, ids.shape()[0]);
    let plan = plan(&ids, n);
    // In place where the input's buffer is this call's alone (nothing else sees it change).
    fn go<E: CpuElem + FloatElem, T: CpuTensor>(
        mut data: T,
        d: usize,
        plan: &CsrPlan,
        s: Shape,
    ) -> T {
        if let Some(values) = data.values_mut::<E>() {
            kernels::softmax_in_place(values, d, plan);
            return data;
        }
        T::from_out(kernels::softmax(T::ALLOC, &data.values::<E>(), d, plan), s)
    }
    match data.dtype() {
        DType::F32 => go::<f32, T>(data, d, &plan, shape),
        DType::F64 => go::<f64, T>(data, d, &plan, shape),
        other => unreachable!("unsupported dtype {other:?} reached the CPU softmax kernel"),
    }
}

/// Rows per segment, in the ids' dtype.
pub(crate) fn count<T: CpuTensor>(ids: T, n: usize) -> T {
    let plan = plan(&ids, n);
    match ids.dtype() {
        DType::I32 => T::from_values(kernels::count::<i32>(&plan), Shape::from([n])),
        _ => T::from_values(kernels::count::<i64>(&plan), Shape::from([n])),
    }
}

/// The position and value of the first id outside `0..n`, if any: one branch-free pass (an
/// unsigned comparison also catches negative ids), and a search for the position only when
/// something is out of range.
fn first_out_of_range<I: CpuElem + Into<i64>>(ids: &[I], n: usize) -> Option<(usize, i64)> {
    if !ids.iter().any(|&i| Into::<i64>::into(i) as u64 >= n as u64) {
        return None;
    }
    ids.iter()
        .map(|&i| i.into())
        .enumerate()
        .find(|&(_, i)| i < 0 || i >= n as i64)
}

/// Panics naming the first id outside `0..n` (the CPU contract for bad ids).
fn check_gather_ids<T: CpuTensor>(ids: &T, n: usize) {
    let bad = match ids.dtype() {
        DType::I32 => first_out_of_range(&ids.values::<i32>(), n),
        _ => first_out_of_range(&ids.values::<i64>(), n),
    };
    if let Some((pos, id)) = bad {
        panic!(
            "burn-segment: segment id {id} at position {pos} is out of range for num_segments = {n}"
        );
    }
}

/// The entries of a 1-D index tensor as `usize`, each checked to lie in `0..n`: borrowed from
/// the tensor for contiguous i64 indices on 64-bit targets (no copy), converted otherwise.
///
/// # Panics
/// Naming the first index outside `0..n`, its position, and `what` it indexes.
fn index_list<'a, T: CpuTensor>(ids: &'a T, n: usize, what: &str) -> Cow<'a, [usize]> {
    fn check<I: CpuElem + Into<i64>>(ids: &[I], n: usize, what: &str) {
        if let Some((pos, i)) = first_out_of_range(ids, n) {
            panic!("burn-segment: {what} index {i} at position {pos} is out of range for {n} rows");
        }
    }
    match ids.dtype() {
        DType::I32 => {
            let v = ids.values::<i32>();
            check(&v, n, what);
            Cow::Owned(v.iter().map(|&i| i as usize).collect())
        }
        _ => {
            let v = ids.values::<i64>();
            check(&v, n, what);
            match v {
                #[cfg(target_pointer_width = "64")]
                Cow::Borrowed(v) => Cow::Borrowed(bytemuck::cast_slice(v)),
                v => Cow::Owned(v.iter().map(|&i| i as usize).collect()),
            }
        }
    }
}

/// Whether the fused kernels handle this float dtype (others take the composite default).
pub(crate) fn supports_fused(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// Fused gather-weight-sum into `n` receivers.
pub(crate) fn spmm<T: CpuTensor>(x: T, weights: T, senders: T, receivers: T, n: usize) -> T {
    let (rows, d) = (x.shape()[0], x.shape()[1]);
    let (e, heads) = (weights.shape()[0], weights.shape()[1]);
    check_len(e, senders.shape()[0]);
    check_len(e, receivers.shape()[0]);
    let senders = index_list(&senders, rows, "sender");
    let plan = plan(&receivers, n);
    fn go<E: CpuElem + Elem, T: CpuTensor>(
        x: &T,
        w: &T,
        d: usize,
        h: usize,
        s: &[usize],
        p: &CsrPlan,
        n: usize,
    ) -> T {
        let out = kernels::spmm(T::ALLOC, &x.values::<E>(), d, &w.values::<E>(), h, s, p);
        T::from_out(out, Shape::from([n, d]))
    }
    match x.dtype() {
        DType::F32 => go::<f32, T>(&x, &weights, d, heads, &senders, &plan, n),
        DType::F64 => go::<f64, T>(&x, &weights, d, heads, &senders, &plan, n),
        other => unreachable!("unsupported dtype {other:?} reached the CPU spmm kernel"),
    }
}

/// Per-edge, per-head dot products of gathered rows.
pub(crate) fn sddmm<T: CpuTensor>(a: T, b: T, a_index: T, b_index: T, heads: usize) -> T {
    let d = a.shape()[1];
    let e = a_index.shape()[0];
    check_len(e, b_index.shape()[0]);
    let ai = index_list(&a_index, a.shape()[0], "a");
    let bi = index_list(&b_index, b.shape()[0], "b");
    fn go<E: CpuElem + Elem, T: CpuTensor>(
        a: &T,
        b: &T,
        d: usize,
        h: usize,
        ai: &[usize],
        bi: &[usize],
    ) -> T {
        let out = kernels::sddmm(T::ALLOC, &a.values::<E>(), &b.values::<E>(), d, h, ai, bi);
        T::from_out(out, Shape::from([ai.len(), h]))
    }
    match a.dtype() {
        DType::F32 => go::<f32, T>(&a, &b, d, heads, &ai, &bi),
        DType::F64 => go::<f64, T>(&a, &b, d, heads, &ai, &bi),
        other => unreachable!("unsupported dtype {other:?} reached the CPU sddmm kernel"),
    }
}

/// The checked inputs of the attention kernels.
struct AttentionInputs<'a> {
    senders: Cow<'a, [usize]>,
    receivers: Cow<'a, [usize]>,
    plan: Arc<CsrPlan>,
    heads: usize,
    bias_width: usize,
}

impl AttentionInputs<'_> {
    /// The kernel's view of these inputs and the node scores and bias.
    fn kernel<'b, E>(
        &'b self,
        src: &'b [E],
        dst: &'b [E],
        bias: &'b [E],
        slope: E,
    ) -> kernels::Attention<'b, E> {
        kernels::Attention {
            src,
            dst,
            bias,
            bias_width: self.bias_width,
            heads: self.heads,
            senders: &self.senders,
            receivers: &self.receivers,
            slope,
        }
    }
}

fn attention_inputs<'a, T: CpuTensor>(
    src: &T,
    dst: &T,
    bias: &T,
    senders: &'a T,
    receivers: &'a T,
) -> AttentionInputs<'a> {
    let e = senders.shape()[0];
    check_len(e, receivers.shape()[0]);
    check_len(e, bias.shape()[0]);
    let n = dst.shape()[0];
    AttentionInputs {
        senders: index_list(senders, src.shape()[0], "sender"),
        receivers: index_list(receivers, n, "receiver"),
        plan: plan(receivers, n),
        heads: src.shape()[1],
        bias_width: bias.shape()[1],
    }
}

/// Attention coefficients `[E, heads]`: LeakyReLU logits, then a softmax per receiver.
pub(crate) fn attention_softmax<T: CpuTensor>(
    src: T,
    dst: T,
    bias: T,
    senders: T,
    receivers: T,
    slope: f64,
) -> T {
    let a = attention_inputs(&src, &dst, &bias, &senders, &receivers);
    fn go<E: CpuElem + FloatElem, T: CpuTensor>(
        src: &T,
        dst: &T,
        bias: &T,
        a: &AttentionInputs,
        slope: E,
    ) -> T {
        let (src, dst, bias) = (src.values::<E>(), dst.values::<E>(), bias.values::<E>());
        let att = a.kernel(&src, &dst, &bias, slope);
        let mut logits = att.logits(T::ALLOC);
        kernels::softmax_in_place(&mut logits, a.heads, &a.plan);
        T::from_out(logits, Shape::from([a.senders.len(), a.heads]))
    }
    match src.dtype() {
        DType::F32 => go::<f32, T>(&src, &dst, &bias, &a, slope as f32),
        DType::F64 => go::<f64, T>(&src, &dst, &bias, &a, slope),
        other => unreachable!("unsupported dtype {other:?} reached the CPU attention kernel"),
    }
}

/// Gradient of the raw attention scores `[E, heads]` (see `Attention::backward` in `kernels`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn attention_backward<T: CpuTensor>(
    src: T,
    dst: T,
    bias: T,
    senders: T,
    receivers: T,
    alpha: T,
    grad: T,
    slope: f64,
) -> T {
    let a = attention_inputs(&src, &dst, &bias, &senders, &receivers);
    #[allow(clippy::too_many_arguments)]
    fn go<E: CpuElem + FloatElem, T: CpuTensor>(
        src: &T,
        dst: &T,
        bias: &T,
        alpha: &T,
        grad: &T,
        a: &AttentionInputs,
        slope: E,
    ) -> T {
        let (src, dst, bias) = (src.values::<E>(), dst.values::<E>(), bias.values::<E>());
        let att = a.kernel(&src, &dst, &bias, slope);
        let out = att.backward(T::ALLOC, &alpha.values::<E>(), &grad.values::<E>(), &a.plan);
        T::from_out(out, Shape::from([a.senders.len(), a.heads]))
    }
    match src.dtype() {
        DType::F32 => go::<f32, T>(&src, &dst, &bias, &alpha, &grad, &a, slope as f32),
        DType::F64 => go::<f64, T>(&src, &dst, &bias, &alpha, &grad, &a, slope),
        other => unreachable!("unsupported dtype {other:?} reached the CPU attention kernel"),
    }
}

/// Whether the attention kernels take these inputs: one supported float dtype throughout.
fn attention_dtypes(ts: &[DType]) -> bool {
    supports_fused(ts[0]) && ts.iter().all(|&d| d == ts[0])
}

/// Implements [`SegmentBackend`](crate::SegmentBackend) for a CPU backend with the kernels above,
/// falling back to the composite default for dtypes the kernels do not cover (f16, bf16, ...).
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl crate::SegmentBackend for $backend {
            fn segment_reduce(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                reduction: SegmentReduction,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::float_reduce::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    );
                }
                reduce(data, segment_ids, num_segments, reduction)
            }
            fn segment_extreme(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                extreme: SegmentExtreme,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::float_extreme::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        extreme,
                    );
                }
                self::extreme(data, segment_ids, num_segments, extreme)
            }
            // ANCHOR: cpu_softmax
            fn segment_softmax(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
            ) -> FloatTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::softmax::<Self>(data, segment_ids, num_segments);
                }
                softmax(data, segment_ids, num_segments)
            }
            // ANCHOR_END: cpu_softmax
            fn int_segment_reduce(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                reduction: SegmentReduction,
            ) -> IntTensor<Self> {
                if !supports(data.dtype()) {
                    return composite::int_reduce::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        reduction,
                    );
                }
                reduce(data, segment_ids, num_segments, reduction)
            }
            fn int_segment_extreme(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
                num_segments: usize,
                extreme: SegmentExtreme,
            ) -> (IntTensor<Self>, IntTensor<Self>) {
                if !supports(data.dtype()) {
                    return composite::int_extreme::<Self>(
                        data,
                        segment_ids,
                        num_segments,
                        extreme,
                    );
                }
                self::extreme(data, segment_ids, num_segments, extreme)
            }
            fn segment_gather(
                data: FloatTensor<Self>,
                segment_ids: IntTensor<Self>,
            ) -> FloatTensor<Self> {
                check_gather_ids(&segment_ids, data.shape()[0]);
                Self::float_select(data, 0, segment_ids)
            }
            fn int_segment_gather(
                data: IntTensor<Self>,
                segment_ids: IntTensor<Self>,
            ) -> IntTensor<Self> {
                check_gather_ids(&segment_ids, data.shape()[0]);
                Self::int_select(data, 0, segment_ids)
            }
            fn segment_count(segment_ids: IntTensor<Self>, num_segments: usize) -> IntTensor<Self> {
                count(segment_ids, num_segments)
            }
            fn segment_spmm(
                x: FloatTensor<Self>,
                weights: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                num_segments: usize,
            ) -> FloatTensor<Self> {
                if !supports_fused(x.dtype()) || x.dtype() != weights.dtype() {
                    return composite::spmm::<Self>(x, weights, senders, receivers, num_segments);
                }
                spmm(x, weights, senders, receivers, num_segments)
            }
            fn segment_sddmm(
                a: FloatTensor<Self>,
                b: FloatTensor<Self>,
                a_index: IntTensor<Self>,
                b_index: IntTensor<Self>,
                heads: usize,
            ) -> FloatTensor<Self> {
                if !supports_fused(a.dtype()) || a.dtype() != b.dtype() {
                    return composite::sddmm::<Self>(a, b, a_index, b_index, heads);
                }
                sddmm(a, b, a_index, b_index, heads)
            }
            fn segment_attention_softmax(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                negative_slope: f64,
            ) -> FloatTensor<Self> {
                if !attention_dtypes(&[src.dtype(), dst.dtype(), bias.dtype()]) {
                    return composite::attention_softmax::<Self>(
                        src,
                        dst,
                        bias,
                        senders,
                        receivers,
                        negative_slope,
                    );
                }
                attention_softmax(src, dst, bias, senders, receivers, negative_slope)
            }
            fn segment_attention_backward(
                src: FloatTensor<Self>,
                dst: FloatTensor<Self>,
                bias: FloatTensor<Self>,
                senders: IntTensor<Self>,
                receivers: IntTensor<Self>,
                alpha: FloatTensor<Self>,
                grad: FloatTensor<Self>,
                negative_slope: f64,
            ) -> FloatTensor<Self> {
                let dtypes = [
                    src.dtype(),
                    dst.dtype(),
                    bias.dtype(),
                    alpha.dtype(),
                    grad.dtype(),
                ];
                if !attention_dtypes(&dtypes) {
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
                attention_backward(
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
        }
    };
}

use crate::composite;
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::tensor::{FloatTensor, IntTensor};

#[allow(deprecated)]
mod ndarray_impl {
    use super::*;
    impl_cpu_backend!(NdArray);
}
mod flex_impl {
    use super::*;
    impl_cpu_backend!(Flex);
}
