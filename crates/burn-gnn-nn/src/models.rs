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
    GatConv, GatConvConfig, GcnConv, GcnConvConfig, GcnNorm, GinConv, GinConvConfig, NnError,
    SageConv, SageConvConfig,
};

/// The options every thin model shares.
#[derive(Config, Debug)]
pub struct StackConfig {
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
    /// Activation between convolutions: `relu`, `elu`, `gelu`, `leaky_relu` (slope 0.01) or
    /// `identity`.
    #[config(default = "String::from(\"relu\")")]
    pub activation: String,
    /// Jumping knowledge ([Xu et al., 2018](https://arxiv.org/abs/1806.03536)): `None` (the last
    /// convolution outputs `d_output`), `"last"`, `"cat"` or `"max"` over every layer's hidden
    /// output, then a linear map to `d_output`.
    #[config(default = "None")]
    pub jk: Option<String>,
}

/// The nonlinearity between layers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Activation {
    Relu,
    Elu,
    Gelu,
    LeakyRelu,
    Identity,
}

impl Activation {
    fn parse(name: &str) -> Result<Activation, NnError> {
        Ok(match name {
            "relu" => Activation::Relu,
            "elu" => Activation::Elu,
            "gelu" => Activation::Gelu,
            "leaky_relu" => Activation::LeakyRelu,
            "identity" => Activation::Identity,
            other => {
                return Err(NnError::InvalidConfig(format!(
                    "unknown activation `{other}`"
                )));
            }
        })
    }

    fn apply(self, x: Tensor<2>) -> Tensor<2> {
        match self {
            Activation::Relu => relu(x),
            Activation::Elu => elu_branch_free(x),
            Activation::Gelu => gelu(x),
            Activation::LeakyRelu => leaky_relu(x, 0.01),
            Activation::Identity => x,
        }
    }
}

/// ELU (α = 1) from branch-free element-wise ops: `(x + m) + (exp(-m) - 1)` with `m =
/// relu(-x)`. Burn's `elu` selects through `mask_where`, whose Flex kernel branches per element
/// (a mispredicted branch for about every other activation), once forward and twice backward.
///
/// Same values as Burn's `elu` for every finite `x` (`x + m` is `x` or exactly 0, `exp(-m) - 1`
/// is 0 or `exp(x) - 1`); the derivative is 1 for `x > 0` and `exp(x)` for `x < 0`, and 1 at 0
/// whatever sub-gradient `relu` takes there (its factor `1 - exp(-m)` vanishes). `-inf` gives
/// NaN here (Burn's gives -1).
fn elu_branch_free(x: Tensor<2>) -> Tensor<2> {
    let m = relu(x.clone().neg());
    (x + m.clone()) + (m.neg().exp() - 1.0)
}

/// The shared part of every thin model: dropout, activation, jumping knowledge.
#[derive(Module, Debug)]
pub struct StackHead {
    /// Dropout before each convolution.
    pub dropout: Dropout,
    /// The map from the jumping-knowledge features to `d_output`; `None` without `jk`.
    pub jk_lin: Option<Linear>,
    /// The activation's name.
    pub activation: String,
    /// The jumping-knowledge mode.
    pub jk: Option<String>,
}

impl StackConfig {
    /// Widths `(d_in, d_out)` of each convolution, and the head.
    fn plan(&self, device: &Device) -> Result<(Vec<(usize, usize)>, StackHead), NnError> {
        if self.num_layers == 0 {
            return Err(NnError::InvalidConfig(
                "num_layers must be at least 1".into(),
            ));
        }
        Activation::parse(&self.activation)?;
        let jk_width = match self.jk.as_deref() {
            None => None,
            Some("last") | Some("max") => Some(self.d_hidden),
            Some("cat") => Some(self.d_hidden * self.num_layers),
            Some(other) => {
                return Err(NnError::InvalidConfig(format!(
                    "unknown jumping knowledge `{other}`"
                )));
            }
        };
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
            activation: self.activation.clone(),
            jk: self.jk.clone(),
        };
        Ok((widths, head))
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
        let first = layer(0, crate::dropout::dropout(&self.dropout, x));
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
        let x = x.with_values(crate::dropout::dropout(&self.dropout, x.values.clone()));
        self.run_after_first(layers, first(&x), layer)
    }

    /// The rest of [`run`](Self::run), given the first layer's output.
    fn run_after_first(
        &self,
        layers: usize,
        first: Tensor<2>,
        mut layer: impl FnMut(usize, Tensor<2>) -> Tensor<2>,
    ) -> Tensor<2> {
        let act = Activation::parse(&self.activation).expect("checked at init");
        let mut h = first;
        let mut outs = Vec::new();
        for i in 0..layers {
            if i > 0 {
                h = layer(i, crate::dropout::dropout(&self.dropout, h));
            }
            if i + 1 < layers || self.jk_lin.is_some() {
                h = act.apply(h);
                outs.push(h.clone());
            }
        }
        let Some(lin) = &self.jk_lin else { return h };
        let combined = match self.jk.as_deref() {
            Some("cat") => Tensor::cat(outs, 1),
            Some("max") => outs
                .into_iter()
                .reduce(|a, b| a.max_pair(b))
                .expect("at least one layer"),
            _ => h,
        };
        if combined.dims()[0] == 0 {
            return crate::conv::no_rows(lin.weight.dims()[1], &combined);
        }
        lin.forward(combined)
    }
}

macro_rules! thin_model {
    ($(#[$doc:meta])* $name:ident, $conv:ty, |$cfg:ident, $d_in:ident, $d_out:ident, $device:ident| $make:expr) => {
        thin_model!(@model $(#[$doc])* $name, $conv, |$cfg, $d_in, $d_out, $device| $make);

        impl $name {
            /// Applies the model over `graph`.
            pub fn forward(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2> {
                self.head.run(self.convs.len(), x, |i, h| self.convs[i].forward(h, graph))
            }
        }
    };
    // The struct and its constructor, for a model that writes its own `forward`.
    (@model $(#[$doc:meta])* $name:ident, $conv:ty, |$cfg:ident, $d_in:ident, $d_out:ident, $device:ident| $make:expr) => {
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

        impl $name {
            /// A model from the shared options.
            ///
            /// # Errors
            /// `num_layers = 0`, an unknown activation or jumping-knowledge mode.
            pub fn new($cfg: &StackConfig, $device: &Device) -> Result<Self, NnError> {
                let (widths, head) = $cfg.plan($device)?;
                let convs = widths.into_iter().map(|($d_in, $d_out)| $make).collect::<Result<Vec<_>, NnError>>()?;
                Ok($name { convs, head })
            }
        }
    };
}

thin_model!(
    @model
    /// GCN ([Kipf & Welling, 2017](https://arxiv.org/abs/1609.02907)): a stack of [`GcnConv`].
    Gcn, GcnConv, |cfg, d_in, d_out, device| Ok(GcnConvConfig::new(d_in, d_out).init(device))
);
thin_model!(
    /// GraphSAGE ([Hamilton et al., 2017](https://arxiv.org/abs/1706.02216)): a stack of
    /// mean-aggregating [`SageConv`].
    GraphSage, SageConv, |cfg, d_in, d_out, device| SageConvConfig::new(d_in, d_out).init(device)
);
thin_model!(
    /// GIN ([Xu et al., 2019](https://arxiv.org/abs/1810.00826)): a stack of [`GinConv`] with
    /// hidden-width MLPs.
    Gin, GinConv, |cfg, d_in, d_out, device| Ok(GinConvConfig::new(d_in, cfg.d_hidden, d_out).init(device))
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

impl Gat {
    /// A GAT; `heads` must divide `d_hidden` (the paper: 8 heads × 8 features = 64).
    ///
    /// # Errors
    /// As the other thin models, and `heads` not dividing `d_hidden`.
    pub fn new(
        cfg: &StackConfig,
        heads: usize,
        out_heads: usize,
        device: &Device,
    ) -> Result<Gat, NnError> {
        if heads == 0 || out_heads == 0 || !cfg.d_hidden.is_multiple_of(heads) {
            return Err(NnError::InvalidConfig(format!(
                "{heads} heads must divide d_hidden = {}",
                cfg.d_hidden
            )));
        }
        let (widths, head) = cfg.plan(device)?;
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
        Ok(Gat { convs, head })
    }

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
            conv.forward_projected(x.matmul(conv.weight.val()), graph)
        };
        self.head.run_sparse(self.convs.len(), x, first, |i, h| {
            self.convs[i].forward(h, graph)
        })
    }
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
            conv.forward_projected(x.matmul(conv.weight.val()), &norm)
        };
        self.head.run_sparse(self.convs.len(), x, first, |i, h| {
            self.layer(i, h, graph, &norm)
        })
    }

    /// Layer `i` with the first layer's normalisation `norm` when it normalises alike.
    fn layer(&self, i: usize, h: Tensor<2>, graph: &GraphsTuple, norm: &GcnNorm) -> Tensor<2> {
        let (conv, first) = (&self.convs[i], &self.convs[0]);
        let alike = (conv.add_self_loops, conv.improved, conv.normalize)
            == (first.add_self_loops, first.improved, first.normalize);
        if alike {
            conv.forward_normalized(h, norm)
        } else {
            conv.forward(h, graph)
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Tensor, TensorData, activation::elu};

    #[test]
    fn gcn_shares_the_normalisation_only_between_layers_that_normalise_alike() {
        use crate::{Gcn, StackConfig};
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
        let mut gcn = Gcn::new(&StackConfig::new(3, 4, 2), &device).unwrap();
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

    #[test]
    fn branch_free_elu_equals_burns_elu_with_the_exact_derivative() {
        let device = burn::tensor::Device::flex().autodiff();
        let xs: Vec<f32> = vec![
            -90.0, -20.0, -3.5, -1.0, -1e-7, -0.0, 0.0, 1e-7, 0.5, 3.0, 1e30,
        ];
        let n = xs.len();
        let x = Tensor::<2>::from_data(TensorData::new(xs.clone(), [1, n]), &device).require_grad();
        let ours = super::elu_branch_free(x.clone());
        let burns = elu(x.clone(), 1.0);
        let (a, b): (Vec<f32>, Vec<f32>) = (
            ours.to_data().try_to_vec::<f32>().unwrap(),
            burns.to_data().try_to_vec::<f32>().unwrap(),
        );
        for k in 0..n {
            assert_eq!(a[k], b[k], "elu({})", xs[k]);
        }
        let grads = ours.sum().backward();
        let g: Vec<f32> = x
            .grad(&grads)
            .unwrap()
            .to_data()
            .try_to_vec::<f32>()
            .unwrap();
        for k in 0..n {
            // ELU' is 1 for x >= 0 (continuous at 0 for α = 1) and exp(x) below.
            let want = if xs[k] >= 0.0 {
                1.0
            } else {
                (xs[k] as f64).exp() as f32
            };
            assert!(
                (g[k] - want).abs() <= 1e-6 * want.max(1.0),
                "elu'({}) = {} not {want}",
                xs[k],
                g[k]
            );
        }
        let nan = super::elu_branch_free(Tensor::<2>::from_data(
            TensorData::new(vec![f32::NAN], [1, 1]),
            &device,
        ));
        assert!(nan.into_scalar::<f32>().is_nan());
    }
}
