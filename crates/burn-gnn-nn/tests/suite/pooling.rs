//! `global_sort_pool` against a reference: a stable sort of each graph's nodes by their last
//! feature, descending, the first `k` rows concatenated and zero-padded.

use burn_gnn_graph::batch;
use burn_gnn_nn::global_sort_pool;

use crate::common::*;

#[test]
fn sort_pool_takes_each_graphs_top_nodes_by_the_last_feature() {
    const C: usize = 2;
    let sizes = [4usize, 1, 3];
    // Graph 0 ties on its last feature (rows 1 and 3); graph 2's last feature has a -inf.
    let x: Vec<f64> = vec![
        0.5,
        1.0,
        /**/ 2.0,
        3.0,
        /**/ -1.0,
        -2.0,
        /**/ 4.0,
        3.0, // graph 0
        7.0,
        0.25, // graph 1
        1.5,
        f64::NEG_INFINITY,
        /**/ 2.5,
        0.0,
        /**/ 3.5,
        -0.5, // graph 2
    ];
    for k in [1, 3, 5] {
        let mut want = Vec::new();
        let mut start = 0;
        for &size in &sizes {
            let mut nodes: Vec<usize> = (start..start + size).collect();
            nodes.sort_by(|&a, &b| x[b * C + 1].partial_cmp(&x[a * C + 1]).unwrap());
            for rank in 0..k {
                match nodes.get(rank) {
                    Some(&i) => want.extend_from_slice(&x[i * C..(i + 1) * C]),
                    None => want.extend_from_slice(&[0.0; C]),
                }
            }
            start += size;
        }
        for (name, device) in forward_devices() {
            let parts: Vec<_> = sizes.iter().map(|&n| graph(&[], &[], n, &device)).collect();
            let g = batch(&parts).unwrap();
            let out = global_sort_pool(floats(&x, [8, C], &device), &g, k);
            assert_eq!(out.dims(), [3, k * C], "{name}");
            let got = host(out);
            let same = got
                .iter()
                .zip(&want)
                .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
            assert!(same, "k = {k} on {name}:\n got  {got:?}\n want {want:?}");
        }
    }
}

#[test]
fn sort_pool_gradients_reach_the_selected_rows() {
    for (name, device) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let g = batch(&[graph(&[], &[], 3, &device), graph(&[], &[], 2, &device)]).unwrap();
        let x = floats(&[1.0, 3.0, 2.0, 5.0, 4.0], [5, 1], &device).require_grad();
        let out = global_sort_pool(x.clone(), &g, 2); // [[3, 2], [5, 4]]
        let w = floats(&[1.0, 10.0, 100.0, 1000.0], [2, 2], &device);
        let grad = host(x.grad(&(out * w).sum().backward()).expect("a gradient"));
        assert_eq!(grad, [0.0, 1.0, 10.0, 100.0, 1000.0], "{name}");
    }
}

/// The nodes each graph keeps, in their original order: its `k` best by `scores` (ties to the
/// smaller index), or with `min_score`, those above `min(min_score, best − 1e-7)`.
fn kept(
    scores: &[f64],
    graphs: &[std::ops::Range<usize>],
    k: &[usize],
    min: Option<f64>,
) -> Vec<usize> {
    let mut kept = Vec::new();
    for (nodes, &k) in graphs.iter().zip(k) {
        let mut best: Vec<usize> = match min {
            Some(min) => {
                let top = nodes
                    .clone()
                    .map(|i| scores[i])
                    .fold(f64::NEG_INFINITY, f64::max);
                nodes
                    .clone()
                    .filter(|&i| scores[i] > min.min(top - 1e-7))
                    .collect()
            }
            None => {
                let mut order: Vec<usize> = nodes.clone().collect();
                order.sort_by(|&a, &b| scores[b].partial_cmp(&scores[a]).unwrap());
                order.into_iter().take(k).collect()
            }
        };
        best.sort();
        kept.extend(best);
    }
    kept
}

/// The softmax of `raw` over each graph's nodes.
fn graph_softmax(raw: &[f64], graphs: &[std::ops::Range<usize>]) -> Vec<f64> {
    let mut out = vec![0.0; raw.len()];
    for nodes in graphs {
        let m = nodes
            .clone()
            .map(|i| raw[i])
            .fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = nodes.clone().map(|i| (raw[i] - m).exp()).sum();
        nodes.clone().for_each(|i| out[i] = (raw[i] - m).exp() / z);
    }
    out
}

/// TopKPooling and SAGPooling against references with the layers' own weights: two graphs
/// (5 nodes on a ring with a chord, 3 on a path), a ratio, a count and `min_score`; the kept
/// nodes, their gated features, the induced edges and the nodes per graph.
#[test]
fn topk_and_sag_pooling_keep_each_graphs_best_nodes() {
    use burn_gnn_nn::{PoolSize, Pooled, SagPoolingConfig, TopKPoolingConfig};
    const D: usize = 3;
    let (s, r) = ([0i64, 1, 2, 3, 4, 0, 5, 6], [1i64, 2, 3, 4, 0, 2, 6, 7]);
    let graphs = [0..5usize, 5..8];
    for (name, device) in forward_devices() {
        let mut rng = Rng(21);
        let (xv, x) = random_x(&mut rng, 8, D, &device);
        let g = batch(&[
            graph(&s[..6], &r[..6], 5, &device),
            graph(&[0, 1], &[1, 2], 3, &device),
        ])
        .unwrap();
        let mut topk = TopKPoolingConfig::new(D).init(&device);
        let p = host(topk.weight.val());
        let norm = p.iter().map(|v| v * v).sum::<f64>().sqrt();
        let raw: Vec<f64> = (0..8)
            .map(|i| (0..D).map(|c| xv[i * D + c] * p[c]).sum::<f64>())
            .collect();
        let mut sag = SagPoolingConfig::new(D).init(&device);
        let sag_raw = host(sag.gnn.forward(x.clone(), &g));
        let cases = [
            (PoolSize::Ratio(0.5), [3, 2], None),
            (PoolSize::Count(4), [4, 3], None),
            (PoolSize::Ratio(0.5), [0, 0], Some(0.3)),
        ];
        for (size, k, min_score) in cases {
            let gated = |raw: &[f64], scale: f64| match min_score {
                None => raw.iter().map(|v| (v / scale).tanh()).collect::<Vec<_>>(),
                Some(_) => graph_softmax(raw, &graphs),
            };
            (topk.selection.size, topk.selection.min_score) = (size.clone(), min_score);
            (sag.selection.size, sag.selection.min_score) = (size.clone(), min_score);
            let runs: [(&str, Pooled, Vec<f64>); 2] = [
                (
                    "TopK",
                    topk.forward(x.clone(), &g).unwrap(),
                    gated(&raw, norm),
                ),
                (
                    "SAG",
                    sag.forward(x.clone(), &g).unwrap(),
                    gated(&sag_raw, 1.0),
                ),
            ];
            for (what, pooled, scores) in runs {
                let what = format!("{what} {size:?} {min_score:?} on {name}");
                let keep = kept(&scores, &graphs, &k, min_score);
                let ids: Vec<i64> = pooled.node_ids.clone().into_data().iter::<i64>().collect();
                assert_eq!(
                    ids,
                    keep.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                    "{what}"
                );
                let want_x: Vec<f64> = keep
                    .iter()
                    .flat_map(|&i| (0..D).map(move |c| (i, c)))
                    .map(|(i, c)| xv[i * D + c] * scores[i])
                    .collect();
                assert_close(&host(pooled.x), &want_x, 1e-4, &what);
                let position = |v: i64| keep.iter().position(|&i| i as i64 == v);
                let want_edges: Vec<(i64, i64)> = s
                    .iter()
                    .zip(&r)
                    .filter_map(|(&a, &b)| Some((position(a)? as i64, position(b)? as i64)))
                    .collect();
                let ints = |t: &burn::tensor::Tensor<1, burn::tensor::Int>| -> Vec<i64> {
                    t.clone().into_data().iter::<i64>().collect()
                };
                let got_edges: Vec<(i64, i64)> = ints(pooled.graph.senders())
                    .into_iter()
                    .zip(ints(pooled.graph.receivers()))
                    .collect();
                assert_eq!(got_edges, want_edges, "{what}: edges");
                let per_graph: Vec<i64> = graphs
                    .iter()
                    .map(|nodes| keep.iter().filter(|i| nodes.contains(i)).count() as i64)
                    .collect();
                assert_eq!(ints(pooled.graph.n_node()), per_graph, "{what}: n_node");
            }
        }
    }
}

#[test]
fn pooling_scores_get_gradients_and_bad_sizes_are_errors() {
    use burn::module::Module;
    use burn_gnn_nn::{NnError, PoolSelection, PoolSize, SagPoolingConfig, TopKPoolingConfig};
    for (name, device) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let mut rng = Rng(3);
        let (_, x) = random_x(&mut rng, 6, 2, &device);
        let g = batch(&[
            graph(&[0, 1, 2], &[1, 2, 0], 4, &device),
            graph(&[0], &[1], 2, &device),
        ])
        .unwrap();
        let topk = TopKPoolingConfig::new(2).init(&device);
        let pooled = topk.forward(x.clone(), &g).unwrap();
        let grads = pooled.x.sum().backward();
        let gw = host(topk.weight.val().grad(&grads).expect("a gradient"));
        assert!(
            gw.iter().all(|v| v.is_finite()) && gw.iter().any(|&v| v != 0.0),
            "{name}"
        );
        let sag = SagPoolingConfig::new(2).init(&device);
        let grads = sag.forward(x.clone(), &g).unwrap().x.sum().backward();
        let mut check = crate::harness::FiniteGrads {
            grads: &grads,
            seen: 0,
            what: format!("SAGPooling on {name}"),
            require_all: true,
        };
        sag.visit(&mut check);
        assert!(check.seen > 0, "SAGPooling on {name}: no parameters");
        for bad in [
            PoolSize::Ratio(0.0),
            PoolSize::Ratio(1.5),
            PoolSize::Count(0),
        ] {
            let selection = PoolSelection::new().with_size(bad.clone());
            let layer = TopKPoolingConfig::new(2)
                .with_selection(selection)
                .init(&device);
            let err = layer.forward(x.clone(), &g).unwrap_err();
            assert!(matches!(err, NnError::InvalidConfig(_)), "{bad:?}: {err}");
        }
    }
}
