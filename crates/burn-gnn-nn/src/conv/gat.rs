//! [`GatConv`]: graph attention (Veličković et al., 2018).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Dropout, DropoutConfig};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::SegmentPlan;

use crate::aggregation::sum_with;
use crate::message_passing::edge_values;
use crate::{BipartiteConv, EdgeInputs, MessagePassing, RelationEdges};

/// Configuration of a [`GatConv`]; defaults are PyG's `GATConv`.
#[derive(Config, Debug)]
pub struct GatConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per head.
    pub d_output: usize,
    /// Attention heads.
    #[config(default = 1)]
    pub heads: usize,
    /// Concatenate the heads (`[N, heads · d_output]`); otherwise average them (`[N, d_output]`).
    #[config(default = true)]
    pub concat: bool,
    /// Slope of the LeakyReLU on attention logits.
    #[config(default = 0.2)]
    pub negative_slope: f64,
    /// Dropout on the attention coefficients (training only).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Dropout on the transformed features `W x` before they are aggregated (training only).
    /// The GAT reference code applies it (to `seq_fts`, with the input dropout rate); PyG's
    /// `GATConv` does not, so the default is 0.
    #[config(default = 0.0)]
    pub feature_dropout: f64,
    /// Remove existing self loops and add one per node, as PyG.
    #[config(default = true)]
    pub add_self_loops: bool,
    /// Add a learnable bias.
    #[config(default = true)]
    pub bias: bool,
    /// Width of edge features used in the attention (PyG's `edge_dim`); `None`: no edge
    /// features. New self loops get the mean of their node's incoming edge features (PyG's
    /// `fill_value="mean"`), 0 for nodes without any.
    #[config(default = "None")]
    pub edge_dim: Option<usize>,
}

/// Graph attention, [Veličković et al., ICLR 2018](https://arxiv.org/abs/1710.10903):
///
/// `α_ji = softmax_j(LeakyReLU(a_srcᵀ W x_j + a_dstᵀ W x_i))` over the incoming edges of `i`
/// (self loop included), `x'_i = ‖_h Σ_j α^h_ji W^h x_j + b` (heads concatenated, or averaged).
///
/// Existing self loops are replaced by exactly one per node without any host read: they stay
/// in the edge list with logit `-inf` (weight 0) and a loop per node is appended. A node without
/// incoming edges attends only to itself; with `add_self_loops = false` it gets `b`.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
#[derive(Module, Debug)]
pub struct GatConv {
    /// `W`, `[d_input, heads · d_output]`, Glorot-initialised.
    pub weight: Param<Tensor<2>>,
    /// `a_src`, `[heads, d_output]`.
    pub att_src: Param<Tensor<2>>,
    /// `a_dst`, `[heads, d_output]`.
    pub att_dst: Param<Tensor<2>>,
    /// `b`, zero-initialised.
    pub bias: Option<Param<Tensor<1>>>,
    /// Dropout on attention coefficients.
    pub dropout: Dropout,
    /// Dropout on the transformed features before aggregation.
    pub feature_dropout: Dropout,
    /// Attention heads.
    pub heads: usize,
    /// Output features per head.
    pub d_output: usize,
    /// See [`GatConvConfig::concat`].
    pub concat: bool,
    /// See [`GatConvConfig::negative_slope`].
    pub negative_slope: f64,
    /// See [`GatConvConfig::add_self_loops`].
    pub add_self_loops: bool,
    /// `W_e`, `[edge_dim, heads · d_output]`, with edge features.
    pub lin_edge: Option<Param<Tensor<2>>>,
    /// `a_edge`, `[heads, d_output]`, with edge features.
    pub att_edge: Option<Param<Tensor<2>>>,
}

impl GatConvConfig {
    /// A [`GatConv`] with Glorot weights and attention vectors and zero bias.
    pub fn init(&self, device: &Device) -> GatConv {
        let (h, c) = (self.heads, self.d_output);
        GatConv {
            weight: super::glorot([self.d_input, h * c], self.d_input, h * c, device),
            att_src: super::glorot([h, c], h, c, device),
            att_dst: super::glorot([h, c], h, c, device),
            bias: self
                .bias
                .then(|| super::zeros([if self.concat { h * c } else { c }], device)),
            dropout: DropoutConfig::new(self.dropout).init(),
            feature_dropout: DropoutConfig::new(self.feature_dropout).init(),
            heads: h,
            d_output: c,
            concat: self.concat,
            negative_slope: self.negative_slope,
            add_self_loops: self.add_self_loops,
            lin_edge: self
                .edge_dim
                .map(|d| super::glorot([d, h * c], d, h * c, device)),
            att_edge: self.edge_dim.map(|_| super::glorot([h, c], h, c, device)),
        }
    }
}

impl GatConv {
    /// The attention coefficients of every edge, `[E', heads]`, with the edge list they refer to
    /// (`E' = E + N` with self loops, the loops last).
    pub fn attention(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
    ) -> (Tensor<2>, Tensor<1, Int>, Tensor<1, Int>) {
        let xw = burn_segment::linear(x, self.weight.val(), None);
        let (senders, receivers, bias) = self.attention_edges(&xw, graph, None);
        let alpha = edge_values(self, xw, RelationEdges::Plans(&senders, &receivers), bias)
            .expect("GAT's edge update gives the attention");
        (
            alpha,
            senders.segment_ids().clone(),
            receivers.segment_ids().clone(),
        )
    }

    /// Both node scores, `a_srcᵀ W x` and `a_dstᵀ W x` per head (`[N, heads]` each), as one
    /// product `xw · [A_src | A_dst]`, each `A` the block-diagonal `[heads · d_output, heads]`
    /// matrix with head `h`'s vector in column `h`: one product forward and two backward, where
    /// a broadcast multiply and a sum per score cost a pass over `[N, heads, d_output]` each way.
    fn node_scores(&self, xw: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let [n, width] = xw.dims();
        let (h, c) = (self.heads, self.d_output);
        let blocks: Vec<f32> = (0..width * h)
            .map(|i| if (i / h) / c == i % h { 1.0 } else { 0.0 })
            .collect();
        let blocks = Tensor::<2>::from_data(
            burn::tensor::TensorData::new(blocks, [width, h]),
            (&xw.device(), xw.dtype()),
        );
        let column = |att: &Param<Tensor<2>>| att.val().reshape([width, 1]) * blocks.clone();
        let both = Tensor::cat(vec![column(&self.att_src), column(&self.att_dst)], 1);
        let scores = burn_segment::linear(xw, both, None);
        (
            scores.clone().slice([0..n, 0..h]),
            scores.slice([0..n, h..2 * h]),
        )
    }

    /// The edges the layer attends over (the graph's, with self loops when the layer adds
    /// them) and the logit bias of each: the edge features' term and `-inf` on the graph's own
    /// loops, which the appended ones replace.
    fn attention_edges(
        &self,
        xw: &Tensor<2>,
        graph: &GraphsTuple,
        edge_attr: Option<Tensor<2>>,
    ) -> (SegmentPlan, SegmentPlan, Option<Tensor<2>>) {
        let n = xw.dims()[0];
        let (h, c) = (self.heads, self.d_output);
        let device = xw.device();
        let (senders, receivers, existing) = super::with_self_loops(graph, self.add_self_loops);
        let e = senders.num_rows();
        if e == 0 {
            return (senders, receivers, None);
        }
        // The edge term joins the node terms before the LeakyReLU, as PyG.
        let edge_term = match (&self.lin_edge, &self.att_edge, edge_attr) {
            (Some(lin), Some(att), Some(ea)) => {
                let ea = if self.add_self_loops {
                    with_loop_attr(ea, graph, n)
                } else {
                    ea
                };
                let we = ea.matmul(lin.val()).reshape([e, h, c]);
                Some(
                    (we * att.val().unsqueeze_dim::<3>(0))
                        .sum_dim(2)
                        .reshape([e, h]),
                )
            }
            _ => None,
        };
        // The graph's own loops get a bias of -inf: masked, whatever the slope.
        let mask = existing.map(|m| super::loop_mask_bias(m, &device, xw.dtype()));
        let bias = match (edge_term, mask) {
            (Some(t), Some(m)) => Some(t + m),
            (t, m) => t.or(m),
        };
        (senders, receivers, bias)
    }

    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, heads · d_output]` (concat) or `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.forward_with(GatInput::new(x, graph))
    }

    /// Applies the layer to a [`GatInput`]: with edge features in the attention, or on
    /// features already multiplied by [`weight`](Self::weight).
    ///
    /// # Shapes
    /// As [`forward`](Self::forward); `edge_attr: [E, edge_dim]`, projected `x: [N, heads ·
    /// d_output]`.
    pub fn forward_with(&self, input: GatInput) -> Tensor<2> {
        let GatInput {
            x,
            graph,
            edge_attr,
            projected,
        } = input;
        if x.dims()[0] == 0 {
            // No nodes: nothing to run (NdArray's matmul divides by zero on empty inputs).
            return crate::compat::no_rows(self.width(), &x);
        }
        let xw = if projected {
            x
        } else {
            burn_segment::linear(x, self.weight.val(), None)
        };
        let (senders, receivers, bias) = self.attention_edges(&xw, graph, edge_attr);
        self.propagate(xw, RelationEdges::Plans(&senders, &receivers), bias)
    }

    /// The output width: `heads · d_output` concatenated, `d_output` averaged.
    fn width(&self) -> usize {
        super::heads_width(self.heads, self.d_output, self.concat)
    }
}

/// GAT over [`MessagePassing`], as PyG's `GATConv`: the attention coefficients are the edge
/// update, the messages `α_ji W x_j`, aggregated by one fused gather-weight-sum. The features
/// given to `propagate` are already multiplied by `W`; the edge input is the logit bias
/// (`[E, heads]` or `[E, 1]`: the edge features' term, `-inf` to mask an edge).
impl MessagePassing for GatConv {
    /// `α_ji · W x_j` per head, `[E, heads · d_output]` (with feature dropout on `W x`).
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        let (e, h, c) = (edges.num_edges(), self.heads, self.d_output);
        let alpha = edges
            .edge_attr()
            .expect("GAT's edge update gives the attention");
        let xw = crate::compat::dropout::dropout(&self.feature_dropout, edges.x_src());
        let x_j = gather_rows(xw, edges.senders()).reshape([e, h, c]);
        (x_j * alpha.unsqueeze_dim::<3>(2)).reshape([e, h * c])
    }

    /// `α = softmax_j(LeakyReLU(a_srcᵀ W x_j + a_dstᵀ W x_i + bias))` per head, with dropout.
    fn edge_update(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        if edges.num_edges() == 0 {
            return Some(Tensor::empty([0, self.heads], &edges.x_dst().device()));
        }
        let (src, dst) = if edges.same_nodes() {
            self.node_scores(edges.x_src())
        } else {
            (
                self.node_scores(edges.x_src()).0,
                self.node_scores(edges.x_dst()).1,
            )
        };
        let slope = self.negative_slope;
        let alpha = edges.attention_softmax(src, dst, edges.edge_attr(), slope);
        Some(crate::compat::dropout::dropout(&self.dropout, alpha))
    }

    /// One fused gather-weight-sum per head: no `[E, heads, d_output]` message tensor.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        if edges.num_edges() == 0 || edges.x_src().dims()[0] == 0 {
            return Some(super::no_messages(edges, self.heads * self.d_output));
        }
        let alpha = edges
            .edge_attr()
            .expect("GAT's edge update gives the attention");
        let xw = crate::compat::dropout::dropout(&self.feature_dropout, edges.x_src());
        Some(edges.spmm(xw, alpha))
    }

    /// The heads concatenated or averaged, plus the bias.
    fn update(&self, aggregated: Tensor<2>, _x_dst: Tensor<2>) -> Tensor<2> {
        super::combine_heads(aggregated, self.heads, self.concat, self.bias.as_ref())
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.width())
    }
}

/// The input of [`GatConv::forward_with`] (Burn's `MhaInput` pattern): node features and their
/// graph, optionally edge features and whether the features are already projected.
#[derive(Debug)]
pub struct GatInput<'a> {
    x: Tensor<2>,
    graph: &'a GraphsTuple,
    edge_attr: Option<Tensor<2>>,
    projected: bool,
}

impl<'a> GatInput<'a> {
    /// Node features `x: [N, d_input]` over `graph`.
    pub fn new(x: Tensor<2>, graph: &'a GraphsTuple) -> Self {
        GatInput {
            x,
            graph,
            edge_attr: None,
            projected: false,
        }
    }

    /// Edge features `[E, edge_dim]` joining the attention logits (ignored by a layer without
    /// [`GatConvConfig::edge_dim`]).
    pub fn edge_attr(mut self, edge_attr: Tensor<2>) -> Self {
        self.edge_attr = Some(edge_attr);
        self
    }

    /// The features are `x · W` already, `[N, heads · d_output]`: how a sparse input avoids
    /// the dense product (see [`SparseMatrix::matmul`](burn_gnn_graph::SparseMatrix::matmul)).
    pub fn projected(mut self) -> Self {
        self.projected = true;
        self
    }
}

impl BipartiteConv for GatConv {
    /// Attention from one node set to another (PyG's bipartite `(x_src, x_dst)` input):
    /// `senders` index `x_src`, `receivers` index `x_dst`, both transformed by the same `W`. No
    /// self loops are added (the sets differ) and edge features are not used; destinations
    /// without incoming edges get the bias.
    ///
    /// # Shapes
    /// `x_src: [N_src, d_input]`, `x_dst: [N_dst, d_input]`, `E` edges ->
    /// `[N_dst, heads · d_output]` (concat) or `[N_dst, d_output]`.
    ///
    /// # Panics
    /// On CPU backends, if an index is out of range for its node set (check with
    /// [`burn_segment::validate_segment_ids`]).
    fn forward_bipartite(
        &self,
        x_src: Tensor<2>,
        x_dst: Tensor<2>,
        edges: RelationEdges<'_>,
    ) -> Tensor<2> {
        // Empty sets are not projected (NdArray's matmul divides by zero on empty inputs).
        let project = |x: Tensor<2>| match x.dims()[0] {
            0 => crate::compat::no_rows(self.heads * self.d_output, &x),
            _ => burn_segment::linear(x, self.weight.val(), None),
        };
        if x_dst.dims()[0] == 0 {
            return crate::compat::no_rows(self.width(), &x_dst);
        }
        self.propagate((project(x_src), project(x_dst)), edges, None)
    }
}

/// Edge features extended for the appended self loops: the graph's own loops keep theirs (their
/// logits are masked anyway), each new loop gets the mean of its node's incoming non-loop edges.
fn with_loop_attr(edge_attr: Tensor<2>, graph: &GraphsTuple, n: usize) -> Tensor<2> {
    let d = edge_attr.dims()[1];
    if graph.sum_n_edge() == 0 {
        return Tensor::zeros([n, d], (&edge_attr.device(), edge_attr.dtype()));
    }
    let keep = graph
        .senders()
        .clone()
        .not_equal(graph.receivers().clone())
        .float()
        .unsqueeze_dim::<2>(1);
    let receivers = graph.receiver_plan();
    let total = sum_with(edge_attr.clone() * keep.clone(), receivers);
    let count = sum_with(keep, receivers).clamp_min(1.0);
    Tensor::cat(vec![edge_attr, total / count], 0)
}
