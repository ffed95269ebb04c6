//! The fused message-passing ops on CPU tensors: `spmm`, `sddmm` and GAT's attention.

use std::borrow::Cow;
use std::sync::Arc;

use burn::tensor::{DType, Shape};

use super::kernels::{self, CsrPlan, Elem, FloatElem};
use super::ops::{check_len, index_list, plan};
use super::tensor::{CpuElem, CpuTensor};

/// Whether the fused kernels handle this float dtype (others take the composite default).
pub(super) fn supports_fused(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// Fused gather-weight-sum into `n` receivers.
pub(super) fn spmm<T: CpuTensor>(x: T, weights: T, senders: T, receivers: T, n: usize) -> T {
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
pub(super) fn sddmm<T: CpuTensor>(a: T, b: T, a_index: T, b_index: T, heads: usize) -> T {
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
pub(super) fn attention_softmax<T: CpuTensor>(
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
pub(super) fn attention_backward<T: CpuTensor>(
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
pub(super) fn attention_dtypes(ts: &[DType]) -> bool {
    supports_fused(ts[0]) && ts.iter().all(|&d| d == ts[0])
}
