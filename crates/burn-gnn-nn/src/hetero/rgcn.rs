//! [`RgcnConv`]: relational graph convolution (Schlichtkrull et al., 2018).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::tensor::{Device, Int, Tensor};
use burn_gnn_graph::{GraphsTuple, gather_rows};
use burn_segment::segment_count;

use crate::conv::{glorot, zeros};
use crate::{EdgeInputs, MessagePassing, NnError, RelationEdges};

/// Configuration of an [`RgcnConv`]; defaults are PyG's `RGCNConv`.
#[derive(Config, Debug)]
pub struct RgcnConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Number of relations (edge types `0..num_relations`).
    pub num_relations: usize,
    /// Basis decomposition: `W_r = Σ_b a_rb V_b` with this many bases.
    #[config(default = "None")]
    pub num_bases: Option<usize>,
    /// Block-diagonal decomposition: `W_r` made of this many blocks (dividing both widths).
    #[config(default = "None")]
    pub num_blocks: Option<usize>,
    /// Add the root term `W_0 x_i`.
    #[config(default = true)]
    pub root_weight: bool,
    /// Add a bias.
    #[config(default = true)]
    pub bias: bool,
}

/// Relational GCN, [Schlichtkrull et al., ESWC 2018](https://arxiv.org/abs/1703.06103):
///
/// `x'_i = W_0 x_i + Σ_r Σ_{j ∈ N_r(i)} (1 / |N_r(i)|) W_r x_j` (+ bias), a mean over each
/// relation's neighbours, summed over relations. With `num_bases`, `W_r = Σ_b a_rb V_b`; with
/// `num_blocks`, `W_r` is block-diagonal. Runs on a homogeneous graph with an edge type per edge,
/// such as [`HeteroGraph::to_homogeneous`](burn_gnn_graph::HeteroGraph::to_homogeneous) gives
/// (its `edge_type` feature).
///
/// # Shapes
/// `x: [N, d_input]`, `edge_type: [E]` Int in `0..num_relations` -> `[N, d_output]`.
///
/// # Panics
/// On the CPU backends, if an edge type is out of range (its row index is).
#[derive(Module, Debug)]
pub struct RgcnConv {
    /// `W_r` `[R, d_input, d_output]` without decomposition, the bases `V_b` `[B, d_input,
    /// d_output]` with `num_bases`.
    pub weight: Option<Param<Tensor<3>>>,
    /// The coefficients `a_rb`, `[R, B]` (basis decomposition).
    pub comp: Option<Param<Tensor<2>>>,
    /// The blocks, `[R, B, d_input / B, d_output / B]` (block-diagonal decomposition).
    pub blocks: Option<Param<Tensor<4>>>,
    /// `W_0`, `[d_input, d_output]`.
    pub root: Option<Param<Tensor<2>>>,
    /// Bias, `[d_output]`.
    pub bias: Option<Param<Tensor<1>>>,
    /// Number of relations.
    pub num_relations: usize,
    /// Output features per node.
    pub d_output: usize,
}

impl RgcnConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] for both decompositions at once, zero bases or blocks, or
    /// blocks that do not divide the widths.
    pub fn check(&self) -> Result<(), NnError> {
        let (i, o) = (self.d_input, self.d_output);
        let bad = |m: String| Err(NnError::InvalidConfig(m));
        match (self.num_bases, self.num_blocks) {
            (Some(_), Some(_)) => {
                bad("RgcnConv: num_bases and num_blocks exclude each other".into())
            }
            (Some(0), _) | (_, Some(0)) => bad("RgcnConv: zero bases or blocks".into()),
            (None, Some(b)) if i % b != 0 || o % b != 0 => bad(format!(
                "RgcnConv: {b} blocks do not divide d_input = {i} and d_output = {o}"
            )),
            _ => Ok(()),
        }
    }

    /// An [`RgcnConv`] with Glorot weights and a zero bias.
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> RgcnConv {
        crate::error::expect_valid(self.check());
        let (i, o, r) = (self.d_input, self.d_output, self.num_relations);
        let (mut weight, mut comp, mut blocks) = (None, None, None);
        match (self.num_bases, self.num_blocks) {
            (Some(b), _) => {
                weight = Some(glorot([b, i, o], i, o, device));
                comp = Some(glorot([r, b], r, b, device));
            }
            (None, Some(b)) => blocks = Some(glorot([r, b, i / b, o / b], i / b, o / b, device)),
            (None, None) => weight = Some(glorot([r, i, o], i, o, device)),
        }
        RgcnConv {
            weight,
            comp,
            blocks,
            root: self.root_weight.then(|| glorot([i, o], i, o, device)),
            bias: self.bias.then(|| zeros([o], device)),
            num_relations: r,
            d_output: o,
        }
    }
}

impl RgcnConv {
    /// `x W_r` for every relation, `[R, N, d_output]`.
    fn relation_transforms(&self, x: Tensor<2>) -> Tensor<3> {
        let [n, d_in] = x.dims();
        let r = self.num_relations;
        if let Some(q) = &self.blocks {
            let [_, b, bi, bo] = q.dims();
            let xb = x
                .reshape([n, b, bi])
                .swap_dims(0, 1)
                .unsqueeze_dim::<4>(0)
                .expand([r, b, n, bi]);
            return xb.matmul(q.val()).swap_dims(1, 2).reshape([r, n, b * bo]);
        }
        let w = self.weight.as_ref().expect("weights without blocks").val();
        let w = match &self.comp {
            Some(a) => {
                let [b, _, o] = w.dims();
                a.val()
                    .matmul(w.reshape([b, d_in * o]))
                    .reshape([r, d_in, o])
            }
            None => w,
        };
        x.unsqueeze_dim::<3>(0).expand([r, n, d_in]).matmul(w)
    }

    /// Applies the layer over `graph` with the relation of each edge in `edge_type`.
    ///
    /// # Shapes
    /// `x: [N, d_input]`, `edge_type: [E]` -> `[N, d_output]`.
    pub fn forward(
        &self,
        x: Tensor<2>,
        graph: &GraphsTuple,
        edge_type: Tensor<1, Int>,
    ) -> Tensor<2> {
        let n = x.dims()[0];
        let device = x.device();
        if n == 0 {
            return crate::compat::no_rows(self.d_output, &x);
        }
        if graph.sum_n_edge() == 0 || self.num_relations == 0 {
            return self.update(Tensor::zeros([n, self.d_output], (&device, x.dtype())), x);
        }
        let r = self.num_relations;
        let (senders, receivers) = (graph.senders().clone(), graph.receivers().clone());
        let flat = self
            .relation_transforms(x.clone())
            .reshape([r * n, self.d_output]);
        // Each edge's sender among the `R · N` rows of `x W_r`, and its (receiver, relation)
        // pair's edge count, which the message is divided by (the mean per pair).
        let sources = edge_type.clone().mul_scalar(n as i64) + senders;
        let pair = receivers.mul_scalar(r as i64) + edge_type;
        let counts = gather_rows(segment_count(pair.clone(), n * r), pair).float();
        // The sources are rows no plan is kept for; the receivers are the graph's, planned.
        let edges = RelationEdges::Received(&sources, graph.receiver_plan());
        self.propagate((flat, x), edges, Some(counts.unsqueeze_dim(1)))
    }
}

/// RGCN over [`MessagePassing`]: the sources are the `R · N` rows of `x W_r` (each edge's
/// sender in its relation's block), the messages those rows divided by their (receiver,
/// relation) pair's edge count (the edge input, `[E, 1]`), summed; the update adds the root
/// term and the bias.
impl MessagePassing for RgcnConv {
    /// `x_j W_r / |N_r(i)|`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        edges.x_j() / edges.edge_attr().expect("RGCN's edge counts")
    }

    /// `x_i W_root + b + aggregated`.
    fn update(&self, aggregated: Tensor<2>, x_dst: Tensor<2>) -> Tensor<2> {
        let n = x_dst.dims()[0];
        let mut out = match &self.root {
            Some(w) => x_dst.matmul(w.val()),
            None => Tensor::zeros([n, self.d_output], (&x_dst.device(), x_dst.dtype())),
        };
        if let Some(b) = &self.bias {
            out = out + b.val().unsqueeze_dim(0);
        }
        out + aggregated
    }

    fn d_output(&self) -> Option<usize> {
        Some(self.d_output)
    }
}
