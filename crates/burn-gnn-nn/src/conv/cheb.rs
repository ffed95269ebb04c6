//! [`ChebConv`]: the Chebyshev spectral graph convolution (Defferrard et al., 2016).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use crate::{EdgeInputs, MessagePassing, NnError};

/// Configuration of a [`ChebConv`]; defaults are PyG's `ChebConv` (`normalization="sym"`,
/// `lambda_max = 2`).
#[derive(Config, Debug)]
pub struct ChebConvConfig {
    /// Input features per node.
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// Filter size `K` (polynomial orders `0..K`), at least 1.
    pub k: usize,
    /// Add a learnable bias.
    #[config(default = true)]
    pub bias: bool,
}

/// Chebyshev graph convolution, [Defferrard et al., NeurIPS 2016](https://arxiv.org/abs/1606.09375):
///
/// `x' = Σ_{k<K} T_k(L̃) x W_k + b` with `T_0 = x`, `T_1 = L̃ x`, `T_k = 2 L̃ T_{k−1} − T_{k−2}`,
/// and `L̃ = 2L/λ_max − I = −D^-1/2 A D^-1/2` for the symmetric Laplacian with `λ_max = 2`.
/// Self loops are ignored and degrees are counted over senders, as PyG's `get_laplacian`.
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct ChebConv {
    /// `W_0 .. W_{K-1}` (no bias).
    pub lins: Vec<Linear>,
    /// `b`, zero-initialised.
    pub bias: Option<Param<Tensor<1>>>,
}

impl ChebConvConfig {
    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] for `k = 0`.
    pub fn check(&self) -> Result<(), NnError> {
        if self.k == 0 {
            return Err(NnError::InvalidConfig("ChebConv needs k >= 1".into()));
        }
        Ok(())
    }

    /// A [`ChebConv`].
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> ChebConv {
        crate::error::expect_valid(self.check());
        ChebConv {
            lins: (0..self.k)
                .map(|_| {
                    LinearConfig::new(self.d_input, self.d_output)
                        .with_bias(false)
                        .init(device)
                })
                .collect(),
            bias: self.bias.then(|| super::zeros([self.d_output], device)),
        }
    }
}

/// The edge weights of the scaled symmetric Laplacian `L̃ = -D^-1/2 A D^-1/2` (PyG's
/// `lambda_max = 2`, self loops dropped), `[E, 1]`; `None` without edges.
fn laplacian_norm(graph: &GraphsTuple) -> Option<Tensor<2>> {
    if graph.sum_n_edge() == 0 {
        return None;
    }
    let (senders, receivers) = (graph.sender_plan(), graph.receiver_plan());
    let w = graph
        .senders()
        .clone()
        .not_equal(graph.receivers().clone())
        .float();
    let deg = senders.sum(w.clone());
    let dead = deg.clone().lower_equal_elem(0.0);
    let dinv = deg.clamp_min(1e-12).powf_scalar(-0.5).mask_fill(dead, 0.0);
    let norm = (senders.gather(dinv.clone()) * w * receivers.gather(dinv)).neg();
    Some(norm.unsqueeze_dim(1))
}

impl ChebConv {
    /// Applies the layer over `graph`.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return crate::compat::no_rows(self.lins[0].weight.dims()[1], &x);
        }
        let norm = laplacian_norm(graph);
        let laplacian = |h: Tensor<2>| match &norm {
            Some(w) => self.propagate(h, graph, Some(w.clone())),
            None => h.zeros_like(),
        };
        let mut out = crate::compat::linear(&self.lins[0], x.clone());
        let (mut prev, mut cur) = (x.clone(), x);
        for (k, lin) in self.lins.iter().enumerate().skip(1) {
            let next = if k == 1 {
                laplacian(cur.clone())
            } else {
                laplacian(cur.clone()).mul_scalar(2.0) - prev.clone()
            };
            out = out + crate::compat::linear(lin, next.clone());
            (prev, cur) = (cur, next);
        }
        match &self.bias {
            Some(b) => out + b.val().unsqueeze_dim(0),
            None => out,
        }
    }
}

/// One Laplacian step `L̃ h` as [`MessagePassing`]: messages `L̃_ji h_j` (the edge input is the
/// Laplacian's edge weights, `[E, 1]`), summed by one fused gather-scale-sum; the Chebyshev
/// recursion around it is [`ChebConv::forward`].
impl MessagePassing for ChebConv {
    /// `L̃_ji · h_j`.
    fn message(&self, edges: &EdgeInputs) -> Tensor<2> {
        super::weighted_message(edges, "the Laplacian's edge weights")
    }

    /// One fused gather-scale-sum: no `[E, D]` message tensor.
    fn message_and_aggregate(&self, edges: &EdgeInputs) -> Option<Tensor<2>> {
        Some(super::weighted_sum(edges, "the Laplacian's edge weights"))
    }
}
