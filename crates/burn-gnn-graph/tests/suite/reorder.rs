//! Node reordering: reverse Cuthill–McKee and `permute_nodes`.

use burn_gnn_graph::{GraphError, GraphsTuple};
use proptest::prelude::*;

use crate::common::*;

/// A seeded shuffle of `0..n` (Fisher–Yates over a 64-bit LCG).
fn shuffle(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        p.swap(i, (state >> 33) as usize % (i + 1));
    }
    p
}

/// The largest `|sender - receiver|` over the edges (0 without edges).
fn bandwidth(g: &GraphsTuple) -> i64 {
    let (s, r) = g.to_coo();
    s.iter()
        .zip(&r)
        .map(|(a, b)| (a - b).abs())
        .max()
        .unwrap_or(0)
}

/// `edges` as a graph on `n` nodes, its nodes relabelled by `shuffle(n, seed)`.
fn shuffled(
    edges: &[(usize, usize)],
    n: usize,
    seed: u64,
    device: &burn::tensor::Device,
) -> GraphsTuple {
    let label = shuffle(n, seed);
    let s: Vec<i64> = edges.iter().map(|&(a, _)| label[a] as i64).collect();
    let r: Vec<i64> = edges.iter().map(|&(_, b)| label[b] as i64).collect();
    GraphsTuple::from_coo(&s, &r, n, device).unwrap()
}

/// Checks that `order` is a permutation keeping each graph's nodes in its range.
fn assert_permutation_within_graphs(order: &[usize], n_node: &[i64]) {
    let mut seen = vec![false; order.len()];
    let mut start = 0;
    for &count in n_node {
        let range = start..start + count as usize;
        for p in range.clone() {
            assert!(
                range.contains(&order[p]),
                "order[{p}] = {} left its graph {range:?}",
                order[p]
            );
            assert!(
                !std::mem::replace(&mut seen[order[p]], true),
                "node {} twice",
                order[p]
            );
        }
        start = range.end;
    }
    assert_eq!(start, order.len());
}

#[test]
fn rcm_recovers_a_shuffled_path() {
    for (name, d) in devices() {
        let n = 60;
        let path: Vec<(usize, usize)> = (0..n - 1).flat_map(|v| [(v, v + 1), (v + 1, v)]).collect();
        let g = shuffled(&path, n, 3, &d);
        assert!(bandwidth(&g) > 10, "{name}: the shuffle scatters the path");
        let p = g.reorder_rcm();
        p.graph.validate().unwrap();
        assert_eq!(bandwidth(&p.graph), 1, "{name}: a path in order");
    }
}

#[test]
fn rcm_bandwidth_of_a_grid_and_a_ring_within_the_level_bound() {
    // A Cuthill–McKee order numbers breadth-first levels one after the other, and an edge joins
    // nodes of the same or adjacent levels: its bandwidth is below twice the widest level.
    let d = devices().remove(0).1;
    let m = 12;
    let mut grid = Vec::new();
    for i in 0..m {
        for j in 0..m {
            let v = i * m + j;
            if j + 1 < m {
                grid.extend([(v, v + 1), (v + 1, v)]);
            }
            if i + 1 < m {
                grid.extend([(v, v + m), (v + m, v)]);
            }
        }
    }
    let g = shuffled(&grid, m * m, 5, &d);
    assert!(bandwidth(&g) > 2 * m as i64);
    // From a corner (the pseudo-peripheral search finds one) the levels are anti-diagonals, at
    // most `m` wide.
    assert!(
        bandwidth(&g.reorder_rcm().graph) < 2 * m as i64,
        "grid: {}",
        bandwidth(&g.reorder_rcm().graph)
    );
    // A ring lattice with each node joined to its 2 nearest on either side: levels of 4.
    let n = 300;
    let ring: Vec<(usize, usize)> = (0..n)
        .flat_map(|v| [(v, (v + 1) % n), (v, (v + 2) % n)])
        .collect();
    let g = shuffled(&ring, n, 7, &d);
    assert!(bandwidth(&g) > 100);
    assert!(
        bandwidth(&g.reorder_rcm().graph) < 8,
        "ring: {}",
        bandwidth(&g.reorder_rcm().graph)
    );
}

#[test]
fn rcm_order_follows_the_documented_algorithm() {
    // Worked by hand. Graph 0, the tree 0-1, 1-2, 1-3, 3-4: the search starts at 0 (smallest
    // degree, then id); its last level is {4}, whose search is no deeper, so Cuthill–McKee
    // starts at 4: 4, 3, 1, then 1's neighbours 0 and 2 (degree 1 each, by id); reversed
    // 2, 0, 1, 3, 4. Graph 1, the path 6-5-7: start 6, last level {7}, Cuthill–McKee 7, 5, 6,
    // reversed 6, 5, 7.
    for (name, d) in devices() {
        let g = GraphsTuple::builder(ints(&[0, 1, 1, 3, 5, 7], &d), ints(&[1, 2, 3, 4, 6, 5], &d))
            .n_node(ints(&[5, 3], &d))
            .n_edge(ints(&[4, 2], &d))
            .build()
            .unwrap();
        assert_eq!(g.rcm_order(), [2, 0, 1, 3, 4, 6, 5, 7], "{name}");
    }
}

#[test]
fn rcm_orders_components_and_odd_nodes() {
    let d = devices().remove(0).1;
    // Two components, an isolated node, a self loop, a duplicate edge; two graphs.
    let g = GraphsTuple::builder(
        ints(&[0, 1, 1, 4, 3, 5, 6, 6], &d),
        ints(&[1, 2, 2, 4, 5, 3, 7, 8], &d),
    )
    .n_node(ints(&[6, 3], &d))
    .n_edge(ints(&[6, 2], &d))
    .build()
    .unwrap();
    let order = g.rcm_order();
    assert_permutation_within_graphs(&order, &[6, 3]);
    // Each component is contiguous in the order: {0, 1, 2}, {3, 5}, {4}; {6, 7, 8}.
    let pos = |v: usize| order.iter().position(|&o| o == v).unwrap();
    for comp in [&[0usize, 1, 2][..], &[3, 5], &[4], &[6, 7, 8]] {
        let mut p: Vec<usize> = comp.iter().map(|&v| pos(v)).collect();
        p.sort();
        assert_eq!(
            p.last().unwrap() - p[0] + 1,
            p.len(),
            "component {comp:?} at {p:?} in {order:?}"
        );
    }
    // The path 0 - 1 - 2 starts at an end, so 1 sits in the middle.
    assert_eq!(pos(1), (pos(0) + pos(2)) / 2);
    let empty = GraphsTuple::from_coo(&[], &[], 0, &d).unwrap();
    assert!(empty.rcm_order().is_empty());
    assert_eq!(empty.reorder_rcm().graph.sum_n_node(), 0);
}

#[test]
fn permute_nodes_rejects_bad_orders() {
    let d = devices().remove(0).1;
    let g = GraphsTuple::builder(ints(&[0, 3], &d), ints(&[1, 4], &d))
        .n_node(ints(&[3, 2], &d))
        .n_edge(ints(&[1, 1], &d))
        .build()
        .unwrap();
    let message = |order: &[usize]| match g.permute_nodes(order) {
        Err(GraphError::InvalidArgument(m)) => m,
        other => panic!("{order:?}: expected an error, got {other:?}"),
    };
    assert!(message(&[0, 1, 2, 3]).contains("4 entries for 5 nodes"));
    assert!(message(&[0, 1, 1, 3, 4]).contains("node 1 appears twice"));
    assert!(message(&[0, 1, 2, 3, 9]).contains("out of range"));
    assert!(message(&[0, 1, 3, 2, 4]).contains("moves node 3 into graph 0"));
    assert!(g.permute_nodes(&[2, 0, 1, 4, 3]).is_ok());
}

proptest! {
    // Each case runs on every device (wgpu on a software driver included): keep the count small.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// On random batches, sorted by receiver or not: the order is a permutation within graphs,
    /// each component contiguous; relabelling moves every node with its features and keeps
    /// every edge with its weight; sorted edges stay sorted, with their offsets.
    #[test]
    fn permute_nodes_relabels_consistently(data in arb_graph(3), sort in any::<bool>()) {
        for (name, d) in devices() {
            let g = if sort { build(&data, &d).sort_by_receiver() } else { build(&data, &d) };
            let n_node = host_i64(g.n_node().clone());
            let order = g.rcm_order();
            assert_permutation_within_graphs(&order, &n_node);
            let (s, r) = g.to_coo();
            // Components by union–find, each contiguous in the order.
            let mut parent: Vec<usize> = (0..order.len()).collect();
            fn find(p: &mut [usize], v: usize) -> usize {
                if p[v] != v { let root = find(p, p[v]); p[v] = root; }
                p[v]
            }
            for (&a, &b) in s.iter().zip(&r) {
                let (x, y) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
                parent[x] = y;
            }
            let roots: Vec<usize> = order.iter().map(|&v| find(&mut parent, v)).collect();
            for (i, root) in roots.iter().enumerate() {
                if let Some(j) = roots[..i].iter().rposition(|x| x == root) {
                    prop_assert!(roots[j..i].iter().all(|x| x == root), "{}: component split in {:?}", name, order);
                }
            }
            let p = g.permute_nodes(&order).unwrap();
            p.graph.validate().unwrap();
            let node_ids = host_i64(p.node_ids.clone());
            prop_assert_eq!(&node_ids, &order.iter().map(|&v| v as i64).collect::<Vec<_>>());
            let mut inverse = vec![0i64; order.len()];
            order.iter().enumerate().for_each(|(new, &old)| inverse[old] = new as i64);
            let (old, new) = (mirror(&g), mirror(&p.graph));
            let rows = |f: &burn_gnn_graph::FeatureData| values_f64(f);
            let (xo, xn) = (rows(old.nodes.main.as_ref().unwrap()), rows(new.nodes.main.as_ref().unwrap()));
            for (v, &o) in order.iter().enumerate() {
                prop_assert_eq!(&xn[2 * v..2 * v + 2], &xo[2 * o..2 * o + 2], "{}", name);
                prop_assert_eq!(rows(&new.nodes.named["label"])[v], rows(&old.nodes.named["label"])[o]);
            }
            prop_assert_eq!(&new.n_node, &old.n_node);
            prop_assert_eq!(&new.n_edge, &old.n_edge);
            prop_assert_eq!(&new.globals, &old.globals);
            let mut relabelled: Vec<_> = triples(&g).into_iter().map(|(a, b, w)| (inverse[a as usize], inverse[b as usize], w)).collect();
            relabelled.sort();
            prop_assert_eq!(triples(&p.graph), relabelled, "{}", name);
            // Edge by edge, through edge_ids.
            let edge_ids = host_i64(p.edge_ids.clone());
            let (ws, wn) = (rows(old.edges.main.as_ref().unwrap()), rows(new.edges.main.as_ref().unwrap()));
            for (e, &o) in edge_ids.iter().enumerate() {
                let o = o as usize;
                prop_assert_eq!((new.senders[e], new.receivers[e], wn[e]), (inverse[s[o] as usize], inverse[r[o] as usize], ws[o]));
            }
            prop_assert_eq!(p.graph.is_sorted_by_receiver(), sort);
            if sort {
                prop_assert!(new.receivers.windows(2).all(|w| w[0] <= w[1]));
                let offsets = host_i64(p.graph.receiver_offsets().unwrap().clone());
                for v in 0..order.len() {
                    let count = new.receivers.iter().filter(|&&x| x == v as i64).count() as i64;
                    prop_assert_eq!(offsets[v + 1] - offsets[v], count);
                }
            } else {
                prop_assert_eq!(edge_ids, (0..s.len() as i64).collect::<Vec<_>>());
            }
        }
    }
}
