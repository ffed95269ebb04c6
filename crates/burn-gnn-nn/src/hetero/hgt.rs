//! [`HgtConv`]: the heterogeneous graph transformer (Hu et al., 2020).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::{gelu, sigmoid};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{EdgeType, HeteroGraph, gather_rows};
use burn_segment::SegmentPlan;

use super::{NodeFeatures, relation_edges};
use crate::conv::glorot;
use crate::{EdgeInputs, MessagePassing, NnError, RelationEdges};

/// Configuration of an [`HgtConv`]; defaults are PyG's `HGTConv`.
#[derive(Config, Debug)]
pub struct HgtConvConfig {
    /// Input features per node (every node type; project first if they differ).
    pub d_input: usize,
    /// Output features per node (divisible by `heads`).
    pub d_output: usize,
    /// The node types, as [`HeteroGraph::metadata`] lists them.
    pub node_types: Vec<String>,
    /// The edge types, as [`HeteroGraph::metadata`] lists them.
    pub edge_types: Vec<EdgeType>,
    /// Attention heads.
    #[config(default = 1)]
    pub heads: usize,
}

/// Heterogeneous graph transformer, [Hu et al., WWW 2020](https://arxiv.org/abs/2003.01332),
/// as PyG's `HGTConv`: per node type `K_t`, `Q_t`, `V_t` and `A_t` linears; per relation `r`
/// head-wise `W^att_r`, `W^msg_r` and a prior `μ_r`. For an edge `j → i` of relation `r`,
///
/// `α_ji = softmax_i( (Q_{t(i)} x_i · K_{t(j)} x_j W^att_r) μ_r / √D )` over all incoming edges
/// of `i`, every relation at once; `m_i = Σ_j α_ji V_{t(j)} x_j W^msg_r`;
/// `x'_i = β A_{t(i)}(gelu(m_i)) + (1 − β) x_i` with `β = sigmoid(s_{t(i)})` when
/// `d_input = d_output`, else `A_{t(i)}(gelu(m_i))`. A node type without incoming relations
/// (PyG drops it) gets the same formula with `m_i = 0`.
///
/// # Shapes
/// `x[t]: [N_t, d_input]` -> `[N_t, d_output]` for every node type.
///
/// # Errors
/// [`NnError::Hetero`] if `x` lacks one of the layer's node types.
#[derive(Module, Debug)]
pub struct HgtConv {
    /// `K_t` per node type (in `node_types` order).
    pub k_lin: Vec<Linear>,
    /// `Q_t` per node type.
    pub q_lin: Vec<Linear>,
    /// `V_t` per node type.
    pub v_lin: Vec<Linear>,
    /// `A_t` per node type.
    pub a_lin: Vec<Linear>,
    /// Skip gates `s_t`, `[T]`.
    pub skip: Param<Tensor<1>>,
    /// `W^att_r`, `[R, heads, D, D]`.
    pub k_rel: Param<Tensor<4>>,
    /// `W^msg_r`, `[R, heads, D, D]`.
    pub v_rel: Param<Tensor<4>>,
    /// Priors `μ_r`, `[R, heads]`.
    pub p_rel: Param<Tensor<2>>,
    /// The node types.
    #[module(skip)]
    pub node_types: Vec<String>,
    /// The edge types.
    #[module(skip)]
    pub edge_types: Vec<EdgeType>,
    /// Attention heads.
    pub heads: usize,
    /// Output features per node.
    pub d_output: usize,
}

impl HgtConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] for `d_output` not divisible by `heads`.
    pub fn check(&self) -> Result<(), NnError> {
        super::head_dim("HgtConv", self.d_output, self.heads).map(|_| ())
    }

    /// An [`HgtConv`]: Burn's default `Linear`s, Glorot relation matrices, priors and skip
    /// gates at 1 (as PyG).
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> HgtConv {
        let (h, o) = (self.heads, self.d_output);
        let d = super::head_dim("HgtConv", o, h).unwrap_or_else(|e| panic!("burn-gnn: {e}"));
        let (t, r) = (self.node_types.len(), self.edge_types.len());
        let lins = |i: usize| {
            (0..t)
                .map(|_| LinearConfig::new(i, o).init(device))
                .collect::<Vec<_>>()
        };
        HgtConv {
            k_lin: lins(self.d_input),
            q_lin: lins(self.d_input),
            v_lin: lins(self.d_input),
            a_lin: lins(o),
            skip: Param::from_tensor(Tensor::ones([t], device)),
            k_rel: glorot([r, h, d, d], d, d, device),
            v_rel: glorot([r, h, d, d], d, d, device),
            p_rel: Param::from_tensor(Tensor::ones([r.max(1), h], device).slice(0..r)),
            node_types: self.node_types.clone(),
            edge_types: self.edge_types.clone(),
            heads: h,
            d_output: o,
        }
    }
}

impl HgtConv {
    /// Applies the layer.
    ///
    /// # Errors
    /// [`NnError::Hetero`] if `x` lacks one of the layer's node types.
    pub fn forward(&self, x: &NodeFeatures, graph: &HeteroGraph) -> Result<NodeFeatures, NnError> {
        let (h, o) = (self.heads, self.d_output);
        let d = o / h;
        let mut kqv = Vec::with_capacity(self.node_types.len());
        for (i, t) in self.node_types.iter().enumerate() {
            let xt = x.get(t).ok_or_else(|| {
                NnError::Hetero(format!("HgtConv needs features of node type `{t}`"))
            })?;
            let n = xt.dims()[0];
            let heads = |lin: &Linear| {
                (n > 0).then(|| crate::compat::linear(lin, xt.clone()).reshape([n, h, d]))
            };
            kqv.push((
                heads(&self.k_lin[i]),
                heads(&self.q_lin[i]),
                heads(&self.v_lin[i]),
                n,
            ));
        }
        let index = |t: &str| self.node_types.iter().position(|x| x == t);
        let mut out = NodeFeatures::new();
        for (ti, t) in self.node_types.iter().enumerate() {
            let (xt, n) = (&x[t], kqv[ti].3);
            if n == 0 {
                out.insert(t.clone(), crate::compat::no_rows(o, xt));
                continue;
            }
            // The incoming relations' `[K x W^att_r | V x W^msg_r]` rows stacked, each edge's
            // sender offset into its relation's block, and its relation's prior.
            let (mut sources, mut senders, mut receivers, mut priors) =
                (vec![], vec![], vec![], vec![]);
            let mut n_src = 0;
            for (ri, et) in self
                .edge_types
                .iter()
                .enumerate()
                .filter(|(_, et)| et.dst == *t)
            {
                let (s, r) = relation_edges(graph, et);
                let si = index(&et.src).ok_or_else(|| {
                    NnError::Hetero(format!("relation {et}: unknown source type"))
                })?;
                let (Some(k), Some(v)) = (&kqv[si].0, &kqv[si].2) else {
                    continue;
                };
                if s.dims()[0] == 0 {
                    continue;
                }
                let rel = |p: &Param<Tensor<4>>, m: &Tensor<3>| {
                    let w = p.val().slice(ri..ri + 1).reshape([h, d, d]);
                    let rows = m.dims()[0];
                    m.clone()
                        .swap_dims(0, 1)
                        .matmul(w)
                        .swap_dims(0, 1)
                        .reshape([rows, h * d])
                };
                sources.push(Tensor::cat(
                    vec![rel(&self.k_rel, k), rel(&self.v_rel, v)],
                    1,
                ));
                let e = s.dims()[0];
                senders.push(s.add_scalar(n_src as i64));
                n_src += kqv[si].3;
                receivers.push(r);
                priors.push(self.p_rel.val().slice(ri..ri + 1).expand([e, h]));
            }
            let target = HgtTarget {
                heads: h,
                x: xt.clone(),
                a_lin: &self.a_lin[ti],
                skip: self.skip.val().slice(ti..ti + 1),
            };
            let q = kqv[ti].1.clone().expect("nodes").reshape([n, o]);
            let y = if sources.is_empty() {
                target.update(Tensor::zeros([n, o], (&xt.device(), xt.dtype())), q)
            } else {
                // The receivers' plan serves the softmax, the sum and their backward passes; the
                // senders are only gathered, so they stay ids (in range: a checked graph).
                let receivers = SegmentPlan::new(Tensor::cat(receivers, 0), n)
                    .map_err(|e| NnError::Hetero(format!("edges into node type {t}: {e}")))?;
                let (senders, priors) = (Tensor::cat(senders, 0), Tensor::cat(priors, 0));
                target.propagate(
                    (Tensor::cat(sources, 0), q),
                    RelationEdges::Received(&senders, &receivers),
                    Some(priors),
                )
            };
            out.insert(t.clone(), y);
        }
        Ok(out)
    }
}

/// HGT's messages into one node type over [`MessagePassing`]: the sources are the stacked
/// rows `[K_{t(j)} x_j W^att_r | V_{t(j)} x_j W^msg_r]` of every relation into the type, so the
/// softmax spans all of them at once; the targets are `Q_t x_i`; the edge input is each edge's
/// relation prior `μ_r`, `[E, heads]`.
struct HgtTarget<'a> {
    heads: usize,
    /// The type's input features, for the skip connection.
    x: Tensor<2>,
    a_lin: &'a Linear,
    /// The type's skip gate `s_t`, `[1]`.
    skip: Tensor<1>,
}

impl HgtTarget<'_> {
    /// Columns `block · H·D .. (block + 1) · H·D` of the senders' rows, `[E, H, D]`.
    fn sources(&self, edges: &EdgeInputs, block: usize) -> Tensor<3> {
        let (e, hd) = (edges.num_edges(), edges.x_dst().dims()[1]);
        let x = edges
            .x_src()
            .slice([0..edges.x_src().dims()[0], block * hd..(block + 1) * hd]);
        gather_rows(x, edges.senders()).reshape([e, self.heads, hd / self.heads])
    }
}

impl MessagePassing for HgtTarget<'_> {
    /// `α_ji = softmax_i((Q x_i · K x_j W^att_r) μ_r / √D)`, `[E, heads]`.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        let (e, h) = (edges.num_edges(), self.heads);
        let d = edges.x_dst().dims()[1] / h;
        let q = edges.x_i().reshape([e, h, d]);
        let prior = edges.edge_attr().expect("HGT's priors");
        let scores =
            (q * self.sources(edges, 0)).sum_dim(2).reshape([e, h]) * prior / (d as f64).sqrt();
        Some(edges.softmax(scores))
    }

    /// `α_ji V x_j W^msg_r` per head.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (e, o) = (edges.num_edges(), edges.x_dst().dims()[1]);
        let alpha = edges.edge_attr().expect("HGT's attention");
        (self.sources(edges, 1) * alpha.unsqueeze_dim::<3>(2)).reshape([e, o])
    }

    /// `β A_t(gelu(m_i)) + (1 − β) x_i` with `β = sigmoid(s_t)` when the widths agree, else
    /// `A_t(gelu(m_i))`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let o = x_dst.dims()[1];
        let y = crate::compat::linear(self.a_lin, gelu(aggregated));
        if self.x.dims()[1] != o {
            return y;
        }
        let beta = sigmoid(self.skip.clone()).unsqueeze_dim::<2>(0);
        y * beta.clone() + self.x.clone() * (beta.neg() + 1.0)
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.a_lin.weight.dims()[1])
    }
}
