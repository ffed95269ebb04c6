//! The backend-extension trait of the pairwise layer and its `Autodiff` backward.

use core::marker::PhantomData;

use burn::backend::{
    Backend,
    autodiff::{
        Autodiff,
        checkpoint::{base::Checkpointer, strategy::CheckpointStrategy},
        grads::Gradients,
        ops::{Backward, Ops, OpsKind},
    },
    backend_extension,
    tensor::{FloatTensor, IntTensor},
};

use super::PairMask;
use super::composite;

/// The score a kernel computes for a pair of rows (cosine is a dot product of normalised rows,
/// formed before the kernel by [`Pairwise`](super::Pairwise)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairScore {
    /// `x_i · y_j`.
    Dot,
    /// `Σ_d (x_id - y_jd)²`.
    SqEuclidean,
    /// `sqrt(Σ_d (x_id - y_jd)²)`.
    Euclidean,
}

/// What a pairwise kernel computes per pair and which pairs it sees.
#[derive(Clone, Debug, PartialEq)]
pub struct PairSpec {
    /// The score of a pair.
    pub score: PairScore,
    /// The eligible pairs (all of them when `None`).
    pub mask: Option<PairMask>,
    /// For each row `i` of `x`, a range `[start, end)` of the rows of `y` outside which no pair
    /// is eligible (sorted groups under a `same_group` mask), so whole tiles are skipped.
    pub column_spans: Option<std::sync::Arc<Vec<[usize; 2]>>>,
}

impl PairSpec {
    /// The rows of `y` that row `i` of `x` visits: its span, or all `m` of them.
    pub(crate) fn columns(&self, i: usize, m: usize) -> std::ops::Range<usize> {
        match &self.column_spans {
            Some(spans) => spans[i][0]..spans[i][1],
            None => 0..m,
        }
    }
}

/// How an eligible pair's score `s_ij` weighs row `j` of `v` in
/// [`PairwiseBackend::pairwise_matmul`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PairWeight {
    /// `w_ij = s_ij`; the statistic column is `Σ_j s_ij`.
    Score,
    /// `w_ij = softmax_j(s_ij)` over the row's eligible pairs; the statistic column is their
    /// logsumexp (`-inf`, and an output row of 0, where nothing is eligible).
    Softmax,
    /// `w_ij = 1`; the statistic column is the eligible count (exact below 2²⁴ in f32).
    One,
}

/// What [`PairwiseBackend::pairwise_select`] keeps per row of `x`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PairSelection {
    /// How many columns per row.
    pub k: usize,
    /// The largest scores first (else the smallest).
    pub largest: bool,
    /// A NaN score wins outright (`amin`): the first eligible NaN is returned alone.
    pub nan_wins: bool,
}

/// Streamed pairwise products as a Burn backend extension. The composite defaults work on
/// every backend, in tiles of a fixed budget (never an `[N, M]` tensor); `Autodiff` recomputes
/// the tiles in its backward pass instead of keeping them.
///
/// Call [`Pairwise`](super::Pairwise) rather than these methods.
#[backend_extension(
    Autodiff,
    NdArray,
    Flex,
    Cube: cfg(feature = "cube"),
    Fusion: cfg(feature = "cube")
)]
pub trait PairwiseBackend: Backend {
    /// `[N, C + 1]`: columns `..C` are `Σ_j m_ij w_ij v_j` over the eligible pairs of row `i`
    /// of `x: [N, D]` against the rows of `y: [M, D]`, with `v: [M, C]`; column `C` is the
    /// weight's statistic (see [`PairWeight`]). `labels_x: [N]` and `labels_y: [M]` (same Int
    /// dtype) feed the group masks.
    #[allow(clippy::too_many_arguments)]
    #[fusion(dtype = x, shape = burn::tensor::Shape::new([x[0], v[1] + 1]))]
    fn pairwise_matmul(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
    ) -> FloatTensor<Self> {
        composite::matmul::<Self>([x, y, v], [labels_x, labels_y], &spec, weight)
    }

    /// The columns of `y` whose pairs with each row of `x` rank first under `selection`
    /// among the eligible ones: `[N, k]` in the labels' dtype, in rank order, ties to the
    /// smaller column, NaN above every number, -1 past the eligible pairs. No gradient (the
    /// caller recomputes the chosen scores). The default scores in f64 on the host (a read of
    /// the inputs: a sync on a GPU).
    #[fusion(dtype = labels_x, shape = burn::tensor::Shape::new([x[0], selection.k]))]
    fn pairwise_select(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        selection: PairSelection,
    ) -> IntTensor<Self> {
        super::select::select_on_host::<Self>([x, y], [labels_x, labels_y], &spec, selection)
    }

    /// The gradients of [`pairwise_matmul`](Self::pairwise_matmul) with respect to `x`, `y`
    /// and `v`, given its output `out` and the gradient `grad` of that output (both
    /// `[N, C + 1]`). Masked-out pairs contribute nothing.
    #[allow(clippy::too_many_arguments)]
    #[fusion(meta = |x, y, v, _lx, _ly, _spec, _weight, _out, _grad| (x.clone(), y.clone(), v.clone()))]
    fn pairwise_matmul_backward(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
        out: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        composite::matmul_backward::<Self>(
            [x, y, v, out, grad],
            [labels_x, labels_y],
            &spec,
            weight,
        )
    }
}

/// The CPU backends: the kernels of `cpu` for f32, the composite otherwise.
macro_rules! impl_cpu_backend {
    ($backend:ty) => {
        impl PairwiseBackend for $backend {
            fn pairwise_matmul(
                x: FloatTensor<Self>,
                y: FloatTensor<Self>,
                v: FloatTensor<Self>,
                labels_x: IntTensor<Self>,
                labels_y: IntTensor<Self>,
                spec: PairSpec,
                weight: PairWeight,
            ) -> FloatTensor<Self> {
                let labels = [&labels_x, &labels_y];
                match super::cpu::matmul([&x, &y, &v], labels, &spec, weight) {
                    Some(out) => out,
                    None => {
                        composite::matmul::<Self>([x, y, v], [labels_x, labels_y], &spec, weight)
                    }
                }
            }

            fn pairwise_matmul_backward(
                x: FloatTensor<Self>,
                y: FloatTensor<Self>,
                v: FloatTensor<Self>,
                labels_x: IntTensor<Self>,
                labels_y: IntTensor<Self>,
                spec: PairSpec,
                weight: PairWeight,
                out: FloatTensor<Self>,
                grad: FloatTensor<Self>,
            ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
                let tensors = [&x, &y, &v, &out, &grad];
                let labels = [&labels_x, &labels_y];
                match super::cpu::matmul_backward(tensors, labels, &spec, weight) {
                    Some(grads) => grads,
                    None => composite::matmul_backward::<Self>(
                        [x, y, v, out, grad],
                        [labels_x, labels_y],
                        &spec,
                        weight,
                    ),
                }
            }
        }
    };
}

impl_cpu_backend!(burn::backend::NdArray);
impl_cpu_backend!(burn::backend::Flex);

/// The inputs, labels, spec and weight of a tracked `pairwise_matmul`, and its output.
type MatmulState<B> = ([FloatTensor<B>; 4], [IntTensor<B>; 2], PairSpec, PairWeight);

#[derive(Debug)]
struct MatmulBackward<B>(PhantomData<B>);

impl<B: PairwiseBackend> Backward<B, 3> for MatmulBackward<B> {
    type State = MatmulState<B>;
    fn backward(self, ops: Ops<Self::State, 3>, grads: &mut Gradients, _: &mut Checkpointer) {
        let ([x, y, v, out], [lx, ly], spec, weight) = ops.state;
        let grad = grads.consume::<B>(&ops.node);
        let (gx, gy, gv) = B::pairwise_matmul_backward(x, y, v, lx, ly, spec, weight, out, grad);
        for (node, g) in ops.parents.into_iter().zip([gx, gy, gv]) {
            if let Some(node) = node {
                grads.register::<B>(node.id, g);
            }
        }
    }
}

/// The backward recomputes each tile of scores from the inputs (kept, `O(N + M)`) rather than
/// storing them, as flash attention does.
impl<B: PairwiseBackend, C: CheckpointStrategy> PairwiseBackend for Autodiff<B, C> {
    fn pairwise_matmul(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
    ) -> FloatTensor<Self> {
        let (x, xn) = x.into_parts();
        let (y, yn) = y.into_parts();
        let (v, vn) = v.into_parts();
        let backward = MatmulBackward::<B>(PhantomData);
        match backward
            .prepare::<C>([xn, yn, vn])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let out = B::pairwise_matmul(
                    x.clone(),
                    y.clone(),
                    v.clone(),
                    labels_x.clone(),
                    labels_y.clone(),
                    spec.clone(),
                    weight,
                );
                let state = ([x, y, v, out.clone()], [labels_x, labels_y], spec, weight);
                prep.finish(state, out)
            }
            OpsKind::UnTracked(prep) => prep.finish(B::pairwise_matmul(
                x, y, v, labels_x, labels_y, spec, weight,
            )),
        }
    }

    // A selection carries no gradient: the inner backend's op on the untracked inputs.
    fn pairwise_select(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        selection: PairSelection,
    ) -> IntTensor<Self> {
        let [x, y] = [x, y].map(|t| t.into_primitive());
        B::pairwise_select(x, y, labels_x, labels_y, spec, selection)
    }

    fn pairwise_matmul_backward(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
        out: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        // A gradient of a gradient: the composite, built from tracked primitives.
        composite::matmul_backward::<Self>(
            [x, y, v, out, grad],
            [labels_x, labels_y],
            &spec,
            weight,
        )
    }
}
