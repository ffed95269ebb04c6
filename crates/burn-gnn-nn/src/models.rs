//! Thin models: stacks of one convolution with dropout, an activation and optional jumping
//! knowledge — PyG's `GCN`, `GAT`, `GraphSAGE` and `GIN` (`BasicGNN`).

use burn::config::Config;
use burn::module::Module;
use burn::nn::{Dropout, DropoutConfig, Linear, LinearConfig};
use burn::tensor::Device;
use burn::tensor::Tensor;
use burn::tensor::activation::{gelu, leaky_relu, relu};
use burn_gnn_graph::{GraphsTuple, SparseMatrix};

use crate::{
    GatConv, GatConvConfig, GatInput, GcnConv, GcnConvConfig, GcnInput, GcnNorm, GinConv,
    GinConvConfig, NnError, SageConv, SageConvConfig,
};

/// The nonlinearity between a thin model's layers.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum Activation {
    /// `max(x, 0)`.
    Relu,
    /// ELU with `α = 1` (the GAT paper's).
    Elu,
    /// GELU (the exact, erf form).
    Gelu,
    /// LeakyReLU with slope 0.01.
    LeakyRelu,
    /// No nonlinearity.
    Identity,
}

impl Activation {
    /// Applies the nonlinearity element-wise.
    pub fn apply<const D: usize>(self, x: Tensor<D>) -> Tensor<D> {
        match self {
            Activation::Relu => relu(x),
            Activation::Elu => burn_segment::elu(x, 1.0),
            Activation::Gelu => gelu(x),
            Activation::LeakyRelu => leaky_relu(x, 0.01),
            Activation::Identity => x,
        }
    }
}

/// Jumping knowledge ([Xu et al., 2018](https://arxiv.org/abs/1806.03536)): every layer's
/// hidden output is kept and combined, then mapped linearly to `d_output`.
#[derive(Config, Debug, Copy, PartialEq, Eq)]
pub enum JumpingKnowledge {
    /// The last layer's hidden output.
    Last,
    /// Every layer's hidden output, concatenated.
    Cat,
    /// The element-wise maximum over the layers.
    Max,
}

/// The options every thin model's config holds.
struct Stack {
    d_input: usize,
    d_hidden: usize,
    d_output: usize,
    num_layers: usize,
    dropout: f64,
    activation: Activation,
    jk: Option<JumpingKnowledge>,
}

/// A thin model's config: the shared options, then the model's own (each with a default).
macro_rules! model_config {
    ($(#[$doc:meta])* $config:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty = $default:literal),* }) => {
        $(#[$doc])*
        #[derive(Config, Debug)]
        pub struct $config {
            /// Input features per node.
            pub d_input: usize,
            /// Hidden features per node.
            pub d_hidden: usize,
            /// Output features per node.
            pub d_output: usize,
            /// Number of convolutions, at least 1.
            #[config(default = 2)]
            pub num_layers: usize,
            /// Dropout before every convolution (training only).
            #[config(default = 0.0)]
            pub dropout: f64,
            /// Activation between convolutions (and after every one, with `jk`).
            #[config(default = "Activation::Relu")]
            pub activation: Activation,
            /// Jumping knowledge: `None` lets the last convolution output `d_output`.
            #[config(default = "None")]
            pub jk: Option<JumpingKnowledge>,
            $($(#[$fdoc])* #[config(default = $default)] pub $field: $ty,)*
        }

        impl $config {
            fn stack(&self) -> Stack {
                Stack {
                    d_input: self.d_input,
                    d_hidden: self.d_hidden,
                    d_output: self.d_output,
                    num_layers: self.num_layers,
                    dropout: self.dropout,
                    activation: self.activation,
                    jk: self.jk,
                }
            }
        }
    };
}

model_config!(
    /// Config of [`Gcn`].
    GcnConfig {}
);
model_config!(
    /// Config of [`GraphSage`].
    GraphSageConfig {}
);
model_config!(
    /// Config of [`Gin`].
    GinConfig {}
);
model_config!(
    /// Config of [`Gat`]; `heads` must divide `d_hidden` (the paper: 8 heads × 8 features).
    GatConfig {
        /// Concatenated heads of each hidden layer.
        heads: usize = 8,
        /// Averaged heads of the output layer (the paper: 1 on Cora, 8 on PubMed).
        out_heads: usize = 1
    }
);

/// The shared part of every thin model: dropout, activation, jumping knowledge.
#[derive(Module, Debug)]
pub struct StackHead {
    /// Dropout before each convolution.
    pub dropout: Dropout,
    /// The map from the jumping-knowledge features to `d_output`; `None` without `jk`.
    pub jk_lin: Option<Linear>,
    /// The activation between layers.
    #[module(skip)]
    pub activation: Activation,
    /// The jumping-knowledge mode.
    #[module(skip)]
    pub jk: Option<JumpingKnowledge>,
}

impl Stack {
    /// Widths `(d_in, d_out)` of each convolution, and the head.
    fn plan(&self, device: &Device) -> (Vec<(usize, usize)>, StackHead) {
        crate::error::expect_valid(self.check());
        let jk_width = self.jk.map(|jk| match jk {
            JumpingKnowledge::Last | JumpingKnowledge::Max => self.d_hidden,
            JumpingKnowledge::Cat => self.d_hidden * self.num_layers,
        });
        let last_out = if jk_width.is_some() {
            self.d_hidden
        } else {
            self.d_output
        };
        let widths = (0..self.num_layers)
            .map(|i| {
                let d_in = if i == 0 { self.d_input } else { self.d_hidden };
                (
                    d_in,
                    if i + 1 == self.num_layers {
                        last_out
                    } else {
                        self.d_hidden
                    },
                )
            })
            .collect();
        let head = StackHead {
            dropout: DropoutConfig::new(self.dropout).init(),
            jk_lin: jk_width.map(|w| LinearConfig::new(w, self.d_output).init(device)),
            activation: self.activation,
            jk: self.jk,
        };
        (widths, head)
    }

    /// Whether the stack's configuration is in range.
    fn check(&self) -> Result<(), NnError> {
        if self.num_layers == 0 {
            return Err(NnError::InvalidConfig(
                "num_layers must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

impl StackHead {
    /// Runs `layer(i, x)` for each layer with dropout before and the activation between (and,
    /// with jumping knowledge, after every layer), then combines.
    fn run(
        &self,
        layers: usize,
        x: Tensor<2>,
        mut layer: impl FnMut(usize, Tensor<2>) -> Tensor<2>,
    ) -> Tensor<2> {
        let first = layer(0, crate::compat::dropout::dropout(&self.dropout, x));
        self.run_after_first(layers, first, layer)
    }

    /// As [`run`](Self::run) on a sparse input: `first` maps the input, with this head's
    /// dropout applied to its stored values, through the first layer.
    fn run_sparse(
        &self,
        layers: usize,
        x: &SparseMatrix,
        first: impl FnOnce(&SparseMatrix) -> Tensor<2>,
        layer: impl FnMut(usize, Tensor<2>) -> Tensor<2>,
    ) -> Tensor<2> {
        let x = x.with_values(crate::compat::dropout::dropout(
            &self.dropout,
            x.values.clone(),
        ));
        self.run_after_first(layers, first(&x), layer)
    }

    /// The rest of [`run`](Self::run), given the first layer's output.
    fn run_after_first(
        &self,
        layers: usize,
        first: Tensor<2>,
        mut layer: impl FnMut(usize, Tensor<2>) -> Tensor<2>,
    ) -> Tensor<2> {
        let mut h = first;
        let mut outs = Vec::new();
        for i in 0..layers {
            if i > 0 {
                h = layer(i, crate::compat::dropout::dropout(&self.dropout, h));
            }
            if i + 1 < layers || self.jk_lin.is_some() {
                h = self.activation.apply(h);
                outs.push(h.clone());
            }
        }
        let Some(lin) = &self.jk_lin else { return h };
        let combined = match self.jk {
            Some(JumpingKnowledge::Cat) => Tensor::cat(outs, 1),
            Some(JumpingKnowledge::Max) => outs
                .into_iter()
                .reduce(|a, b| a.max_pair(b))
                .expect("at least one layer"),
            _ => h,
        };
        if combined.dims()[0] == 0 {
            return crate::compat::no_rows(lin.weight.dims()[1], &combined);
        }
        crate::compat::linear(lin, combined)
    }
}

macro_rules! thin_model {
    ($(#[$doc:meta])* $name:ident, $config:ident, $conv:ty, |$stack:ident, $d_in:ident, $d_out:ident, $device:ident| $make:expr) => {
        thin_model!(@model $(#[$doc])* $name, $config, $conv, |$stack, $d_in, $d_out, $device| $make);

        impl $name {
            /// Applies the model over `graph`.
            pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
                self.head.run(self.convs.len(), x, |i, h| self.convs[i].forward(h, graph))
            }
        }
    };
    // The struct and its config's `init`, for a model that writes its own `forward`.
    (@model $(#[$doc:meta])* $name:ident, $config:ident, $conv:ty, |$stack:ident, $d_in:ident, $d_out:ident, $device:ident| $make:expr) => {
        $(#[$doc])*
        ///
        /// # Shapes
        /// `x: [N, d_input]` -> `[N, d_output]`.
        #[derive(Module, Debug)]
        pub struct $name {
            /// The convolutions.
            pub convs: Vec<$conv>,
            /// Dropout, activation and jumping knowledge.
            pub head: StackHead,
        }

        impl $config {
            /// Whether the configuration is in range.
            ///
            /// # Errors
            /// [`NnError::InvalidConfig`] if `num_layers` is 0.
            pub fn check(&self) -> Result<(), NnError> {
                self.stack().check()
            }

            #[doc = concat!("A [`", stringify!($name), "`] with freshly initialised parameters.")]
            ///
            /// # Panics
            /// With [`check`](Self::check)'s message for a configuration out of range.
            pub fn init(&self, $device: &Device) -> $name {
                let $stack = self.stack();
                let (widths, head) = $stack.plan($device);
                let convs = widths.into_iter().map(|($d_in, $d_out)| $make).collect();
                $name { convs, head }
            }
        }
    };
}

thin_model!(
    @model
    /// GCN ([Kipf & Welling, 2017](https://arxiv.org/abs/1609.02907)): a stack of [`GcnConv`].
    Gcn, GcnConfig, GcnConv, |stack, d_in, d_out, device| GcnConvConfig::new(d_in, d_out).init(device)
);
thin_model!(
    /// GraphSAGE ([Hamilton et al., 2017](https://arxiv.org/abs/1706.02216)): a stack of
    /// mean-aggregating [`SageConv`].
    GraphSage, GraphSageConfig, SageConv, |stack, d_in, d_out, device| SageConvConfig::new(d_in, d_out).init(device)
);
thin_model!(
    /// GIN ([Xu et al., 2019](https://arxiv.org/abs/1810.00826)): a stack of [`GinConv`] with
    /// hidden-width MLPs.
    Gin, GinConfig, GinConv, |stack, d_in, d_out, device| GinConvConfig::new(d_in, stack.d_hidden, d_out).init(device)
);

/// GAT ([Veličković et al., 2018](https://arxiv.org/abs/1710.10903)) as in the paper's
/// transductive setup: hidden layers of `heads` concatenated heads of `d_hidden / heads`
/// features each, an output layer of `out_heads` averaged heads, ELU between, and the reference
/// code's dropout: on the inputs of every layer, on attention, and on the transformed features
/// before aggregation ([`GatConvConfig::feature_dropout`]).
///
/// # Shapes
/// `x: [N, d_input]` -> `[N, d_output]`.
#[derive(Module, Debug)]
pub struct Gat {
    /// The convolutions.
    pub convs: Vec<GatConv>,
    /// Dropout, activation and jumping knowledge.
    pub head: StackHead,
}

impl GatConfig {
    /// A [`Gat`] with freshly initialised parameters.
    ///
    /// # Panics
    /// With [`check`](Self::check)'s message for a configuration out of range.
    pub fn init(&self, device: &Device) -> Gat {
        crate::error::expect_valid(self.check());
        let (cfg, heads, out_heads) = (self.stack(), self.heads, self.out_heads);
        let (widths, head) = cfg.plan(device);
        let last = widths.len() - 1;
        let convs = widths
            .into_iter()
            .enumerate()
            .map(|(i, (d_in, d_out))| {
                let (d_head, heads) = if i == last && cfg.jk.is_none() {
                    (d_out, out_heads)
                } else {
                    (d_out / heads, heads)
                };
                GatConvConfig::new(d_in, d_head)
                    .with_dropout(cfg.dropout)
                    .with_feature_dropout(cfg.dropout)
                    .with_heads(heads)
                    .with_concat(i != last || cfg.jk.is_some())
                    .init(device)
            })
            .collect();
        Gat { convs, head }
    }

    /// Whether the configuration is in range.
    ///
    /// # Errors
    /// [`NnError::InvalidConfig`] if `num_layers` or `out_heads` is 0, or `heads` does not
    /// divide `d_hidden`.
    pub fn check(&self) -> Result<(), NnError> {
        let (cfg, heads, out_heads) = (self.stack(), self.heads, self.out_heads);
        if heads == 0 || out_heads == 0 || !cfg.d_hidden.is_multiple_of(heads) {
            return Err(NnError::InvalidConfig(format!(
                "{heads} heads must divide d_hidden = {}",
                cfg.d_hidden
            )));
        }
        cfg.check()
    }
}

impl Gat {
    /// Applies the model over `graph`.
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        self.head
            .run(self.convs.len(), x, |i, h| self.convs[i].forward(h, graph))
    }

    /// [`forward`](Self::forward) on sparse node features: the first layer's product runs as
    /// [`SparseMatrix::matmul`] (`O(nnz · d)`, forward and backward), and input dropout drops
    /// stored entries. Same result as `forward(x.to_dense(), graph)` up to float rounding and
    /// the dropout draws.
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward_sparse(&self, x: &SparseMatrix, graph: &GraphsTuple) -> Tensor<2> {
        let first = |x: &SparseMatrix| {
            let conv = &self.convs[0];
            conv.forward_with(GatInput::new(x.matmul(conv.weight.val()), graph).projected())
        };
        self.head.run_sparse(self.convs.len(), x, first, |i, h| {
            self.convs[i].forward(h, graph)
        })
    }

    // ANCHOR: decayed
    /// `Σ w²` over what the paper's L2 regularisation covers: every layer's weight and
    /// attention vectors (not the biases). The loss adds `λ/2` times this.
    pub fn decayed_norm_sq(&self) -> Tensor<1> {
        let sq = |t: Tensor<2>| t.powi_scalar(2).sum();
        self.convs
            .iter()
            .map(|c| sq(c.weight.val()) + sq(c.att_src.val()) + sq(c.att_dst.val()))
            .reduce(|a, b| a + b)
            .expect("a GAT has at least one layer (checked at init)")
    }
    // ANCHOR_END: decayed
}

impl Gcn {
    /// Applies the model over `graph`. The graph's normalisation is computed once and shared
    /// by the layers (they all normalise alike unless their fields were changed).
    pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
        let norm = self.convs[0].normalization(graph, None);
        self.head
            .run(self.convs.len(), x, |i, h| self.layer(i, h, graph, &norm))
    }

    /// [`forward`](Self::forward) on sparse node features, as [`Gat::forward_sparse`].
    ///
    /// # Shapes
    /// `x: [N, d_input]` -> `[N, d_output]`.
    pub fn forward_sparse(&self, x: &SparseMatrix, graph: &GraphsTuple) -> Tensor<2> {
        let norm = self.convs[0].normalization(graph, None);
        let first = |x: &SparseMatrix| {
            let conv = &self.convs[0];
            conv.forward_with(GcnInput::normalized(x.matmul(conv.weight.val()), &norm).projected())
        };
        self.head.run_sparse(self.convs.len(), x, first, |i, h| {
            self.layer(i, h, graph, &norm)
        })
    }

    /// `Σ w²` over what the paper's L2 regularisation covers: the first layer's weight only
    /// (Kipf & Welling's reference code). The loss adds `λ/2` times this.
    pub fn decayed_norm_sq(&self) -> Tensor<1> {
        self.convs[0].weight.val().powi_scalar(2).sum()
    }

    /// Layer `i` with the first layer's normalisation `norm` when it normalises alike.
    fn layer(&self, i: usize, h: Tensor<2>, graph: &GraphsTuple, norm: &GcnNorm) -> Tensor<2> {
        let (conv, first) = (&self.convs[i], &self.convs[0]);
        let alike = (conv.add_self_loops, conv.improved, conv.normalize)
            == (first.add_self_loops, first.improved, first.normalize);
        if alike {
            conv.forward_with(GcnInput::normalized(h, norm))
        } else {
            conv.forward(h, graph)
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Tensor, TensorData};

    #[test]
    fn gcn_shares_the_normalisation_only_between_layers_that_normalise_alike() {
        use crate::GcnConfig;
        use burn_gnn_graph::GraphsTuple;
        let device = burn::tensor::Device::flex();
        let (s, r) = (vec![0i64, 1, 1, 2, 3, 3, 4], vec![1i64, 0, 2, 3, 3, 4, 0]);
        let graph = GraphsTuple::from_coo(&s, &r, 5, &device).unwrap();
        let x = Tensor::<2>::from_data(
            TensorData::new(
                (0..15).map(|k| (k % 7) as f32 - 3.0).collect::<Vec<_>>(),
                [5, 3],
            ),
            &device,
        );
        let mut gcn = GcnConfig::new(3, 4, 2).init(&device);
        for second_loops in [true, false] {
            gcn.convs[1].add_self_loops = second_loops;
            let got: Vec<f32> = gcn
                .forward(x.clone(), &graph)
                .to_data()
                .try_to_vec()
                .unwrap();
            let h = burn::tensor::activation::relu(gcn.convs[0].forward(x.clone(), &graph));
            let want: Vec<f32> = gcn.convs[1]
                .forward(h, &graph)
                .to_data()
                .try_to_vec()
                .unwrap();
            assert_eq!(got, want, "second layer self loops {second_loops}");
        }
    }
}
