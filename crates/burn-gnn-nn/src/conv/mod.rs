//! Convolution layers, one file each, re-exported here (and from the crate root). A new layer:
//! its file, its `mod` and `pub use` lines here, a line in the conformance harness and a
//! reference test (`tests/suite/`).

mod cheb;
mod dynamic_edge;
mod edge_mlp;
mod gat;
mod gatv2;
mod gcn;
mod gin;
mod gps;
mod graph_conv;
mod pna;
mod sage;
mod sg;
mod transformer;

pub use cheb::{ChebConv, ChebConvConfig};
pub use dynamic_edge::{DynamicEdgeConv, DynamicEdgeConvConfig};
pub use edge_mlp::{EdgeConv, EdgeConvConfig, GineConv, GineConvConfig};
pub use gat::{GatConv, GatConvConfig, GatInput};
pub use gatv2::{GatV2Conv, GatV2ConvConfig};
pub use gcn::{GcnConv, GcnConvConfig, GcnInput, GcnNorm, gcn_norm};
pub use gin::{GinConv, GinConvConfig};
pub use gps::{GpsConv, GpsConvConfig, GpsNorm};
pub use graph_conv::{GraphConv, GraphConvConfig};
pub use pna::{PnaConv, PnaConvConfig, PnaScaler};
pub use sage::{SageConv, SageConvConfig};
pub use sg::{Appnp, AppnpConfig, SgConv, SgConvConfig};
pub use transformer::{TransformerConv, TransformerConvConfig};

crate::message_passing::bipartite_by_propagation!(SageConv, GraphConv);

use burn::module::Param;
use burn::tensor::{Bool, Device, Int, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::SegmentPlan;

use crate::EdgeInputs;

/// Glorot (Xavier) uniform initialisation, PyG's `glorot`: `U(-a, a)`, `a = sqrt(6 / (fan_in + fan_out))`.
pub(crate) fn glorot<const D: usize>(
    shape: [usize; D],
    fan_in: usize,
    fan_out: usize,
    device: &Device,
) -> Param<Tensor<D>> {
    burn::nn::Initializer::XavierUniform { gain: 1.0 }.init_with(
        shape,
        Some(fan_in),
        Some(fan_out),
        device,
    )
}

/// A zero-initialised parameter.
pub(crate) fn zeros<const D: usize>(shape: [usize; D], device: &Device) -> Param<Tensor<D>> {
    burn::nn::Initializer::Zeros.init(shape, device)
}

/// The edge list a self-attention layer runs over, planned (the graph keeps the plans): with
/// `add_self_loops`, the graph's edges plus one loop per node (appended), and a mask of the
/// graph's own self loops, which a `-inf` logit bias from [`loop_mask_bias`] masks — PyG's
/// remove-then-add, without a host read.
pub(crate) fn with_self_loops(
    graph: &GraphsTuple,
    add_self_loops: bool,
) -> (SegmentPlan, SegmentPlan, Option<Tensor<1, Bool>>) {
    if !add_self_loops {
        let (s, r) = (graph.sender_plan(), graph.receiver_plan());
        return (s.clone(), r.clone(), None);
    }
    let (s, r) = graph.plans_with_self_loops();
    if graph.sum_n_edge() == 0 {
        return (s.clone(), r.clone(), None);
    }
    let device = graph.device();
    let existing = graph.senders().clone().equal(graph.receivers().clone());
    let mask = Tensor::cat(
        vec![
            existing,
            Tensor::<1, Int>::zeros([graph.sum_n_node()], &device).equal_elem(1),
        ],
        0,
    );
    (s.clone(), r.clone(), Some(mask))
}

/// A `[E, 1]` bias of `-inf` on masked edges and 0 elsewhere, for
/// [`burn_segment::attention_softmax`], which masks the edges whose bias is `-inf`.
pub(crate) fn loop_mask_bias(
    mask: Tensor<1, Bool>,
    device: &Device,
    dtype: burn::tensor::DType,
) -> Tensor<2> {
    let e = mask.dims()[0];
    Tensor::<1>::zeros([e], (device, dtype))
        .mask_fill(mask, f64::NEG_INFINITY)
        .unsqueeze_dim::<2>(1)
}

/// The output width of a multi-head layer: `heads · d_head` concatenated, `d_head` averaged.
pub(crate) fn heads_width(heads: usize, d_head: usize, concat: bool) -> usize {
    if concat { heads * d_head } else { d_head }
}

/// Joins the aggregated heads `[N, heads · C]`: kept concatenated or averaged to `[N, C]`, then
/// the bias added if there is one (the update of the attention layers).
pub(crate) fn combine_heads(
    aggregated: Tensor<2>,
    heads: usize,
    concat: bool,
    bias: Option<&Param<Tensor<1>>>,
) -> Tensor<2> {
    let [n, width] = aggregated.dims();
    let out = if concat {
        aggregated
    } else {
        aggregated
            .reshape([n, heads, width / heads])
            .mean_dim(1)
            .reshape([n, width / heads])
    };
    match bias {
        Some(b) => out + b.val().unsqueeze_dim(0),
        None => out,
    }
}

/// The aggregated messages of a graph without edges: zeros, `[N_dst, width]` (what a layer's
/// `message_and_aggregate` answers instead of running its maps or kernels on zero rows).
pub(crate) fn no_messages(edges: &EdgeInputs, width: usize) -> Tensor<2> {
    let x = edges.x_src();
    Tensor::zeros([edges.num_receivers(), width], (&x.device(), x.dtype()))
}

/// `w_ji · x_j`, the edge weights `[E, 1]` given as the edge input (`what` names them).
pub(crate) fn weighted_message(edges: &EdgeInputs, what: &str) -> Tensor<2> {
    edges.x_j()
        * edges
            .edge_attr()
            .unwrap_or_else(|| panic!("burn-gnn: {what} missing"))
}

/// `Σ_j w_ji x_j` as one fused gather-scale-sum: no `[E, D]` message tensor.
pub(crate) fn weighted_sum(edges: &EdgeInputs, what: &str) -> Tensor<2> {
    let weights = edges
        .edge_attr()
        .unwrap_or_else(|| panic!("burn-gnn: {what} missing"));
    edges.spmm(edges.x_src(), weights)
}
