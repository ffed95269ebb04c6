//! The point-cloud layers against plain references: `DynamicEdgeConv` equals `EdgeConv` over a
//! brute-force kNN graph of its input (per graph of a batch), and `knn_interpolate` equals its
//! formula in f64.

use burn_gnn_graph::{GraphsTuple, batch};
use burn_gnn_nn::{DynamicEdgeConvConfig, knn_interpolate};

use crate::common::*;

/// The `k` nearest rows of each row among those of its graph (itself included; ties to the
/// smaller index), as (neighbour, row) edges grouped by row.
fn brute_knn(x: &[f64], d: usize, graph_of: &[usize], k: usize) -> (Vec<i64>, Vec<i64>) {
    let rounded: Vec<f64> = x.iter().map(|&v| v as f32 as f64).collect();
    let (mut s, mut r) = (Vec::new(), Vec::new());
    for i in 0..graph_of.len() {
        let mut c: Vec<(f64, usize)> = (0..graph_of.len())
            .filter(|&j| graph_of[j] == graph_of[i])
            .map(|j| {
                let dist = (0..d).map(|c| (rounded[i * d + c] - rounded[j * d + c]).powi(2));
                (dist.sum(), j)
            })
            .collect();
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        for (_, j) in c.into_iter().take(k) {
            s.push(j as i64);
            r.push(i as i64);
        }
    }
    (s, r)
}

#[test]
fn dynamic_edge_conv_is_edge_conv_over_the_knn_graph_of_its_input() {
    for (name, device) in forward_devices() {
        let mut rng = Rng(5);
        let sizes = [8usize, 6, 1];
        let n: usize = sizes.iter().sum();
        let (xs, x) = random_x(&mut rng, n, 3, &device);
        let parts: Vec<GraphsTuple> = sizes.iter().map(|&s| graph(&[], &[], s, &device)).collect();
        let g = batch(&parts).unwrap();
        let graph_of: Vec<usize> = sizes
            .iter()
            .enumerate()
            .flat_map(|(gid, &s)| std::iter::repeat_n(gid, s))
            .collect();
        for k in [1, 4, 20] {
            let conv = DynamicEdgeConvConfig::new(3, 5, 4, k).init(&device);
            let got = host(conv.forward(x.clone(), &g));
            let (s, r) = brute_knn(&xs, 3, &graph_of, k);
            let knn = graph(&s, &r, n, &device);
            assert_eq!(conv.neighbours(&x, &g).to_coo(), (s, r), "{name} k = {k}");
            let want = host(conv.edge_conv.forward(x.clone(), &knn));
            assert_close(
                &got,
                &want,
                1e-6,
                &format!("{name} DynamicEdgeConv k = {k}"),
            );
        }
    }
}

#[test]
fn knn_interpolate_matches_its_formula() {
    for (name, device) in forward_devices() {
        let mut rng = Rng(9);
        let (n, m, c, k) = (10, 7, 3, 3);
        let (pxs, px) = random_x(&mut rng, n, 2, &device);
        let (pys, py) = random_x(&mut rng, m, 2, &device);
        let (xs, x) = random_x(&mut rng, n, c, &device);
        let (bx, by) = (
            vec![0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
            vec![0, 0, 0, 1, 1, 1, 1],
        );
        let got = knn_interpolate(
            x,
            &px,
            &py,
            Some(&ints(&bx, &device)),
            Some(&ints(&by, &device)),
            k,
        )
        .unwrap();
        let f = |v: f64| v as f32 as f64;
        let mut want = vec![0.0; m * c];
        for i in 0..m {
            let mut cand: Vec<(f64, usize)> = (0..n)
                .filter(|&j| bx[j] == by[i])
                .map(|j| {
                    let d2 = (0..2)
                        .map(|a| (f(pxs[j * 2 + a]) - f(pys[i * 2 + a])).powi(2))
                        .sum();
                    (d2, j)
                })
                .collect();
            cand.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let picked = &cand[..k];
            let total: f64 = picked.iter().map(|p| 1.0 / p.0.max(1e-16)).sum();
            for &(d2, j) in picked {
                for a in 0..c {
                    want[i * c + a] += f(xs[j * c + a]) / d2.max(1e-16) / total;
                }
            }
        }
        assert_close(&host(got), &want, 1e-5, &format!("{name} knn_interpolate"));
    }
}

/// Dense attention of each graph's nodes to each other (Burn's matmul and softmax on the
/// graph's `[n, n]` block), through `conv`'s projections.
fn dense_attention<L: burn::module::Module>(
    conv: &burn_gnn_nn::GpsConv<L>,
    x: burn::tensor::Tensor<2>,
    sizes: &[usize],
) -> burn::tensor::Tensor<2> {
    use burn::tensor::{Tensor, activation::softmax};
    let [_, c] = x.dims();
    let dh = c / conv.heads;
    let (q, k, v) = (
        conv.query.forward(x.clone()),
        conv.key.forward(x.clone()),
        conv.value.forward(x),
    );
    let mut rows = Vec::new();
    let mut start = 0;
    for &s in sizes {
        let r = start..start + s;
        let heads: Vec<Tensor<2>> = (0..conv.heads)
            .map(|h| {
                let cols = h * dh..(h + 1) * dh;
                let qh = q.clone().slice([r.clone(), cols.clone()]);
                let kh = k.clone().slice([r.clone(), cols.clone()]);
                let vh = v.clone().slice([r.clone(), cols]);
                let logits = qh.matmul(kh.transpose()) / (dh as f64).sqrt();
                softmax(logits, 1).matmul(vh)
            })
            .collect();
        rows.push(Tensor::cat(heads, 1));
        start += s;
    }
    conv.output.forward(Tensor::cat(rows, 0))
}

#[test]
fn gps_attention_equals_dense_attention_per_graph() {
    use burn_gnn_nn::{GinConv, GinConvConfig, GpsConvConfig, GpsNorm};
    for (name, device) in forward_devices() {
        let mut rng = Rng(3);
        let sizes = [5usize, 1, 9];
        let n: usize = sizes.iter().sum();
        let (_, x) = random_x(&mut rng, n, 8, &device);
        let parts: Vec<GraphsTuple> = sizes
            .iter()
            .map(|&s| {
                let (snd, rcv) = random_edges(&mut rng, s, 2 * s);
                graph(&snd, &rcv, s, &device)
            })
            .collect();
        let g = batch(&parts).unwrap();
        for heads in [1, 2, 4] {
            let gin = GinConvConfig::new(8, 8, 8).init(&device);
            let conv = GpsConvConfig::new(8)
                .with_heads(heads)
                .with_norm(GpsNorm::None)
                .init::<GinConv>(Some(gin), &device);
            let want = dense_attention(&conv, x.clone(), &sizes);
            let what = format!("{name} GPS attention, {heads} heads");
            assert_close(
                &host(conv.attention(x.clone(), &g)),
                &host(want.clone()),
                1e-5,
                &what,
            );
            // The whole layer: local + x, attention + x, then the MLP's residual.
            let local = conv.local.as_ref().unwrap().forward(x.clone(), &g);
            let out = local + x.clone() + want + x.clone();
            let h = conv.activation.apply(conv.mlp_in.forward(out.clone()));
            let want = out + conv.mlp_out.forward(h);
            let got = conv.forward(x.clone(), &g, None);
            assert_close(
                &host(got),
                &host(want),
                1e-5,
                &format!("{name} GpsConv, {heads} heads"),
            );
        }
        let bad = GpsConvConfig::new(8).with_heads(3);
        assert!(bad.check().is_err(), "{name}: 3 heads for 8 channels");
        assert!(crate::harness::panics(|| bad.init::<GinConv>(None, &device)));
    }
}
