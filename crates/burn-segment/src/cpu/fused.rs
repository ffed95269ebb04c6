//! The fused message-passing ops on CPU tensors: `spmm`, `sddmm` and GAT's attention.

use burn::tensor::{DType, Shape};

use super::kernels::{self, CsrPlan, Elem, FloatElem, IdElem};
use super::ops::check_len;
use super::tensor::{CpuElem, CpuTensor};

/// Whether the fused kernels handle this float dtype (others take the composite default).
pub(super) fn supports_fused(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// Fused gather-weight-sum into the receivers `plan` groups, `senders` in range of `x`'s rows.
pub(super) fn spmm<T: CpuTensor, I: IdElem>(x: T, weights: T, senders: &[I], plan: &CsrPlan) -> T {
    let d = x.shape()[1];
    let (e, heads) = (weights.shape()[0], weights.shape()[1]);
    check_len(e, senders.len());
    check_len(e, plan.num_rows());
    let n = plan.num_segments();
    fn go<E: CpuElem + Elem, T: CpuTensor, I: IdElem>(
        x: &T,
        w: &T,
        d: usize,
        h: usize,
        s: &[I],
        p: &CsrPlan,
        n: usize,
    ) -> T {
        let out = kernels::spmm(T::ALLOC, &x.values::<E>(), d, &w.values::<E>(), h, s, p);
        T::from_out(out, Shape::from([n, d]))
    }
    match x.dtype() {
        DType::F32 => go::<f32, T, I>(&x, &weights, d, heads, senders, plan, n),
        DType::F64 => go::<f64, T, I>(&x, &weights, d, heads, senders, plan, n),
        other => unreachable!("unsupported dtype {other:?} reached the CPU spmm kernel"),
    }
}

/// Per-edge, per-head dot products of gathered rows, the indices in range of `a`'s and `b`'s.
pub(super) fn sddmm<T: CpuTensor, I: IdElem, J: IdElem>(
    a: T,
    b: T,
    ai: &[I],
    bi: &[J],
    heads: usize,
) -> T {
    let d = a.shape()[1];
    check_len(ai.len(), bi.len());
    fn go<E: CpuElem + Elem, T: CpuTensor, I: IdElem, J: IdElem>(
        a: &T,
        b: &T,
        d: usize,
        h: usize,
        ai: &[I],
        bi: &[J],
    ) -> T {
        let out = kernels::sddmm(T::ALLOC, &a.values::<E>(), &b.values::<E>(), d, h, ai, bi);
        T::from_out(out, Shape::from([ai.len(), h]))
    }
    match a.dtype() {
        DType::F32 => go::<f32, T, I, J>(&a, &b, d, heads, ai, bi),
        DType::F64 => go::<f64, T, I, J>(&a, &b, d, heads, ai, bi),
        other => unreachable!("unsupported dtype {other:?} reached the CPU sddmm kernel"),
    }
}

/// The index inputs of the attention kernels: senders and receivers checked to lie in range of
/// `src`'s and `dst`'s rows (in the ids' own dtypes), and the receivers' plan.
pub(super) struct AttentionIndex<'a, I, J> {
    pub(super) senders: &'a [I],
    pub(super) receivers: &'a [J],
    pub(super) plan: &'a CsrPlan<'a>,
}

impl<I: IdElem, J: IdElem> AttentionIndex<'_, I, J> {
    /// Runs `f` on the kernel's view of these indices and the node scores `src`, `dst` (`[_,
    /// heads]`) and `bias` (`[E, bias_width]`), with the number of heads.
    fn run<E: CpuElem, T: CpuTensor, R>(
        &self,
        (src, dst, bias): (&T, &T, &T),
        slope: E,
        f: impl FnOnce(kernels::Attention<'_, E, I, J>, usize) -> R,
    ) -> R {
        let e = self.senders.len();
        check_len(e, self.receivers.len());
        check_len(e, self.plan.num_rows());
        check_len(e, bias.shape()[0]);
        let heads = src.shape()[1];
        let (s, d, b) = (src.values::<E>(), dst.values::<E>(), bias.values::<E>());
        let kernel = kernels::Attention {
            src: &s,
            dst: &d,
            bias: &b,
            bias_width: bias.shape()[1],
            heads,
            senders: self.senders,
            receivers: self.receivers,
            slope,
        };
        f(kernel, heads)
    }
}

/// Attention coefficients `[E, heads]`: LeakyReLU logits, then a softmax per receiver.
pub(super) fn attention_softmax<T: CpuTensor, I: IdElem, J: IdElem>(
    src: T,
    dst: T,
    bias: T,
    index: &AttentionIndex<I, J>,
    slope: f64,
) -> T {
    fn go<E: CpuElem + FloatElem, T: CpuTensor, I: IdElem, J: IdElem>(
        inputs: (&T, &T, &T),
        index: &AttentionIndex<I, J>,
        slope: E,
    ) -> T {
        index.run(inputs, slope, |att, heads| {
            let mut logits = att.logits(T::ALLOC);
            kernels::softmax_in_place(&mut logits, heads, index.plan);
            T::from_out(logits, Shape::from([index.senders.len(), heads]))
        })
    }
    match src.dtype() {
        DType::F32 => go::<f32, T, I, J>((&src, &dst, &bias), index, slope as f32),
        DType::F64 => go::<f64, T, I, J>((&src, &dst, &bias), index, slope),
        other => unreachable!("unsupported dtype {other:?} reached the CPU attention kernel"),
    }
}

/// The float tensors of the attention backward: the three inputs, the output `alpha` and its
/// gradient.
pub(super) type AttentionTensors<T> = (T, T, T, T, T);

/// Gradient of the raw attention scores `[E, heads]` (see `Attention::backward` in `kernels`).
pub(super) fn attention_backward<T: CpuTensor, I: IdElem, J: IdElem>(
    (src, dst, bias, alpha, grad): AttentionTensors<T>,
    index: &AttentionIndex<I, J>,
    slope: f64,
) -> T {
    fn go<E: CpuElem + FloatElem, T: CpuTensor, I: IdElem, J: IdElem>(
        inputs: (&T, &T, &T),
        (alpha, grad): (&T, &T),
        index: &AttentionIndex<I, J>,
        slope: E,
    ) -> T {
        index.run(inputs, slope, |att, heads| {
            let (alpha, grad) = (alpha.values::<E>(), grad.values::<E>());
            let out = att.backward(T::ALLOC, &alpha, &grad, index.plan);
            T::from_out(out, Shape::from([index.senders.len(), heads]))
        })
    }
    let inputs = (&src, &dst, &bias);
    match src.dtype() {
        DType::F32 => go::<f32, T, I, J>(inputs, (&alpha, &grad), index, slope as f32),
        DType::F64 => go::<f64, T, I, J>(inputs, (&alpha, &grad), index, slope),
        other => unreachable!("unsupported dtype {other:?} reached the CPU attention kernel"),
    }
}

/// Whether the attention kernels take these inputs: one supported float dtype throughout.
pub(super) fn attention_dtypes(ts: &[DType]) -> bool {
    supports_fused(ts[0]) && ts.iter().all(|&d| d == ts[0])
}
