//! Graph autoencoders ([Kipf & Welling, 2016](https://arxiv.org/abs/1611.07308)): an encoder
//! of node embeddings, the inner-product decoder, the reconstruction and KL losses.

use burn::module::Module;
use burn::tensor::activation::softplus;
use burn::tensor::{Distribution, Int, Tensor};
use burn_gnn_graph::GraphsTuple;

use crate::NodeModel;

/// Node pairs `(senders, receivers)`, each `[E]`.
pub type Pairs = (Tensor<1, Int>, Tensor<1, Int>);

/// PyG's bound on `log σ` (`MAX_LOGSTD`), so that `exp(2 log σ)` stays finite.
pub const MAX_LOGSTD: f64 = 10.0;

/// The inner-product decoder: the logit of edge `i -> j` is `z_i · z_j` (one fused
/// [`sddmm`](burn_segment::sddmm), no `[E, D]` gathers); its probability is the sigmoid.
///
/// # Shapes
/// `z: [N, D]`, `senders`, `receivers: [E]` -> `[E]`.
///
/// # Panics
/// If the index lists differ in length; on the CPU backends if an index is outside `0..N`
/// (other backends score such a pair 0, as [`sddmm`](burn_segment::sddmm) does: the splits and
/// loaders of `burn-gnn-data` only give pairs inside the graph).
#[derive(Clone, Copy, Debug, Default)]
pub struct InnerProductDecoder;

impl InnerProductDecoder {
    /// Logits `z[senders] · z[receivers]`.
    pub fn forward(
        &self,
        z: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
    ) -> Tensor<1> {
        let e = senders.dims()[0];
        burn_segment::sddmm(z.clone(), z, senders, receivers, 1).reshape([e])
    }

    /// [`recon_loss`] of the positive pairs `pos` and negative pairs `neg` under `z`.
    pub fn recon_loss(&self, z: Tensor<2>, pos: Pairs, neg: Pairs) -> Tensor<1> {
        let pos = self.forward(z.clone(), pos.0, pos.1);
        recon_loss(pos, self.forward(z, neg.0, neg.1))
    }

    /// Logits of every pair, `Z Zᵀ` (`[N, N]`: for small graphs only).
    pub fn forward_all(&self, z: Tensor<2>) -> Tensor<2> {
        z.clone().matmul(z.transpose())
    }
}

/// The reconstruction loss of PyG's `GAE.recon_loss`: the mean binary cross-entropy of the
/// positive logits against 1 plus that of the negative logits against 0,
/// `mean(softplus(−pos)) + mean(softplus(neg))`. PyG adds `1e-15` inside its logarithms; this
/// form needs no epsilon and stays finite for any finite logit.
///
/// # Shapes
/// `pos: [P]`, `neg: [Q]` -> `[1]`.
///
/// # Panics
/// If either set is empty (its mean is undefined).
pub fn recon_loss(pos: Tensor<1>, neg: Tensor<1>) -> Tensor<1> {
    assert!(
        pos.dims()[0] > 0 && neg.dims()[0] > 0,
        "recon_loss needs at least one positive and one negative pair (got {} and {})",
        pos.dims()[0],
        neg.dims()[0]
    );
    // Burn's softplus returns `x` past 20, so no logit overflows.
    softplus(pos.neg(), 1.0).mean() + softplus(neg, 1.0).mean()
}

/// The mean binary cross-entropy of `logits` against `targets` in `[0, 1]`,
/// `mean(softplus(x) − y · x)`: PyTorch's `binary_cross_entropy_with_logits`, finite for any
/// finite logit.
///
/// # Shapes
/// `logits`, `targets: [B]` -> `[1]`.
pub fn bce_with_logits(logits: Tensor<1>, targets: Tensor<1>) -> Tensor<1> {
    (softplus(logits.clone(), 1.0) - targets * logits).mean()
}

/// The KL divergence of `N(μ, σ²)` from `N(0, 1)`, summed over the latent dimensions and
/// averaged over the nodes: `−½ · mean_i Σ_d (1 + 2 log σ − μ² − σ²)` (PyG's `VGAE.kl_loss`;
/// `log σ` clamped at [`MAX_LOGSTD`]).
///
/// # Shapes
/// `mu`, `logstd: [N, D]` -> `[1]`.
pub fn kl_loss(mu: Tensor<2>, logstd: Tensor<2>) -> Tensor<1> {
    let logstd = logstd.clamp_max(MAX_LOGSTD);
    let terms = logstd.clone().mul_scalar(2.0).add_scalar(1.0)
        - mu.powi_scalar(2)
        - logstd.mul_scalar(2.0).exp();
    terms.sum_dim(1).mean().mul_scalar(-0.5)
}

/// A graph autoencoder (GAE): node embeddings from any [`NodeModel`], edges scored by the
/// [`InnerProductDecoder`], trained with [`recon_loss`] on positive and negative pairs.
///
/// # Shapes
/// `x: [N, d_input]` -> embeddings `[N, d_output]` of the encoder.
#[derive(Module, Debug)]
pub struct Gae<M: Module> {
    /// The encoder.
    pub encoder: M,
}

impl<M: NodeModel> Gae<M> {
    /// Wraps `encoder`.
    pub fn new(encoder: M) -> Self {
        Gae { encoder }
    }

    /// Node embeddings.
    pub fn encode(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.encoder.forward_nodes(x, graph)
    }

    /// Logits of the pairs `senders[e] -> receivers[e]`.
    pub fn decode(
        &self,
        z: Tensor<2>,
        senders: Tensor<1, Int>,
        receivers: Tensor<1, Int>,
    ) -> Tensor<1> {
        InnerProductDecoder.forward(z, senders, receivers)
    }

    /// [`recon_loss`] of the positive pairs `pos` and negative pairs `neg` under `z`.
    pub fn recon_loss(&self, z: Tensor<2>, pos: Pairs, neg: Pairs) -> Tensor<1> {
        InnerProductDecoder.recon_loss(z, pos, neg)
    }
}

/// What a [`Vgae`] encodes: the mean and log standard deviation of each node's embedding, and
/// the embedding used (a sample while training, the mean otherwise).
#[derive(Clone, Debug)]
pub struct VgaeEmbedding {
    /// The embedding: `μ + σ · ε` with `ε ~ N(0, 1)` on an autodiff device, `μ` otherwise.
    pub z: Tensor<2>,
    /// `μ`, `[N, D]`.
    pub mu: Tensor<2>,
    /// `log σ`, `[N, D]`, clamped at [`MAX_LOGSTD`].
    pub logstd: Tensor<2>,
}

/// A variational graph autoencoder (VGAE). The encoder outputs `2·D` columns per node: the
/// first `D` are `μ`, the last `D` are `log σ`. A last GCN layer of `2·D` outputs is exactly
/// the paper's two GCN heads for `μ` and `log σ` on a shared hidden layer, since a GCN layer is
/// linear in its weight: `Â H [W_μ | W_σ] = [Â H W_μ | Â H W_σ]`.
///
/// Training (an autodiff device, as for dropout) samples `z = μ + σ · ε` from the device's
/// seeded generator; evaluation uses `μ`. The loss is [`recon_loss`] plus
/// `kl_loss(μ, log σ) / N` (PyG's example).
///
/// # Shapes
/// `x: [N, d_input]` -> embeddings `[N, d_output / 2]`.
///
/// # Panics
/// If the encoder's output has an odd number of columns.
#[derive(Module, Debug)]
pub struct Vgae<M: Module> {
    /// The encoder, giving `[μ | log σ]`.
    pub encoder: M,
}

impl<M: NodeModel> Vgae<M> {
    /// Wraps `encoder`, whose output is `[μ | log σ]`.
    pub fn new(encoder: M) -> Self {
        Vgae { encoder }
    }

    /// `μ`, `log σ` and the embedding of each node.
    pub fn encode(&self, x: Tensor<2>, graph: &GraphsTuple) -> VgaeEmbedding {
        self.embedding(self.encoder.forward_nodes(x, graph))
    }

    /// `μ`, `log σ` and the embedding from the encoder's output `[μ | log σ]`, for an encoder
    /// called some other way (sparse features, extra inputs).
    pub fn embedding(&self, out: Tensor<2>) -> VgaeEmbedding {
        let [n, width] = out.dims();
        assert!(
            width % 2 == 0,
            "Vgae: the encoder gives {width} columns; it must give 2·D ([μ | log σ])"
        );
        let d = width / 2;
        let mu = out.clone().slice([0..n, 0..d]);
        let logstd = out.slice([0..n, d..width]).clamp_max(MAX_LOGSTD);
        let device = mu.device();
        let z = if device.is_autodiff() {
            let eps = Tensor::<2>::random([n, d], Distribution::Normal(0.0, 1.0), &device);
            mu.clone() + eps * logstd.clone().exp()
        } else {
            mu.clone()
        };
        VgaeEmbedding { z, mu, logstd }
    }

    /// [`recon_loss`] of `pos` and `neg` under the sampled embedding, plus `kl_loss / N`.
    pub fn loss(&self, embedding: &VgaeEmbedding, pos: Pairs, neg: Pairs) -> Tensor<1> {
        let recon = InnerProductDecoder.recon_loss(embedding.z.clone(), pos, neg);
        let n = embedding.mu.dims()[0].max(1) as f64;
        recon + kl_loss(embedding.mu.clone(), embedding.logstd.clone()).div_scalar(n)
    }
}
