//! [`HgtConv`]: the heterogeneous graph transformer (Hu et al., 2020).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::activation::{gelu, sigmoid};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{EdgeType, HeteroGraph, gather_rows};
use burn_segment::{SegmentPlan, Segments};

use super::{NodeFeatures, relation_edges};
use crate::NnError;
use crate::aggregation::sum_with;
use crate::conv::glorot;

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
            let (mut scores, mut values, mut targets) = (vec![], vec![], vec![]);
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
                    m.clone().swap_dims(0, 1).matmul(w).swap_dims(0, 1)
                };
                let (k_e, v_e) = (
                    gather_rows(rel(&self.k_rel, k), s.clone()),
                    gather_rows(rel(&self.v_rel, v), s),
                );
                let q_e = gather_rows(kqv[ti].1.clone().expect("nodes"), r.clone());
                let e = r.dims()[0];
                let prior = self.p_rel.val().slice(ri..ri + 1);
                scores.push((q_e * k_e).sum_dim(2).reshape([e, h]) * prior / (d as f64).sqrt());
                values.push(v_e);
                targets.push(r);
            }
            let message = if scores.is_empty() {
                Tensor::zeros([n, o], (&xt.device(), xt.dtype()))
            } else {
                // One plan of the concatenated targets for the softmax, the sum and both
                // backward passes (the relations' receivers are in range: a checked graph).
                let targets = SegmentPlan::new(Tensor::cat(targets, 0), n)
                    .map_err(|e| NnError::Hetero(format!("targets of node type {t}: {e}")))?;
                let alpha = targets.softmax(Tensor::cat(scores, 0));
                sum_with(
                    Tensor::cat(values, 0) * alpha.unsqueeze_dim::<3>(2),
                    &targets,
                )
                .reshape([n, o])
            };
            let mut y = crate::compat::linear(&self.a_lin[ti], gelu(message));
            if xt.dims()[1] == o {
                let beta = sigmoid(self.skip.val().slice(ti..ti + 1)).unsqueeze_dim::<2>(0);
                y = y * beta.clone() + xt.clone() * (beta.neg() + 1.0);
            }
            out.insert(t.clone(), y);
        }
        Ok(out)
    }
}
