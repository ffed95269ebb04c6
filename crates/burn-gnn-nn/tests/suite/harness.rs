//! The conformance harness every layer passes: output shapes; node-permutation equivariance and
//! edge-permutation invariance; a batch equals the per-graph results; graphs without edges,
//! empty graphs and isolated nodes give finite outputs; every parameter gets a finite gradient.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, Gradients, Tensor};
use burn_gnn_graph::gather_rows;
use burn_gnn_graph::{GraphsTuple, batch};
use burn_gnn_nn::{
    Activation, Aggregation, AppnpConfig, ChebConvConfig, ConcatMlp, ConcatMlpConfig, DeepSets,
    DynamicEdgeConvConfig, EdgeConvConfig, GatConfig, GatConvConfig, GatInput, GatV2ConvConfig,
    GcnConfig, GcnConvConfig, GinConfig, GinConv, GinConvConfig, GineConvConfig, GpsConvConfig,
    GpsNorm, GraphConvConfig, GraphConvolution, GraphGpsConfig, GraphLayerNormConfig,
    GraphMapFeatures, GraphNetwork, GraphNormConfig, GraphSageConfig, InteractionNetwork, JraphGat,
    JumpingKnowledge, PairNormConfig, PnaConvConfig, SageConvConfig, SgConvConfig,
    TransformerConvConfig,
};

use crate::common::*;

/// Checks that every float parameter has a finite gradient.
pub struct FiniteGrads<'a> {
    pub grads: &'a Gradients,
    pub seen: usize,
    pub what: String,
    /// Whether every parameter must have a gradient (on a graph without edges, an edge update
    /// touches no data and its parameters have none: a zero gradient, which Burn leaves out).
    pub require_all: bool,
}

impl ModuleVisitor for FiniteGrads<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let Some(grad) = param.val().grad(self.grads) else {
            assert!(
                !self.require_all,
                "{}: a parameter has no gradient",
                self.what
            );
            return;
        };
        assert!(
            host(grad).iter().all(|g| g.is_finite()),
            "{}: non-finite gradient",
            self.what
        );
        self.seen += 1;
    }
}

fn finite(t: Tensor<2>, what: &str) -> Vec<f64> {
    let v = host(t);
    assert!(
        v.iter().all(|x| x.is_finite()),
        "{what}: non-finite output {v:?}"
    );
    v
}

/// Runs every check on one layer. `run` applies it; `d_input`/`d_output` are its widths.
fn conformance<M: Module>(
    name: &str,
    make: impl Fn(&Device) -> M,
    run: impl Fn(&M, Tensor<2>, &GraphsTuple) -> Tensor<2>,
    d_input: usize,
    d_output: usize,
) {
    for (device_name, d) in devices() {
        let what = format!("{name} on {device_name}");
        let layer = make(&d);
        let mut rng = Rng(17);
        let n = 9;
        let (s, r) = random_edges(&mut rng, n, 20);
        let (xv, x) = random_x(&mut rng, n, d_input, &d);
        let g = graph(&s, &r, n, &d);
        let out = run(&layer, x.clone(), &g);
        assert_eq!(out.dims(), [n, d_output], "{what}: shape");
        let base = finite(out, &what);

        let lonely = graph(&[], &[], 4, &d);
        // autodiff<wgpu> only checks gradients: the forward checks ran on wgpu already, and the
        // software driver compiles every new kernel shape (the slowest part of the suite).
        if device_name != "autodiff<wgpu>" {
            // Node permutation: new node k is old node perm[k].
            let perm: Vec<usize> = (0..n).map(|k| (k * 4 + 3) % n).collect();
            let mut inv = vec![0i64; n];
            perm.iter()
                .enumerate()
                .for_each(|(k, &p)| inv[p] = k as i64);
            let xp: Vec<f64> = perm
                .iter()
                .flat_map(|&p| xv[p * d_input..(p + 1) * d_input].to_vec())
                .collect();
            let (sp, rp): (Vec<i64>, Vec<i64>) = s
                .iter()
                .zip(&r)
                .map(|(&a, &b)| (inv[a as usize], inv[b as usize]))
                .unzip();
            let outp = host(run(
                &layer,
                floats(&xp, [n, d_input], &d),
                &graph(&sp, &rp, n, &d),
            ));
            let want: Vec<f64> = perm
                .iter()
                .flat_map(|&p| base[p * d_output..(p + 1) * d_output].to_vec())
                .collect();
            assert_close(
                &outp,
                &want,
                1e-4,
                &format!("{what}: node permutation equivariance"),
            );

            // Edge permutation: the same output.
            let order: Vec<usize> = (0..s.len()).rev().collect();
            let (se, re): (Vec<i64>, Vec<i64>) = order.iter().map(|&e| (s[e], r[e])).unzip();
            let oute = host(run(&layer, x.clone(), &graph(&se, &re, n, &d)));
            assert_close(
                &oute,
                &base,
                1e-4,
                &format!("{what}: edge permutation invariance"),
            );

            // A batch of two graphs equals the two results stacked.
            let m = 5;
            let (s2, r2) = random_edges(&mut rng, m, 7);
            let (xv2, x2) = random_x(&mut rng, m, d_input, &d);
            let g2 = graph(&s2, &r2, m, &d);
            let b = batch(&[g.clone(), g2.clone()]).unwrap();
            let xb: Vec<f64> = xv.iter().chain(&xv2).copied().collect();
            let outb = host(run(&layer, floats(&xb, [n + m, d_input], &d), &b));
            let mut want = base.clone();
            want.extend(host(run(&layer, x2, &g2)));
            assert_close(&outb, &want, 1e-4, &format!("{what}: batched == per graph"));

            // No edges, and no nodes at all.
            let (_, x4) = random_x(&mut rng, 4, d_input, &d);
            let out = run(&layer, x4, &lonely);
            assert_eq!(out.dims(), [4, d_output], "{what}: zero edges");
            finite(out, &format!("{what}: zero edges"));
            let empty = graph(&[], &[], 0, &d);
            let out = run(&layer, Tensor::zeros([0, d_input], &d), &empty);
            assert_eq!(out.dims(), [0, d_output], "{what}: empty graph");
        }

        // Gradients: every parameter, finite, with isolated nodes and duplicate edges present.
        if d.is_autodiff() {
            let x = x.require_grad();
            // The graph's plans exist after the forward pass above: forward and backward
            // aggregate through them, with no id planned per call (counted on the CPU kernels).
            let unplanned = burn_segment::cpu::unplanned_calls_on_this_thread();
            let out = run(&layer, x.clone(), &g);
            let grads = (out.clone() * out).sum().backward();
            assert_eq!(
                burn_segment::cpu::unplanned_calls_on_this_thread(),
                unplanned,
                "{what}: an op planned its ids per call instead of using the graph's plans"
            );
            let gx = x.grad(&grads).expect("input gradient");
            assert!(
                host(gx).iter().all(|v| v.is_finite()),
                "{what}: input gradient"
            );
            let mut check = FiniteGrads {
                grads: &grads,
                seen: 0,
                what: what.clone(),
                require_all: true,
            };
            layer.visit(&mut check);
            assert!(
                check.seen > 0 || name.starts_with("Appnp") || name.starts_with("PairNorm"),
                "{what}: no parameters visited"
            );
            // And on a graph without edges.
            let (_, x4) = random_x(&mut rng, 4, d_input, &d);
            let x4 = x4.require_grad();
            let out = run(&layer, x4.clone(), &lonely);
            if !out.is_require_grad() {
                // The output is a constant here (EdgeConv without edges): nothing to check.
                continue;
            }
            let grads = out.sum().backward();
            let g4 = x4.grad(&grads).expect("input gradient (zero edges)");
            assert!(
                host(g4).iter().all(|v| v.is_finite()),
                "{what}: input gradient (zero edges)"
            );
            let mut check = FiniteGrads {
                grads: &grads,
                seen: 0,
                what: format!("{what} (zero edges)"),
                require_all: false,
            };
            layer.visit(&mut check);
        }
    }
}

#[test]
fn gcn_conv_conforms() {
    conformance(
        "GcnConv",
        |d| GcnConvConfig::new(3, 4).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "GcnConv(improved, no bias)",
        |d| {
            GcnConvConfig::new(3, 2)
                .with_improved(true)
                .with_bias(false)
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
}

#[test]
fn gat_conv_conforms() {
    conformance(
        "GatConv",
        |d| GatConvConfig::new(3, 4).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "GatConv(3 heads, mean)",
        |d| {
            GatConvConfig::new(3, 2)
                .with_heads(3)
                .with_concat(false)
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    conformance(
        "GatConv(edge_dim)",
        |d| {
            GatConvConfig::new(3, 2)
                .with_heads(2)
                .with_edge_dim(Some(3))
                .init(d)
        },
        |l, x: Tensor<2>, g: &GraphsTuple| {
            let e = gather_rows(x.clone(), g.senders().clone())
                - gather_rows(x.clone(), g.receivers().clone());
            l.forward_with(GatInput::new(x, g).edge_attr(e))
        },
        3,
        4,
    );
    conformance(
        "GatConv(2 heads, concat)",
        |d| GatConvConfig::new(3, 2).with_heads(2).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
}

/// An aggregation by name (PyG's spelling), several separated by commas.
fn aggregation(names: &str) -> Aggregation {
    let names: Vec<&str> = names.split(',').collect();
    match names[..] {
        [one] => one.parse().unwrap(),
        _ => Aggregation::multi(&names).unwrap(),
    }
}

#[test]
fn sage_conv_conforms() {
    for aggr in [
        "mean",
        "max",
        "sum",
        "min",
        "std",
        "var",
        "powermean:2",
        "softmax:2",
        "mean,max",
        "var:1",
        "std:1",
        "median",
        "quantile:0.75",
        "sort:2",
    ] {
        conformance(
            &format!("SageConv({aggr})"),
            |d| {
                SageConvConfig::new(3, 4)
                    .with_aggr(aggregation(aggr))
                    .init(d)
            },
            |l, x, g| l.forward(x, g),
            3,
            4,
        );
    }
    conformance(
        "SageConv(normalize)",
        |d| SageConvConfig::new(3, 4).with_normalize(true).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
}

#[test]
fn gin_conv_conforms() {
    conformance(
        "GinConv",
        |d| GinConvConfig::new(3, 5, 4).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    // Not `batch_norm`: in training its statistics are the batch's, so a batch of graphs is not
    // the graphs one by one (by design); paper_layers checks it against a reference instead.
    conformance(
        "GinConv(train_eps)",
        |d| {
            GinConvConfig::new(3, 5, 4)
                .with_train_eps(true)
                .with_eps(0.5)
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
}

#[test]
fn graph_network_conforms() {
    // Edge update from both end nodes, node update from the node and its aggregated edges.
    conformance(
        "GraphNetwork",
        |d| {
            GraphNetwork::<ConcatMlp, ConcatMlp, ConcatMlp>::new(
                Some(ConcatMlpConfig::new(6, 5, 2).init(d)),
                Some(ConcatMlpConfig::new(3 + 2 + 2, 5, 4).init(d)),
                None,
            )
        },
        |l, x, g| {
            l.forward(&g.clone().with_nodes(x).unwrap())
                .unwrap()
                .node_tensor::<2>()
                .unwrap()
        },
        3,
        4,
    );
}

#[test]
fn second_batch_conforms() {
    conformance(
        "GatV2Conv(2 heads)",
        |d| GatV2ConvConfig::new(3, 2).with_heads(2).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "GraphConv(mean)",
        |d| {
            GraphConvConfig::new(3, 4)
                .with_aggr(Aggregation::Mean)
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "SgConv(K=2)",
        |d| SgConvConfig::new(3, 4).with_k(2).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "Appnp(K=3)",
        |_| AppnpConfig::new(3, 0.1).init(),
        |l, x, g| l.forward(x, g),
        3,
        3,
    );
    conformance(
        "ChebConv(K=3)",
        |d| ChebConvConfig::new(3, 4, 3).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "GineConv",
        |d| GineConvConfig::new(3, 5, 4, 3).with_train_eps(true).init(d),
        // Edge features from the end nodes: they move with nodes and edges, as data would.
        |l, x: Tensor<2>, g: &GraphsTuple| {
            let e = gather_rows(x.clone(), g.senders().clone())
                * gather_rows(x.clone(), g.receivers().clone());
            l.forward(x, g, e)
        },
        3,
        4,
    );
    conformance(
        "EdgeConv",
        |d| EdgeConvConfig::new(3, 5, 4).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "DynamicEdgeConv(k=3)",
        |d| DynamicEdgeConvConfig::new(3, 5, 4, 3).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
    conformance(
        "GpsConv(GIN local, 2 heads)",
        |d| {
            let gin = GinConvConfig::new(4, 6, 4).init(d);
            let config = GpsConvConfig::new(4).with_heads(2).with_norm(GpsNorm::None);
            config.init::<GinConv>(Some(gin), d)
        },
        |l, x, g| l.forward(x, g, None),
        4,
        4,
    );
    conformance(
        "TransformerConv(2 heads)",
        |d| TransformerConvConfig::new(3, 2).with_heads(2).init(d),
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
}

#[test]
fn thin_models_conform() {
    conformance(
        "GraphGps(2 layers, 2 heads)",
        |d| {
            let config = GraphGpsConfig::new(3, 4, 2)
                .with_num_layers(2)
                .with_heads(2);
            config.with_norm(GpsNorm::None).init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    conformance(
        "Gcn",
        |d| GcnConfig::new(3, 4, 2).with_num_layers(3).init(d),
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    conformance(
        "GraphSage(jk=cat)",
        |d| {
            GraphSageConfig::new(3, 4, 2)
                .with_num_layers(3)
                .with_jk(Some(JumpingKnowledge::Cat))
                .with_activation(Activation::Elu)
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    conformance(
        "Gin(jk=max)",
        |d| {
            GinConfig::new(3, 4, 2)
                .with_num_layers(3)
                .with_jk(Some(JumpingKnowledge::Max))
                .init(d)
        },
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    let gat = GatConfig::new(3, 4, 2).with_num_layers(3).with_heads(2);
    conformance(
        "Gat(2 heads)",
        |d| gat.init(d),
        |l, x, g| l.forward(x, g),
        3,
        2,
    );
    let flex = burn::tensor::Device::flex();
    let bad_gat = gat.clone().with_heads(3);
    assert!(bad_gat.check().is_err(), "3 heads do not divide 4");
    assert!(
        panics(|| bad_gat.init(&flex)),
        "init refuses what check refuses"
    );
    let bad_gcn = GcnConfig::new(3, 4, 2).with_num_layers(0);
    assert!(bad_gcn.check().is_err());
    assert!(panics(|| bad_gcn.init(&flex)));
}

#[test]
fn jraph_zoo_conforms() {
    use burn::nn::LinearConfig;
    let nodes_of = |g: GraphsTuple| g.node_tensor::<2>().unwrap();
    conformance(
        "DeepSets",
        |d| DeepSets::new(ConcatMlpConfig::new(3, 5, 4).init(d), None),
        |l, x, g| nodes_of(l.forward(&g.clone().with_nodes(x).unwrap()).unwrap()),
        3,
        4,
    );
    conformance(
        "InteractionNetwork",
        |d| InteractionNetwork {
            edge_fn: ConcatMlpConfig::new(6, 5, 2).init(d),
            node_fn: ConcatMlpConfig::new(5, 5, 4).init(d),
        },
        |l, x, g| nodes_of(l.forward(&g.clone().with_nodes(x).unwrap()).unwrap()),
        3,
        4,
    );
    conformance(
        "GraphMapFeatures",
        |d| GraphMapFeatures {
            edge_fn: None,
            node_fn: Some(ConcatMlpConfig::new(3, 5, 4).init(d)),
            global_fn: None,
        },
        |l, x, g| nodes_of(l.forward(&g.clone().with_nodes(x).unwrap()).unwrap()),
        3,
        4,
    );
    for (self_edges, symmetric) in [(false, true), (true, true), (true, false)] {
        conformance(
            &format!("GraphConvolution(self_edges={self_edges}, symmetric={symmetric})"),
            |d| GraphConvolution {
                update: LinearConfig::new(3, 4).init(d),
                add_self_edges: self_edges,
                symmetric_normalization: symmetric,
            },
            |l, x, g| l.forward(x, g),
            3,
            4,
        );
    }
    conformance(
        "JraphGat",
        |d| JraphGat {
            query: LinearConfig::new(3, 4).init(d),
            logit: LinearConfig::new(8, 1).init(d),
            negative_slope: 0.2,
        },
        |l, x, g| l.forward(x, g),
        3,
        4,
    );
}

/// A layer written through `MessagePassing`: `x'_i = W [x_i, max_j (x_j − x_i)]`.
#[derive(burn::module::Module, Debug)]
struct MaxDifference {
    lin: burn::nn::Linear,
}

impl burn_gnn_nn::MessagePassing for MaxDifference {
    fn message(&self, edges: &burn_gnn_nn::EdgeInputs) -> Tensor<2> {
        edges.x_j() - edges.x_i()
    }
    fn aggregation(&self) -> burn_gnn_nn::Aggregation {
        burn_gnn_nn::Aggregation::Max
    }
    fn update(&self, aggregated: Tensor<2>, x: Tensor<2>) -> Tensor<2> {
        if x.dims()[0] == 0 {
            return Tensor::zeros([0, self.lin.weight.dims()[1]], &x.device());
        }
        self.lin.forward(Tensor::cat(vec![x, aggregated], 1))
    }
}

#[test]
fn message_passing_layers_conform() {
    use burn_gnn_nn::MessagePassing;
    conformance(
        "MessagePassing(MaxDifference)",
        |d| MaxDifference {
            lin: burn::nn::LinearConfig::new(6, 4).init(d),
        },
        |l, x, g| l.propagate(x, g, None),
        3,
        4,
    );
}

/// The norms: per graph, so a batch is the graphs one by one, and finite on graphs of one node.
#[test]
fn graph_norms_conform() {
    conformance(
        "GraphNorm",
        |d| GraphNormConfig::new(4).init(d),
        |l, x, g| l.forward(x, g),
        4,
        4,
    );
    conformance(
        "GraphLayerNorm",
        |d| GraphLayerNormConfig::new(4).init(d),
        |l, x, g| l.forward(x, g),
        4,
        4,
    );
    for individually in [false, true] {
        conformance(
            &format!("PairNorm(scale_individually = {individually})"),
            |d| {
                PairNormConfig::new()
                    .with_scale(2.0)
                    .with_scale_individually(individually)
                    .init(d)
            },
            |l, x, g| l.forward(x, g),
            3,
            3,
        );
    }
}

#[test]
fn pna_conv_conforms() {
    for towers in [1, 2] {
        conformance(
            &format!("PnaConv(towers = {towers})"),
            |d| {
                PnaConvConfig::new(4, 6, vec![2, 5, 4, 1])
                    .with_towers(towers)
                    .init(d)
            },
            |l, x, g| l.forward(x, g, None),
            4,
            6,
        );
    }
}

/// Whether `f` panics: an infallible `init` refuses a configuration its `check` refuses.
pub fn panics<T>(f: impl FnOnce() -> T) -> bool {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err()
}
