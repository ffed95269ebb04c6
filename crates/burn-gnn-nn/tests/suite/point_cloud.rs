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
            let conv = DynamicEdgeConvConfig::new(3, 5, 4, k).init(&device).unwrap();
            let got = host(conv.forward(x.clone(), &g));
            let (s, r) = brute_knn(&xs, 3, &graph_of, k);
            let knn = graph(&s, &r, n, &device);
            assert_eq!(conv.neighbours(&x, &g).to_coo(), (s, r), "{name} k = {k}");
            let want = host(conv.edge_conv.forward(x.clone(), &knn));
            assert_close(&got, &want, 1e-6, &format!("{name} DynamicEdgeConv k = {k}"));
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
        let (bx, by) = (vec![0, 0, 0, 0, 1, 1, 1, 1, 1, 1], vec![0, 0, 0, 1, 1, 1, 1]);
        let got = knn_interpolate(x, &px, &py, Some(&ints(&bx, &device)), Some(&ints(&by, &device)), k)
            .unwrap();
        let f = |v: f64| v as f32 as f64;
        let mut want = vec![0.0; m * c];
        for i in 0..m {
            let mut cand: Vec<(f64, usize)> = (0..n)
                .filter(|&j| bx[j] == by[i])
                .map(|j| {
                    let d2 = (0..2).map(|a| (f(pxs[j * 2 + a]) - f(pys[i * 2 + a])).powi(2)).sum();
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
