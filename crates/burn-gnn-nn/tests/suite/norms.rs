//! The graph norms against f64 references written from their papers' formulas, with the
//! layers' own (non-trivial) parameters, on a batch of three graphs: 4 nodes, 1 node, 3 nodes.

use burn::module::Param;
use burn::tensor::Tensor;
use burn_gnn_graph::batch;
use burn_gnn_nn::{GraphLayerNormConfig, GraphNormConfig, PairNormConfig};

use crate::common::*;

const D: usize = 3;
const SIZES: [usize; 3] = [4, 1, 3];

/// The nodes of each graph, as row ranges.
fn graphs() -> Vec<std::ops::Range<usize>> {
    let mut start = 0;
    SIZES
        .iter()
        .map(|&n| {
            start += n;
            start - n..start
        })
        .collect()
}

/// `f(rows of one graph) -> its output rows`, over every graph of the batch.
fn per_graph(x: &[f64], f: impl Fn(&[Vec<f64>]) -> Vec<Vec<f64>>) -> Vec<f64> {
    graphs()
        .into_iter()
        .flat_map(|rows| {
            let nodes: Vec<Vec<f64>> = rows.map(|i| x[i * D..(i + 1) * D].to_vec()).collect();
            f(&nodes).concat()
        })
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    v.iter().sum::<f64>() / v.len() as f64
}

fn param(v: &[f64], device: &burn::tensor::Device) -> Param<Tensor<1>> {
    Param::from_tensor(Tensor::from_data(
        burn::tensor::TensorData::new(v.iter().map(|&x| x as f32).collect::<Vec<_>>(), [v.len()]),
        device,
    ))
}

#[test]
fn graph_norms_match_their_formulas() {
    let (gamma, beta, alpha, eps) = ([1.5, -0.5, 2.0], [0.1, 0.2, -0.3], [0.5, 1.0, 0.25], 1e-5);
    for (name, device) in forward_devices() {
        let mut rng = Rng(5);
        let n: usize = SIZES.iter().sum();
        let (xv, x) = random_x(&mut rng, n, D, &device);
        let parts: Vec<_> = SIZES.iter().map(|&k| graph(&[], &[], k, &device)).collect();
        let g = batch(&parts).unwrap();

        let mut norm = GraphNormConfig::new(D).init(&device);
        (norm.weight, norm.bias, norm.mean_scale) = (
            param(&gamma, &device),
            param(&beta, &device),
            param(&alpha, &device),
        );
        let want = per_graph(&xv, |nodes| {
            let mu: Vec<f64> = (0..D).map(|c| mean(nodes.iter().map(|x| x[c]))).collect();
            let shifted: Vec<Vec<f64>> = nodes
                .iter()
                .map(|x| (0..D).map(|c| x[c] - alpha[c] * mu[c]).collect())
                .collect();
            let var: Vec<f64> = (0..D)
                .map(|c| mean(shifted.iter().map(|x| x[c] * x[c])))
                .collect();
            shifted
                .iter()
                .map(|x| {
                    (0..D)
                        .map(|c| gamma[c] * x[c] / (var[c] + eps).sqrt() + beta[c])
                        .collect()
                })
                .collect()
        });
        let got = host(norm.forward(x.clone(), &g));
        assert_close(&got, &want, 1e-4, &format!("GraphNorm on {name}"));

        let mut layer = GraphLayerNormConfig::new(D).init(&device);
        (layer.weight, layer.bias) = (Some(param(&gamma, &device)), Some(param(&beta, &device)));
        let want = per_graph(&xv, |nodes| {
            let mu = mean(nodes.iter().flatten().copied());
            let var = mean(nodes.iter().flatten().map(|v| (v - mu).powi(2)));
            nodes
                .iter()
                .map(|x| {
                    (0..D)
                        .map(|c| gamma[c] * (x[c] - mu) / (var + eps).sqrt() + beta[c])
                        .collect()
                })
                .collect()
        });
        let got = host(layer.forward(x.clone(), &g));
        assert_close(&got, &want, 1e-4, &format!("GraphLayerNorm on {name}"));

        for individually in [false, true] {
            let pair = PairNormConfig::new()
                .with_scale(2.0)
                .with_scale_individually(individually)
                .init(&device);
            let want = per_graph(&xv, |nodes| {
                let mu: Vec<f64> = (0..D).map(|c| mean(nodes.iter().map(|x| x[c]))).collect();
                let centred: Vec<Vec<f64>> = nodes
                    .iter()
                    .map(|x| (0..D).map(|c| x[c] - mu[c]).collect())
                    .collect();
                let sq = |x: &Vec<f64>| x.iter().map(|v| v * v).sum::<f64>();
                let graph_scale = (eps + mean(centred.iter().map(sq))).sqrt();
                centred
                    .iter()
                    .map(|x| {
                        let divisor = if individually {
                            sq(x).sqrt() + eps
                        } else {
                            graph_scale
                        };
                        x.iter().map(|v| 2.0 * v / divisor).collect()
                    })
                    .collect()
            });
            let got = host(pair.forward(x.clone(), &g));
            let what = format!("PairNorm(individually = {individually}) on {name}");
            assert_close(&got, &want, 1e-4, &what);
        }
    }
}

/// A batch with a one-node graph (variance 0, centred row 0): every norm's input gradient is
/// finite.
#[test]
fn graph_norms_have_finite_gradients_on_one_node_graphs() {
    type Norm = Box<dyn Fn(Tensor<2>, &burn_gnn_graph::GraphsTuple) -> Tensor<2>>;
    for (name, device) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let mut rng = Rng(9);
        let n: usize = SIZES.iter().sum();
        let (_, x) = random_x(&mut rng, n, D, &device);
        let parts: Vec<_> = SIZES.iter().map(|&k| graph(&[], &[], k, &device)).collect();
        let g = batch(&parts).unwrap();
        let (graph_norm, layer_norm) = (
            GraphNormConfig::new(D).init(&device),
            GraphLayerNormConfig::new(D).init(&device),
        );
        let pair = |individually| {
            PairNormConfig::new()
                .with_scale_individually(individually)
                .init(&device)
        };
        let (pair_norm, pair_si) = (pair(false), pair(true));
        let norms: [(&str, Norm); 4] = [
            ("GraphNorm", Box::new(move |x, g| graph_norm.forward(x, g))),
            (
                "GraphLayerNorm",
                Box::new(move |x, g| layer_norm.forward(x, g)),
            ),
            ("PairNorm", Box::new(move |x, g| pair_norm.forward(x, g))),
            ("PairNorm-SI", Box::new(move |x, g| pair_si.forward(x, g))),
        ];
        for (what, norm) in norms {
            let x = x.clone().require_grad();
            let out = norm(x.clone(), &g);
            let grad = host(
                x.grad(&(out.clone() * out).sum().backward())
                    .expect("a gradient"),
            );
            assert!(
                grad.iter().all(|v| v.is_finite()),
                "{what} on {name}: {grad:?}"
            );
        }
    }
}
