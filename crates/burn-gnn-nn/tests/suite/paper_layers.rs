//! The layers of the papers the zoo starts from (GCN, GraphSAGE, GIN, GAT) against plain-Rust
//! f64 references on small graphs, with the layer's own (randomly initialised) parameters read
//! back.

use burn::module::Param;
use burn::tensor::Tensor;
use burn_gnn_nn::{
    GatConvConfig, GatInput, GcnConvConfig, GcnInput, GinConvConfig, SageConvConfig,
};

use crate::common::*;

/// `[rows, cols]` row-major matrix product `a · b`.
pub fn matmul(a: &[f64], b: &[f64], rows: usize, inner: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; rows * cols];
    for i in 0..rows {
        for k in 0..inner {
            for j in 0..cols {
                out[i * cols + j] += a[i * inner + k] * b[k * cols + j];
            }
        }
    }
    out
}

pub fn add_bias(out: &mut [f64], bias: &[f64]) {
    let c = bias.len();
    out.iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v += bias[i % c]);
}

/// A graph with a duplicate edge, an existing self loop (node 1) and an isolated node (4).
pub fn test_graph() -> (Vec<i64>, Vec<i64>, usize) {
    (
        vec![0, 1, 2, 0, 3, 1, 2, 2],
        vec![1, 1, 1, 2, 2, 0, 3, 3],
        5,
    )
}

/// The edges `(sender, receiver)` with every self loop removed and one added per node, as
/// PyG's attention layers see a graph.
pub fn relooped(s: &[i64], r: &[i64], n: usize) -> Vec<(usize, usize)> {
    let mut edges: Vec<(usize, usize)> = s
        .iter()
        .zip(r)
        .filter(|(a, b)| a != b)
        .map(|(&a, &b)| (a as usize, b as usize))
        .collect();
    edges.extend((0..n).map(|i| (i, i)));
    edges
}

/// The test graph with node 1's self loop duplicated and two loops on node 3.
pub fn looped_graph() -> (Vec<i64>, Vec<i64>, usize) {
    (
        vec![0, 1, 2, 0, 3, 1, 2, 2, 3, 1, 3],
        vec![1, 1, 1, 2, 2, 0, 3, 3, 3, 1, 3],
        5,
    )
}

/// Dense `D^-1/2 Â D^-1/2` in f64, `Â[i][j]` the summed weights of edges `j -> i` after PyG's
/// `add_remaining_self_loops`: every loop dropped, then one per node weighted as the node's
/// last loop in edge order, else `fill`.
pub fn gcn_dense(s: &[i64], r: &[i64], w: &[f64], n: usize, fill: f64) -> Vec<f64> {
    let mut a = vec![0.0; n * n];
    let mut own = vec![fill; n];
    for e in 0..s.len() {
        let (j, i) = (s[e] as usize, r[e] as usize);
        if i == j {
            own[i] = w[e];
        } else {
            a[i * n + j] += w[e];
        }
    }
    (0..n).for_each(|i| a[i * n + i] = own[i]);
    let deg: Vec<f64> = (0..n).map(|i| a[i * n..(i + 1) * n].iter().sum()).collect();
    let dinv: Vec<f64> = deg
        .iter()
        .map(|&x| if x > 0.0 { x.powf(-0.5) } else { 0.0 })
        .collect();
    (0..n * n)
        .map(|k| dinv[k / n] * a[k] * dinv[k % n])
        .collect()
}

#[test]
fn gcn_matches_dense_symmetric_normalisation() {
    for (name, d) in forward_devices() {
        for ((s, r, n), improved, weighted) in
            [test_graph(), looped_graph()].into_iter().flat_map(|g| {
                [(false, false), (true, false), (false, true), (true, true)]
                    .map(move |(i, w)| (g.clone(), i, w))
            })
        {
            let conv = GcnConvConfig::new(3, 2).with_improved(improved).init(&d);
            let mut rng = Rng(5);
            let (xv, x) = random_x(&mut rng, n, 3, &d);
            let w: Vec<f64> = (0..s.len())
                .map(|e| if weighted { 0.5 + e as f64 / 4.0 } else { 1.0 })
                .collect();
            let g = graph(&s, &r, n, &d);
            let got = if weighted {
                let wt = Tensor::<1>::from_data(
                    burn::tensor::TensorData::new(
                        w.iter().map(|&v| v as f32).collect::<Vec<_>>(),
                        [w.len()],
                    ),
                    &d,
                );
                host(conv.forward_with(GcnInput::new(x, &g).edge_weight(wt)))
            } else {
                host(conv.forward(x, &g))
            };
            // `A + 2I` when improved, with or without weights (PyG ignores `improved` without).
            let norm = gcn_dense(&s, &r, &w, n, if improved { 2.0 } else { 1.0 });
            let h = matmul(&xv, &host(conv.weight.val()), n, 3, 2);
            let mut want = matmul(&norm, &h, n, n, 2);
            add_bias(&mut want, &host(conv.bias.as_ref().unwrap().val()));
            assert_close(
                &got,
                &want,
                1e-4,
                &format!(
                    "GcnConv(improved={improved}, weighted={weighted}) on {n}-node graph with {} edges, {name}",
                    s.len()
                ),
            );
        }
    }
}

#[test]
fn sage_matches_reference() {
    for (name, d) in forward_devices() {
        for aggr in ["mean", "max", "sum"] {
            let conv = SageConvConfig::new(3, 2)
                .with_aggr(aggr.parse().unwrap())
                .init(&d);
            let (s, r, n) = test_graph();
            let mut rng = Rng(6);
            let (xv, x) = random_x(&mut rng, n, 3, &d);
            let got = host(conv.forward(x, &graph(&s, &r, n, &d)));
            let mut agg = vec![0.0; n * 3];
            for i in 0..n {
                let rows: Vec<&[f64]> = (0..s.len())
                    .filter(|&e| r[e] as usize == i)
                    .map(|e| &xv[s[e] as usize * 3..s[e] as usize * 3 + 3])
                    .collect();
                for c in 0..3 {
                    let col = rows.iter().map(|row| row[c]);
                    agg[i * 3 + c] = match (aggr, rows.is_empty()) {
                        (_, true) => 0.0,
                        ("mean", _) => col.sum::<f64>() / rows.len() as f64,
                        ("max", _) => col.fold(f64::NEG_INFINITY, f64::max),
                        _ => col.sum(),
                    };
                }
            }
            let mut want = matmul(&agg, &host(conv.lin_neighbors.weight.val()), n, 3, 2);
            add_bias(
                &mut want,
                &host(conv.lin_neighbors.bias.as_ref().unwrap().val()),
            );
            let root = matmul(
                &xv,
                &host(conv.lin_root.as_ref().unwrap().weight.val()),
                n,
                3,
                2,
            );
            want.iter_mut().zip(root).for_each(|(w, r)| *w += r);
            assert_close(&got, &want, 1e-4, &format!("SageConv({aggr}) on {name}"));
        }
    }
}

#[test]
fn gin_matches_reference() {
    for (name, d) in forward_devices() {
        for batch_norm in [false, true] {
            let mut conv = GinConvConfig::new(3, 4, 2)
                .with_eps(0.25)
                .with_batch_norm(batch_norm)
                .init(&d);
            let (s, r, n) = test_graph();
            let mut rng = Rng(7);
            let (xv, x) = random_x(&mut rng, n, 3, &d);
            // A batch norm that is not the identity: random scale and shift.
            let (gamma, gamma_t) = random_x(&mut rng, 1, 4, &d);
            let (beta, beta_t) = random_x(&mut rng, 1, 4, &d);
            if let Some(norm) = conv.norm.as_mut() {
                norm.gamma = Param::from_tensor(gamma_t.reshape([4]));
                norm.beta = Param::from_tensor(beta_t.reshape([4]));
            }
            let got = host(conv.forward(x, &graph(&s, &r, n, &d)));
            let mut h: Vec<f64> = xv.iter().map(|v| 1.25 * v).collect();
            for e in 0..s.len() {
                for c in 0..3 {
                    h[r[e] as usize * 3 + c] += xv[s[e] as usize * 3 + c];
                }
            }
            let mut hidden = matmul(&h, &host(conv.mlp_in.weight.val()), n, 3, 4);
            add_bias(&mut hidden, &host(conv.mlp_in.bias.as_ref().unwrap().val()));
            if batch_norm {
                // Training (autodiff): the batch's mean and biased variance; otherwise the
                // running statistics, still 0 and 1.
                for c in 0..4 {
                    let col: Vec<f64> = (0..n).map(|i| hidden[i * 4 + c]).collect();
                    let (mean, var) = if d.is_autodiff() {
                        let m = col.iter().sum::<f64>() / n as f64;
                        (
                            m,
                            col.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n as f64,
                        )
                    } else {
                        (0.0, 1.0)
                    };
                    for i in 0..n {
                        let v = &mut hidden[i * 4 + c];
                        *v = (*v - mean) / (var + 1e-5).sqrt() * gamma[c] + beta[c];
                    }
                }
            }
            hidden.iter_mut().for_each(|v| *v = v.max(0.0));
            let mut want = matmul(&hidden, &host(conv.mlp_out.weight.val()), n, 4, 2);
            add_bias(&mut want, &host(conv.mlp_out.bias.as_ref().unwrap().val()));
            let what = format!("GinConv(batch_norm = {batch_norm}) on {name}");
            assert_close(&got, &want, 1e-4, &what);
        }
    }
}

#[test]
fn gat_matches_reference() {
    for (name, d) in forward_devices() {
        for concat in [true, false] {
            let (heads, c) = (2, 3);
            let conv = GatConvConfig::new(4, c)
                .with_heads(heads)
                .with_concat(concat)
                .init(&d);
            let (s, r, n) = test_graph();
            let mut rng = Rng(8);
            let (xv, x) = random_x(&mut rng, n, 4, &d);
            let got = host(conv.forward(x, &graph(&s, &r, n, &d)));
            let xw = matmul(&xv, &host(conv.weight.val()), n, 4, heads * c);
            let (a_src, a_dst) = (host(conv.att_src.val()), host(conv.att_dst.val()));
            let edges = relooped(&s, &r, n);
            let mut out = vec![0.0; n * heads * c];
            for h in 0..heads {
                let score = |i: usize, att: &[f64]| {
                    (0..c)
                        .map(|k| xw[i * heads * c + h * c + k] * att[h * c + k])
                        .sum::<f64>()
                };
                for i in 0..n {
                    let incoming: Vec<usize> =
                        edges.iter().filter(|e| e.1 == i).map(|e| e.0).collect();
                    let logits: Vec<f64> = incoming
                        .iter()
                        .map(|&j| {
                            let z = score(j, &a_src) + score(i, &a_dst);
                            if z > 0.0 { z } else { 0.2 * z }
                        })
                        .collect();
                    let m = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    let total: f64 = logits.iter().map(|z| (z - m).exp()).sum();
                    for (&j, z) in incoming.iter().zip(&logits) {
                        let alpha = (z - m).exp() / total;
                        for k in 0..c {
                            out[i * heads * c + h * c + k] += alpha * xw[j * heads * c + h * c + k];
                        }
                    }
                }
            }
            let mut want = if concat {
                out
            } else {
                (0..n * c)
                    .map(|k| {
                        (0..heads)
                            .map(|h| out[(k / c) * heads * c + h * c + k % c])
                            .sum::<f64>()
                            / heads as f64
                    })
                    .collect()
            };
            add_bias(&mut want, &host(conv.bias.as_ref().unwrap().val()));
            assert_close(
                &got,
                &want,
                1e-4,
                &format!("GatConv(concat={concat}) on {name}"),
            );
        }
    }
}

#[test]
fn gat_with_edge_features_matches_reference() {
    for (name, d) in forward_devices() {
        let (heads, c, de) = (2, 2, 3);
        let conv = GatConvConfig::new(4, c)
            .with_heads(heads)
            .with_edge_dim(Some(de))
            .init(&d);
        let (s, r, n) = test_graph();
        let mut rng = Rng(9);
        let (xv, x) = random_x(&mut rng, n, 4, &d);
        let (ev, e) = random_x(&mut rng, s.len(), de, &d);
        let got = host(conv.forward_with(GatInput::new(x, &graph(&s, &r, n, &d)).edge_attr(e)));
        let xw = matmul(&xv, &host(conv.weight.val()), n, 4, heads * c);
        let (a_src, a_dst, a_edge) = (
            host(conv.att_src.val()),
            host(conv.att_dst.val()),
            host(conv.att_edge.as_ref().unwrap().val()),
        );
        let w_e = host(conv.lin_edge.as_ref().unwrap().val());
        // Edges without self loops keep their features; node i's new loop gets the mean of its
        // incoming (non-loop) edge features.
        let mut edges: Vec<(usize, usize, Vec<f64>)> = (0..s.len())
            .filter(|&k| s[k] != r[k])
            .map(|k| {
                (
                    s[k] as usize,
                    r[k] as usize,
                    ev[k * de..(k + 1) * de].to_vec(),
                )
            })
            .collect();
        for i in 0..n {
            let inc: Vec<&Vec<f64>> = edges
                .iter()
                .filter(|e| e.1 == i && e.0 != i)
                .map(|e| &e.2)
                .collect();
            let mean: Vec<f64> = (0..de)
                .map(|t| {
                    if inc.is_empty() {
                        0.0
                    } else {
                        inc.iter().map(|v| v[t]).sum::<f64>() / inc.len() as f64
                    }
                })
                .collect();
            edges.push((i, i, mean));
        }
        let mut want = vec![0.0; n * heads * c];
        for h in 0..heads {
            let node = |i: usize, att: &[f64]| {
                (0..c)
                    .map(|k| xw[i * heads * c + h * c + k] * att[h * c + k])
                    .sum::<f64>()
            };
            for i in 0..n {
                let inc: Vec<&(usize, usize, Vec<f64>)> =
                    edges.iter().filter(|e| e.1 == i).collect();
                let z: Vec<f64> = inc
                    .iter()
                    .map(|(j, _, ea)| {
                        let edge: f64 = (0..c)
                            .map(|k| {
                                a_edge[h * c + k]
                                    * (0..de)
                                        .map(|t| ea[t] * w_e[t * heads * c + h * c + k])
                                        .sum::<f64>()
                            })
                            .sum();
                        let v = node(*j, &a_src) + node(i, &a_dst) + edge;
                        if v > 0.0 { v } else { 0.2 * v }
                    })
                    .collect();
                let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let total: f64 = z.iter().map(|v| (v - m).exp()).sum();
                for ((j, _, _), v) in inc.iter().map(|e| (e.0, e.1, ())).zip(&z) {
                    let a = (v - m).exp() / total;
                    (0..c).for_each(|k| {
                        want[i * heads * c + h * c + k] += a * xw[j * heads * c + h * c + k]
                    });
                }
            }
        }
        add_bias(&mut want, &host(conv.bias.as_ref().unwrap().val()));
        assert_close(&got, &want, 1e-4, &format!("GatConv(edge_dim) on {name}"));
    }
}
