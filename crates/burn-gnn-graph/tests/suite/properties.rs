//! Property tests against host references, on every device.

use std::collections::BTreeMap;

use burn_gnn_graph::{EdgeReduce, GraphData, GraphsTuple, SelfLoops, batch};
use proptest::prelude::*;

use crate::common::*;

fn config() -> ProptestConfig {
    // Each case runs on every device (wgpu on a software driver included): keep the count small.
    ProptestConfig {
        cases: 24,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn batch_then_unbatch_is_identity(parts in prop::collection::vec(arb_graph(1), 1..4)) {
        for (name, d) in devices() {
            let graphs: Vec<GraphsTuple> = parts.iter().map(|p| build(p, &d)).collect();
            let b = batch(&graphs).unwrap();
            b.validate().unwrap();
            prop_assert_eq!(b.sum_n_node(), parts.iter().map(|p| p.num_nodes).sum::<usize>());
            let back = b.unbatch();
            prop_assert_eq!(back.len(), graphs.len());
            for (x, y) in back.iter().zip(&graphs) {
                x.validate().unwrap();
                prop_assert_eq!(mirror(x), mirror(y), "{}", name);
            }
        }
    }

    #[test]
    fn pad_then_unpad_is_identity_and_masks_count(
        data in arb_graph(3), extra_nodes in 1usize..4, extra_edges in 0usize..4, extra_graphs in 1usize..3,
    ) {
        for (name, d) in devices() {
            let g = build(&data, &d);
            let (n, e, k) = (g.sum_n_node() + extra_nodes, g.sum_n_edge() + extra_edges, g.n_graph() + extra_graphs);
            let p = g.pad_with_graphs(n, e, k).unwrap();
            p.validate().unwrap();
            prop_assert_eq!((p.sum_n_node(), p.sum_n_edge(), p.n_graph()), (n, e, k));
            let count = |m: Vec<bool>| m.iter().filter(|&&x| x).count();
            prop_assert_eq!(count(host_bool(p.node_mask())), g.sum_n_node(), "{}", name);
            prop_assert_eq!(count(host_bool(p.edge_mask())), g.sum_n_edge());
            prop_assert_eq!(count(host_bool(p.graph_mask())), g.n_graph());
            prop_assert_eq!(mirror(&p.unpad_with_graphs()), mirror(&g));
            prop_assert_eq!(mirror(&p.clone().zero_out_padding()), mirror(&p), "padding rows are zeros already");
        }
    }

    #[test]
    fn host_mirrors_and_index_conversions_round_trip(data in arb_graph(3)) {
        for (name, d) in devices() {
            let g = build(&data, &d);
            let m = mirror(&g);
            let json = GraphsTuple::from_graph_data(&GraphData::from_json(&m.to_json().unwrap()).unwrap(), &d).unwrap();
            prop_assert_eq!(mirror(&json), m.clone(), "{}", name);
            let bin = GraphsTuple::from_graph_data(&GraphData::from_bytes(&m.to_bytes().unwrap()).unwrap(), &d).unwrap();
            prop_assert_eq!(mirror(&bin), m.clone());
            let (s, r) = g.to_coo();
            prop_assert_eq!(GraphsTuple::from_coo(&s, &r, g.sum_n_node(), &d).unwrap().to_coo(), (s.clone(), r.clone()));
            let (csr, order) = g.to_csr();
            let from_csr = GraphsTuple::from_csr(&csr, &d).unwrap().to_coo();
            let permuted: (Vec<i64>, Vec<i64>) = order.iter().map(|&e| (s[e], r[e])).unzip();
            prop_assert_eq!(from_csr, permuted);
            // Dense adjacency: weights of duplicate edges add up (weights are >= 1, never cancel).
            let mut want: BTreeMap<(i64, i64), i64> = BTreeMap::new();
            for (s, r, w) in triples(&g) {
                *want.entry((s, r)).or_default() += w;
            }
            let dense = GraphsTuple::from_dense_adjacency(g.to_dense_adjacency()).unwrap();
            let got: Vec<_> = triples(&dense).into_iter().map(|(s, r, w)| ((s, r), w)).collect();
            prop_assert_eq!(got, want.into_iter().collect::<Vec<_>>());
            // petgraph keeps edges in order with their features.
            let pg = GraphsTuple::from_petgraph(&g.to_petgraph().unwrap(), &d).unwrap();
            prop_assert_eq!(pg.to_coo(), (s, r));
            prop_assert_eq!(triples(&pg), triples(&g));
        }
    }

    #[test]
    fn utilities_match_host_references(data in arb_graph(3), mask_bits in prop::collection::vec(any::<bool>(), 16)) {
        for (name, d) in devices() {
            let g = build(&data, &d);
            let (s, r) = g.to_coo();
            let n = g.sum_n_node();
            let mut indeg = vec![0i64; n];
            let mut outdeg = vec![0i64; n];
            s.iter().for_each(|&v| outdeg[v as usize] += 1);
            r.iter().for_each(|&v| indeg[v as usize] += 1);
            prop_assert_eq!(host_i64(g.in_degree()), indeg.clone(), "{}", name);
            prop_assert_eq!(host_i64(g.out_degree()), outdeg);

            // Sorting by receiver: a stable permutation, sorted, with matching CSR offsets.
            let sorted = g.sort_by_receiver();
            sorted.validate().unwrap();
            let (ss, sr) = sorted.to_coo();
            let mut order: Vec<usize> = (0..s.len()).collect();
            order.sort_by_key(|&e| r[e]);
            prop_assert_eq!(ss, order.iter().map(|&e| s[e]).collect::<Vec<_>>());
            prop_assert_eq!(sr, order.iter().map(|&e| r[e]).collect::<Vec<_>>());
            prop_assert_eq!(triples(&sorted), triples(&g));
            let mut ptr = vec![0i64];
            indeg.iter().for_each(|c| ptr.push(ptr.last().unwrap() + c));
            prop_assert_eq!(host_i64(sorted.receiver_offsets().unwrap().clone()), ptr);

            // Coalesce against a map of (receiver, sender) -> summed weight.
            let mut merged: BTreeMap<(i64, i64), i64> = BTreeMap::new();
            for (s, r, w) in triples(&g) {
                *merged.entry((r, s)).or_default() += w;
            }
            let c = g.coalesce(EdgeReduce::Sum).unwrap();
            c.validate().unwrap();
            let (cs, cr) = c.to_coo();
            let cw: Vec<i64> = host_f32(c.edge_tensor::<1>().unwrap()).iter().map(|&x| x as i64).collect();
            let got: Vec<_> = cr.into_iter().zip(cs).zip(cw).collect();
            prop_assert_eq!(got, merged.into_iter().collect::<Vec<_>>());

            // Self loops: exactly one per node afterwards, every other edge kept.
            let l = g.add_self_loops(SelfLoops { remove_existing: true, ..Default::default() }).unwrap();
            l.validate().unwrap();
            let (ls, lr) = l.to_coo();
            let loops: Vec<i64> = ls.iter().zip(&lr).filter(|(a, b)| a == b).map(|(a, _)| *a).collect();
            prop_assert_eq!(loops, (0..n as i64).collect::<Vec<_>>());
            let non_loops = s.iter().zip(&r).filter(|(a, b)| a != b).count();
            prop_assert_eq!(l.sum_n_edge(), non_loops + n);
            let u = g.to_undirected(EdgeReduce::Max).unwrap();
            u.validate().unwrap();
            let (us, ur) = u.to_coo();
            let pairs: std::collections::BTreeSet<_> = us.iter().zip(&ur).map(|(a, b)| (*a, *b)).collect();
            prop_assert!(pairs.iter().all(|(a, b)| pairs.contains(&(*b, *a))));

            // Induced subgraph against a host filter.
            let mask: Vec<bool> = (0..n).map(|i| mask_bits[i % 16]).collect();
            let sub = g.subgraph(&mask).unwrap();
            sub.graph.validate().unwrap();
            let kept: Vec<i64> = (0..s.len() as i64).filter(|&e| mask[s[e as usize] as usize] && mask[r[e as usize] as usize]).collect();
            prop_assert_eq!(host_i64(sub.edge_ids), kept);
            prop_assert_eq!(sub.graph.sum_n_node(), mask.iter().filter(|&&m| m).count());
        }
    }
}
