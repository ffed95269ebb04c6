//! GraphNetwork and the readouts against plain-Rust references, and GraphNetwork through the
//! conformance harness.

use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};
use burn_gnn_graph::{GraphsTuple, batch};
use burn_gnn_nn::{
    ConcatMlp, ConcatMlpConfig, DeepSets, GraphConvolution, GraphNetwork, RelationNetwork,
    global_add_pool, global_max_pool, global_mean_pool,
};

use crate::common::*;

fn linear(l: &Linear, x: &[f64], rows: usize) -> Vec<f64> {
    let w = host(l.weight.val());
    let b = host(l.bias.as_ref().unwrap().val());
    let [d_in, d_out] = l.weight.dims();
    let mut out = vec![0.0; rows * d_out];
    for i in 0..rows {
        for j in 0..d_out {
            out[i * d_out + j] = b[j]
                + (0..d_in)
                    .map(|k| x[i * d_in + k] * w[k * d_out + j])
                    .sum::<f64>();
        }
    }
    out
}

fn mlp(m: &ConcatMlp, rows: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let flat: Vec<f64> = rows.concat();
    let hidden: Vec<f64> = linear(&m.hidden, &flat, rows.len())
        .into_iter()
        .map(|v| v.max(0.0))
        .collect();
    let out = linear(&m.output, &hidden, rows.len());
    let d = m.output.weight.dims()[1];
    out.chunks(d).map(<[f64]>::to_vec).collect()
}

fn tensor(rows: &[Vec<f64>], width: usize, device: &Device) -> Tensor<2> {
    let flat: Vec<f32> = rows.concat().iter().map(|&v| v as f32).collect();
    Tensor::from_data(TensorData::new(flat, [rows.len(), width]), device)
}

fn rows(t: Tensor<2>) -> Vec<Vec<f64>> {
    let d = t.dims()[1];
    host(t).chunks(d).map(<[f64]>::to_vec).collect()
}

fn sum_rows(rows: impl Iterator<Item = Vec<f64>>, width: usize) -> Vec<f64> {
    rows.fold(vec![0.0; width], |acc, r| {
        acc.iter().zip(r).map(|(a, b)| a + b).collect()
    })
}

#[test]
fn graph_network_matches_the_block_equations() {
    for (name, d) in forward_devices() {
        let mut rng = Rng(11);
        let gn = GraphNetwork::new(
            Some(ConcatMlpConfig::new(2 + 3 + 3 + 1, 4, 2).init(&d)),
            Some(ConcatMlpConfig::new(3 + 2 + 2 + 1, 4, 3).init(&d)),
            Some(ConcatMlpConfig::new(3 + 2 + 1, 4, 2).init(&d)),
        );
        // Two graphs (5 + 3 nodes, one isolated node each) and an empty one, batched.
        let parts: Vec<(usize, Vec<i64>, Vec<i64>)> = vec![
            (5, vec![0, 1, 2, 3, 1], vec![1, 2, 0, 3, 2]),
            (3, vec![0, 1], vec![1, 0]),
            (0, vec![], vec![]),
        ];
        let mut graphs = Vec::new();
        for (n, s, r) in &parts {
            let x: Vec<Vec<f64>> = (0..*n)
                .map(|_| (0..3).map(|_| rng.float()).collect())
                .collect();
            let e: Vec<Vec<f64>> = (0..s.len())
                .map(|_| (0..2).map(|_| rng.float()).collect())
                .collect();
            let u = vec![vec![rng.float()]];
            let g = graph(s, r, *n, &d).with_nodes(tensor(&x, 3, &d)).unwrap();
            let g = g
                .with_edges(tensor(&e, 2, &d))
                .unwrap()
                .with_globals(tensor(&u, 1, &d))
                .unwrap();
            graphs.push(g);
        }
        let b = batch(&graphs).unwrap();
        let out = gn.forward(&b).unwrap();
        // Reference, graph by graph, from the block equations.
        let (mut want_v, mut want_e, mut want_u) = (vec![], vec![], vec![]);
        for g in &graphs {
            let (v, e, u) = (
                rows(g.node_tensor::<2>().unwrap()),
                rows(g.edge_tensor::<2>().unwrap()),
                rows(g.global_tensor::<2>().unwrap()),
            );
            let (s, r) = g.to_coo();
            let e_in: Vec<Vec<f64>> = (0..s.len())
                .map(|k| {
                    [
                        e[k].clone(),
                        v[s[k] as usize].clone(),
                        v[r[k] as usize].clone(),
                        u[0].clone(),
                    ]
                    .concat()
                })
                .collect();
            let e2 = if e_in.is_empty() {
                vec![]
            } else {
                mlp(gn.edge_fn.as_ref().unwrap(), &e_in)
            };
            let agg = |i: usize, ends: &[i64]| {
                sum_rows(
                    (0..s.len())
                        .filter(|&k| ends[k] as usize == i)
                        .map(|k| e2[k].clone()),
                    2,
                )
            };
            let v_in: Vec<Vec<f64>> = (0..v.len())
                .map(|i| [v[i].clone(), agg(i, &s), agg(i, &r), u[0].clone()].concat())
                .collect();
            let v2 = if v_in.is_empty() {
                vec![]
            } else {
                mlp(gn.node_fn.as_ref().unwrap(), &v_in)
            };
            let u_in = [
                sum_rows(v2.iter().cloned(), 3),
                sum_rows(e2.iter().cloned(), 2),
                u[0].clone(),
            ]
            .concat();
            want_u.extend(mlp(gn.global_fn.as_ref().unwrap(), &[u_in]));
            want_v.extend(v2);
            want_e.extend(e2);
        }
        let what = format!("GraphNetwork on {name}");
        assert_close(
            &host(out.node_tensor::<2>().unwrap()),
            &want_v.concat(),
            1e-4,
            &format!("{what}: nodes"),
        );
        assert_close(
            &host(out.edge_tensor::<2>().unwrap()),
            &want_e.concat(),
            1e-4,
            &format!("{what}: edges"),
        );
        assert_close(
            &host(out.global_tensor::<2>().unwrap()),
            &want_u.concat(),
            1e-4,
            &format!("{what}: globals"),
        );
        // Missing node features are an error, not a panic.
        let bare = graph(&[0], &[1], 2, &d);
        assert!(gn.forward(&bare).is_err());
    }
}

#[test]
fn readouts_match_host_reductions() {
    for (name, d) in forward_devices() {
        let mut rng = Rng(12);
        let sizes = [3usize, 0, 2];
        let x: Vec<Vec<f64>> = (0..5)
            .map(|_| (0..2).map(|_| rng.float()).collect())
            .collect();
        let graphs: Vec<GraphsTuple> = sizes.iter().map(|&n| graph(&[], &[], n, &d)).collect();
        let b = batch(&graphs).unwrap();
        let xt = tensor(&x, 2, &d);
        let mut first = 0;
        let (mut add, mut mean, mut max) = (vec![], vec![], vec![]);
        for &n in &sizes {
            let part = &x[first..first + n];
            for c in 0..2 {
                let col: Vec<f64> = part.iter().map(|r| r[c]).collect();
                add.push(col.iter().sum::<f64>());
                mean.push(if n == 0 {
                    0.0
                } else {
                    col.iter().sum::<f64>() / n as f64
                });
                max.push(if n == 0 {
                    0.0
                } else {
                    col.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
                });
            }
            first += n;
        }
        assert_close(
            &host(global_add_pool(xt.clone(), &b)),
            &add,
            1e-5,
            &format!("add pool on {name}"),
        );
        assert_close(
            &host(global_mean_pool(xt.clone(), &b)),
            &mean,
            1e-5,
            &format!("mean pool on {name}"),
        );
        assert_close(
            &host(global_max_pool(xt, &b)),
            &max,
            1e-5,
            &format!("max pool on {name}"),
        );
    }
}

#[test]
fn jraph_blocks_match_references() {
    use burn::nn::LinearConfig;
    for (name, d) in forward_devices() {
        let mut rng = Rng(13);
        let (s, r, n) = (vec![0i64, 1, 2, 0, 3, 3], vec![1i64, 2, 0, 2, 3, 1], 5);
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..3).map(|_| rng.float()).collect())
            .collect();
        let u = vec![vec![rng.float(), rng.float()]];
        let g = graph(&s, &r, n, &d)
            .with_nodes(tensor(&x, 3, &d))
            .unwrap()
            .with_globals(tensor(&u, 2, &d))
            .unwrap();
        // jraph GraphConvolution with self edges: degrees over the edges incl. the loops.
        let gc = GraphConvolution {
            update: LinearConfig::new(3, 2).init(&d),
            add_self_edges: true,
            symmetric_normalization: true,
        };
        let h = rows(gc.update.forward(tensor(&x, 3, &d)));
        let mut es: Vec<(usize, usize)> = s
            .iter()
            .zip(&r)
            .map(|(&a, &b)| (a as usize, b as usize))
            .collect();
        es.extend((0..n).map(|i| (i, i)));
        let deg = |f: &dyn Fn(&(usize, usize)) -> usize, i: usize| {
            es.iter().filter(|e| f(e) == i).count().max(1) as f64
        };
        let mut want = vec![vec![0.0; 2]; n];
        for &(a, b) in &es {
            let c = 1.0 / (deg(&|e| e.0, a) * deg(&|e| e.1, b)).sqrt();
            (0..2).for_each(|k| want[b][k] += c * h[a][k]);
        }
        assert_close(
            &host(gc.forward(tensor(&x, 3, &d), &g)),
            &want.concat(),
            1e-4,
            &format!("GraphConvolution on {name}"),
        );
        // DeepSets: φ([v, u]), ρ([Σ v', u]).
        let ds = DeepSets::new(
            ConcatMlpConfig::new(5, 4, 3).init(&d),
            Some(ConcatMlpConfig::new(5, 4, 2).init(&d)),
        );
        let out = ds.forward(&g).unwrap();
        let v2 = mlp(
            &ds.phi,
            &x.iter()
                .map(|v| [v.clone(), u[0].clone()].concat())
                .collect::<Vec<_>>(),
        );
        let u2 = mlp(
            ds.rho.as_ref().unwrap(),
            &[[sum_rows(v2.iter().cloned(), 3), u[0].clone()].concat()],
        );
        assert_close(
            &host(out.node_tensor::<2>().unwrap()),
            &v2.concat(),
            1e-4,
            &format!("DeepSets nodes on {name}"),
        );
        assert_close(
            &host(out.global_tensor::<2>().unwrap()),
            &u2.concat(),
            1e-4,
            &format!("DeepSets globals on {name}"),
        );
        // RelationNetwork: φ_u(Σ φ_e([v_s, v_r])).
        let rn = RelationNetwork {
            edge_fn: ConcatMlpConfig::new(6, 4, 2).init(&d),
            global_fn: ConcatMlpConfig::new(2, 4, 2).init(&d),
        };
        let e2 = mlp(
            &rn.edge_fn,
            &(0..s.len())
                .map(|k| [x[s[k] as usize].clone(), x[r[k] as usize].clone()].concat())
                .collect::<Vec<_>>(),
        );
        let u2 = mlp(&rn.global_fn, &[sum_rows(e2.iter().cloned(), 2)]);
        let out = rn.forward(&g).unwrap();
        assert_close(
            &host(out.global_tensor::<2>().unwrap()),
            &u2.concat(),
            1e-4,
            &format!("RelationNetwork on {name}"),
        );
    }
}

/// Graph-level readouts: a reference on a batch with an empty graph, invariance to the order of
/// nodes inside a graph, finite gradients.
#[test]
fn learned_readouts_match_references() {
    use burn_gnn_nn::{AttentionPoolConfig, Set2SetConfig, SoftmaxAggregation};
    for (name, d) in devices() {
        let mut rng = Rng(14);
        let sizes = [3usize, 0, 4];
        let x: Vec<Vec<f64>> = (0..7)
            .map(|_| (0..2).map(|_| rng.float()).collect())
            .collect();
        let b = batch(
            &sizes
                .iter()
                .map(|&n| graph(&[], &[], n, &d))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        let groups: Vec<Vec<usize>> = {
            let mut first = 0;
            sizes
                .iter()
                .map(|&n| {
                    let g = (first..first + n).collect();
                    first += n;
                    g
                })
                .collect()
        };
        let softmax_pool = |scores: &[f64], feats: &[Vec<f64>], width: usize| -> Vec<f64> {
            groups
                .iter()
                .flat_map(|g| {
                    let m = g
                        .iter()
                        .map(|&i| scores[i])
                        .fold(f64::NEG_INFINITY, f64::max);
                    let z: f64 = g.iter().map(|&i| (scores[i] - m).exp()).sum();
                    (0..width)
                        .map(|c| {
                            g.iter()
                                .map(|&i| (scores[i] - m).exp() / z * feats[i][c])
                                .sum::<f64>()
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        };
        // Attention pooling with a feature map.
        let pool = AttentionPoolConfig::new(2).with_d_output(Some(3)).init(&d);
        let gate: Vec<f64> = rows(pool.gate.forward(tensor(&x, 2, &d)))
            .iter()
            .map(|r| r[0])
            .collect();
        let feats = rows(pool.feature.as_ref().unwrap().forward(tensor(&x, 2, &d)));
        let got = host(pool.forward(tensor(&x, 2, &d), &b));
        assert_close(
            &got,
            &softmax_pool(&gate, &feats, 3),
            1e-4,
            &format!("AttentionPool on {name}"),
        );
        // Set2Set, 2 steps, with Burn's LSTM giving the queries.
        let s2s = Set2SetConfig::new(2, 2).init(&d);
        let mut q_star = vec![vec![0.0; 4]; 3];
        let mut state = None;
        for _ in 0..2 {
            let (out, next) = s2s
                .lstm
                .forward(tensor(&q_star, 4, &d).unsqueeze_dim(1), state);
            state = Some(next);
            let q = rows(out.reshape([3, 2]));
            let scores: Vec<f64> = (0..7)
                .map(|i| {
                    let g = groups.iter().position(|gr| gr.contains(&i)).unwrap();
                    x[i][0] * q[g][0] + x[i][1] * q[g][1]
                })
                .collect();
            let r = softmax_pool(&scores, &x, 2);
            q_star = (0..3)
                .map(|g| [q[g].clone(), r[g * 2..g * 2 + 2].to_vec()].concat())
                .collect();
        }
        assert_close(
            &host(s2s.forward(tensor(&x, 2, &d), &b)),
            &q_star.concat(),
            1e-4,
            &format!("Set2Set on {name}"),
        );
        // Softmax aggregation, t = 2, over the graphs as segments.
        let sm = SoftmaxAggregation::new(2.0, true, &d);
        let per_column: Vec<Vec<f64>> = (0..2)
            .map(|c| {
                let scores: Vec<f64> = x.iter().map(|r| 2.0 * r[c]).collect();
                let col: Vec<Vec<f64>> = x.iter().map(|r| vec![r[c]]).collect();
                softmax_pool(&scores, &col, 1)
            })
            .collect::<Vec<_>>();
        let want: Vec<f64> = (0..3)
            .flat_map(|g| [per_column[0][g], per_column[1][g]])
            .collect();
        let got = host(sm.aggregate(tensor(&x, 2, &d), b.node_graph_ids(), 3));
        assert_close(&got, &want, 1e-4, &format!("SoftmaxAggregation on {name}"));
        // Order of nodes inside a graph does not matter; gradients are finite.
        let perm = [2usize, 0, 1, 6, 3, 5, 4];
        let xp: Vec<Vec<f64>> = perm.iter().map(|&i| x[i].clone()).collect();
        assert_close(
            &host(pool.forward(tensor(&xp, 2, &d), &b)),
            &got_pool(&pool, &x, &b, &d),
            1e-4,
            &format!("AttentionPool order on {name}"),
        );
        if d.is_autodiff() {
            let xt = tensor(&x, 2, &d).require_grad();
            let loss = s2s.forward(xt.clone(), &b).sum()
                + pool.forward(xt.clone(), &b).sum()
                + sm.aggregate(xt.clone(), b.node_graph_ids(), 3).sum();
            let grads = loss.backward();
            assert!(
                host(xt.grad(&grads).unwrap()).iter().all(|v| v.is_finite()),
                "readout gradients on {name}"
            );
            assert!(
                host(sm.t.val().grad(&grads).unwrap())
                    .iter()
                    .all(|v| v.is_finite())
            );
        }
    }
}

fn got_pool(
    pool: &burn_gnn_nn::AttentionPool,
    x: &[Vec<f64>],
    b: &GraphsTuple,
    d: &Device,
) -> Vec<f64> {
    host(pool.forward(tensor(x, 2, d), b))
}

#[test]
fn graph_net_gat_attends_over_incoming_edges() {
    use burn_gnn_nn::GraphNetGat;
    for (name, d) in forward_devices() {
        let mut rng = Rng(15);
        let gat = GraphNetGat {
            network: GraphNetwork::new(
                Some(ConcatMlpConfig::new(2 + 3 + 3, 4, 2).init(&d)),
                Some(ConcatMlpConfig::new(3 + 2 + 2, 4, 3).init(&d)),
                None::<ConcatMlp>,
            ),
            logit_fn: ConcatMlpConfig::new(2 + 3 + 3, 4, 1).init(&d),
        };
        let (s, r, n) = (vec![0i64, 1, 2, 0, 3, 3], vec![1i64, 2, 1, 2, 3, 1], 5);
        let x: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..3).map(|_| rng.float()).collect())
            .collect();
        let e: Vec<Vec<f64>> = (0..s.len())
            .map(|_| (0..2).map(|_| rng.float()).collect())
            .collect();
        let g = graph(&s, &r, n, &d)
            .with_nodes(tensor(&x, 3, &d))
            .unwrap()
            .with_edges(tensor(&e, 2, &d))
            .unwrap();
        let out = gat.forward(&g).unwrap();
        let cat = |k: usize, e2: &[Vec<f64>]| {
            [
                e2[k].clone(),
                x[s[k] as usize].clone(),
                x[r[k] as usize].clone(),
            ]
            .concat()
        };
        let e2 = mlp(
            gat.network.edge_fn.as_ref().unwrap(),
            &(0..s.len()).map(|k| cat(k, &e)).collect::<Vec<_>>(),
        );
        let logits: Vec<f64> = mlp(
            &gat.logit_fn,
            &(0..s.len()).map(|k| cat(k, &e2)).collect::<Vec<_>>(),
        )
        .iter()
        .map(|v| v[0])
        .collect();
        let mut e3 = e2.clone();
        for i in 0..n {
            let inc: Vec<usize> = (0..s.len()).filter(|&k| r[k] as usize == i).collect();
            let m = inc
                .iter()
                .map(|&k| logits[k])
                .fold(f64::NEG_INFINITY, f64::max);
            let z: f64 = inc.iter().map(|&k| (logits[k] - m).exp()).sum();
            inc.iter().for_each(|&k| {
                e3[k] = e2[k]
                    .iter()
                    .map(|v| v * (logits[k] - m).exp() / z)
                    .collect()
            });
        }
        let agg = |i: usize, ends: &[i64]| {
            sum_rows(
                (0..s.len())
                    .filter(|&k| ends[k] as usize == i)
                    .map(|k| e3[k].clone()),
                2,
            )
        };
        let v2 = mlp(
            gat.network.node_fn.as_ref().unwrap(),
            &(0..n)
                .map(|i| [x[i].clone(), agg(i, &s), agg(i, &r)].concat())
                .collect::<Vec<_>>(),
        );
        assert_close(
            &host(out.edge_tensor::<2>().unwrap()),
            &e3.concat(),
            1e-4,
            &format!("GraphNetGat edges on {name}"),
        );
        assert_close(
            &host(out.node_tensor::<2>().unwrap()),
            &v2.concat(),
            1e-4,
            &format!("GraphNetGat nodes on {name}"),
        );
    }
}

#[test]
fn fixed_softmax_aggregation_equals_the_module_and_parses() {
    use burn_gnn_nn::{Aggregation, SoftmaxAggregation};
    for (name, d) in forward_devices() {
        let mut rng = Rng(16);
        let x: Vec<Vec<f64>> = (0..6)
            .map(|_| (0..2).map(|_| rng.float()).collect())
            .collect();
        let ids = ints(&[0, 2, 0, 2, 2, 0], &d);
        let fixed = Aggregation::Softmax(2.0).aggregate(tensor(&x, 2, &d), ids.clone(), 4);
        let module = SoftmaxAggregation::new(2.0, false, &d).aggregate(tensor(&x, 2, &d), ids, 4);
        assert_close(
            &host(fixed),
            &host(module),
            1e-6,
            &format!("softmax aggregation on {name}"),
        );
    }
    assert_eq!(
        "softmax:0.5".parse::<Aggregation>().unwrap(),
        Aggregation::Softmax(0.5)
    );
    assert!("softmax:x".parse::<Aggregation>().is_err());
    assert!("powermean:-1".parse::<Aggregation>().is_err());
    assert!(
        "mode"
            .parse::<Aggregation>()
            .unwrap_err()
            .to_string()
            .contains("unknown aggregation `mode`")
    );
}
