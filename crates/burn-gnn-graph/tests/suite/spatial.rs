//! `knn_graph`, `radius_graph`, `knn` and `radius` against brute force on random batched
//! points with many exact ties (small integer coordinates), on every backend.

use burn_gnn_graph::{Flow, GraphError, knn, knn_graph, radius, radius_graph};

use crate::common::*;

/// Seeded points on a small integer grid (many equal distances) and sorted graph ids.
fn case(n: usize, d: usize, graphs: i64, seed: u64) -> (Vec<f32>, Vec<i64>) {
    let mut s = seed;
    let mut next = |m: u64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) % m
    };
    let x = (0..n * d).map(|_| next(5) as f32).collect();
    let mut batch: Vec<i64> = (0..n).map(|_| next(graphs as u64) as i64).collect();
    batch.sort();
    (x, batch)
}

fn dist2(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(p, q)| ((p - q) as f64).powi(2)).sum()
}

/// For each query of `q`, the points of `p` of the same graph, nearest first (ties to the
/// smaller index), within `r` if given, at most `k`.
#[allow(clippy::too_many_arguments)]
fn brute(
    q: &[f32],
    bq: &[i64],
    p: &[f32],
    bp: &[i64],
    d: usize,
    k: usize,
    r: Option<f64>,
    exclude_self: bool,
) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for i in 0..bq.len() {
        let mut c: Vec<(f64, usize)> = (0..bp.len())
            .filter(|&j| bp[j] == bq[i] && !(exclude_self && i == j))
            .map(|j| (dist2(&q[i * d..(i + 1) * d], &p[j * d..(j + 1) * d]), j))
            .filter(|&(s, _)| r.is_none_or(|r| s.sqrt() < r))
            .collect();
        c.sort_by(|a, b| a.partial_cmp(b).unwrap());
        out.extend(c.into_iter().take(k).map(|(_, j)| (i as i64, j as i64)));
    }
    out
}

#[test]
fn knn_and_radius_graphs_equal_brute_force() {
    for (name, device) in devices() {
        for seed in 0..4 {
            let (n, d) = (30 + 7 * seed as usize, 1 + seed as usize % 3);
            let (x, batch) = case(n, d, 3, seed);
            let xt = floats(&x, [n, d], &device);
            let bt = ints(&batch, &device);
            for (k, self_loops) in [(1, false), (4, false), (3, true), (40, false)] {
                let g = knn_graph(&xt, k, Some(&bt), self_loops, Flow::SourceToTarget).unwrap();
                let want = brute(&x, &batch, &x, &batch, d, k, None, !self_loops);
                let (senders, receivers) = g.to_coo();
                let got: Vec<(i64, i64)> = receivers.into_iter().zip(senders).collect();
                assert_eq!(
                    got, want,
                    "{name} knn_graph k = {k}, loops = {self_loops}, seed {seed}"
                );
                let graphs = *batch.last().unwrap() as usize + 1;
                assert_eq!(g.n_graph(), graphs, "{name}");
                let n_edge = host_i64(g.n_edge().clone());
                for (gid, &count) in n_edge.iter().enumerate() {
                    let expect = want
                        .iter()
                        .filter(|&&(q, _)| batch[q as usize] == gid as i64)
                        .count();
                    assert_eq!(count as usize, expect, "{name} n_edge");
                }
            }
            for (r, max) in [(1.5, 32), (2.3, 3), (0.5, 8)] {
                let g = radius_graph(&xt, r, Some(&bt), false, max, Flow::TargetToSource).unwrap();
                let want = brute(&x, &batch, &x, &batch, d, max, Some(r), true);
                let (senders, receivers) = g.to_coo();
                let got: Vec<(i64, i64)> = senders.into_iter().zip(receivers).collect();
                assert_eq!(
                    got, want,
                    "{name} radius_graph r = {r}, max {max}, seed {seed}"
                );
            }
        }
    }
}

#[test]
fn knn_and_radius_between_two_point_sets_equal_brute_force() {
    for (name, device) in devices() {
        let (x, bx) = case(25, 2, 2, 7);
        let (y, by) = case(11, 2, 2, 8);
        let (xt, yt) = (floats(&x, [25, 2], &device), floats(&y, [11, 2], &device));
        let (bxt, byt) = (ints(&bx, &device), ints(&by, &device));
        let got = host_i64(
            knn(&xt, &yt, 3, Some(&bxt), Some(&byt))
                .unwrap()
                .reshape([-1]),
        );
        let want = brute(&y, &by, &x, &bx, 2, 3, None, false);
        let (q, p): (Vec<i64>, Vec<i64>) = want.into_iter().unzip();
        assert_eq!(got, [q, p].concat(), "{name} knn");
        let got = host_i64(
            radius(&xt, &yt, 1.9, Some(&bxt), Some(&byt), 4)
                .unwrap()
                .reshape([-1]),
        );
        let want = brute(&y, &by, &x, &bx, 2, 4, Some(1.9), false);
        let (q, p): (Vec<i64>, Vec<i64>) = want.into_iter().unzip();
        assert_eq!(got, [q, p].concat(), "{name} radius");
    }
}

#[test]
fn a_bad_batch_vector_is_a_typed_error() {
    let device = burn::tensor::Device::flex();
    let x = floats(&[0.0, 1.0, 2.0], [3, 1], &device);
    for (batch, what) in [
        (vec![0, 1, 0], "sorted"),
        (vec![0, -1, 0], "negative"),
        (vec![0, 0], "entries"),
    ] {
        let err = knn_graph(
            &x,
            1,
            Some(&ints(&batch, &device)),
            false,
            Flow::SourceToTarget,
        )
        .unwrap_err();
        assert!(
            matches!(&err, GraphError::InvalidArgument(m) if m.contains(what)),
            "{err}"
        );
    }
}
