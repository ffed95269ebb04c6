//! Hand-computed cases, run on every device.

use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{
    EdgeReduce, FeatureSetKind, Flow, GraphError, GraphsTuple, SelfLoopFill, SelfLoops, batch,
    fully_connected_graph,
};

use crate::common::*;

fn two_graphs(device: &Device) -> (GraphsTuple, GraphsTuple) {
    let a = GraphsTuple::builder(ints(&[0, 1], device), ints(&[1, 2], device))
        .nodes(floats(&[0.0, 1.0, 2.0], [3, 1], device))
        .edges(floats(&[10.0, 11.0], [2], device))
        .globals(floats(&[100.0], [1, 1], device))
        .build()
        .unwrap();
    let b = GraphsTuple::builder(ints(&[1], device), ints(&[0], device))
        .nodes(floats(&[3.0, 4.0], [2, 1], device))
        .edges(floats(&[12.0], [1], device))
        .globals(floats(&[200.0], [1, 1], device))
        .build()
        .unwrap();
    (a, b)
}

#[test]
fn construction_errors_name_the_bad_entry() {
    for (name, d) in devices() {
        let err = |r: Result<GraphsTuple, GraphError>| r.expect_err(name).to_string();
        let e = err(GraphsTuple::builder(ints(&[0, 1], &d), ints(&[1], &d))
            .num_nodes(2)
            .build());
        assert!(
            e.contains("senders has 2 entries but receivers has 1"),
            "{e}"
        );
        let e = err(GraphsTuple::builder(ints(&[0, 5], &d), ints(&[1, 0], &d))
            .num_nodes(3)
            .build());
        assert!(
            e.contains("senders[1] = 5 is out of range: the graph has 3 nodes"),
            "{e}"
        );
        let e = err(GraphsTuple::builder(ints(&[0, -1], &d), ints(&[1, 0], &d))
            .num_nodes(3)
            .build());
        assert!(e.contains("senders[1] = -1"), "{e}");
        let e = err(GraphsTuple::builder(ints(&[0, 0], &d), ints(&[1, 2], &d))
            .n_node(ints(&[2, 1], &d))
            .n_edge(ints(&[1, 1], &d))
            .build());
        assert!(
            e.contains("edge 1 belongs to graph 1 (nodes 2..3) but its senders is node 0"),
            "{e}"
        );
        let e = err(GraphsTuple::builder(ints(&[], &d), ints(&[], &d))
            .n_node(ints(&[2, 2], &d))
            .n_edge(ints(&[0, 0], &d))
            .num_nodes(3)
            .build());
        assert!(e.contains("n_node sums to 4 but there are 3 nodes"), "{e}");
        let e = err(GraphsTuple::builder(ints(&[], &d), ints(&[], &d))
            .n_node(ints(&[4, -1], &d))
            .n_edge(ints(&[0, 0], &d))
            .num_nodes(3)
            .build());
        assert!(e.contains("n_node[1] = -1 is negative"), "{e}");
        let e = err(GraphsTuple::builder(ints(&[], &d), ints(&[], &d))
            .n_node(ints(&[3], &d))
            .n_edge(ints(&[0, 0], &d))
            .build());
        assert!(e.contains("n_node has 1 entries but n_edge has 2"), "{e}");
        let e = err(GraphsTuple::builder(ints(&[0], &d), ints(&[1], &d))
            .nodes(floats(&[0.0; 3], [3], &d))
            .node_feature("pos", floats(&[0.0; 4], [2, 2], &d))
            .build());
        assert!(
            e.contains("node feature `pos` has 2 rows (dim 0) but the graph has 3 nodes"),
            "{e}"
        );
        let e = err(GraphsTuple::builder(ints(&[0], &d), ints(&[1], &d))
            .num_nodes(2)
            .globals(floats(&[0.0; 2], [2], &d))
            .build());
        assert!(e.contains("global feature `main` has 2 rows"), "{e}");
        let e = err(GraphsTuple::builder(ints(&[0], &d), ints(&[1], &d)).build());
        assert!(e.contains("number of nodes is unknown"), "{e}");
        // Typed access.
        let g = GraphsTuple::builder(ints(&[0], &d), ints(&[1], &d))
            .nodes(floats(&[1.0, 2.0], [2], &d))
            .build()
            .unwrap();
        assert!(
            g.node_tensor::<2>()
                .unwrap_err()
                .to_string()
                .contains("rank-2 float")
        );
        assert_eq!(host_f32(g.node_tensor::<1>().unwrap()), [1.0, 2.0]);
        assert!(g.clone().with_nodes(floats(&[1.0], [1], &d)).is_err());
    }
}

#[test]
fn batch_offsets_indices_and_unbatch_restores_the_graphs() {
    for (name, d) in devices() {
        let (a, b) = two_graphs(&d);
        let g = batch(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(g.to_coo(), (vec![0, 1, 4], vec![1, 2, 3]), "{name}");
        assert_eq!((g.sum_n_node(), g.sum_n_edge(), g.n_graph()), (5, 3, 2));
        assert_eq!(host_i64(g.n_node().clone()), [3, 2]);
        assert_eq!(host_i64(g.n_edge().clone()), [2, 1]);
        assert_eq!(
            host_f32(g.node_tensor::<2>().unwrap()),
            [0.0, 1.0, 2.0, 3.0, 4.0]
        );
        assert_eq!(host_f32(g.global_tensor::<2>().unwrap()), [100.0, 200.0]);
        assert_eq!(host_i64(g.node_graph_ids()), [0, 0, 0, 1, 1]);
        assert_eq!(host_i64(g.edge_graph_ids()), [0, 0, 1]);
        g.validate().unwrap();
        let parts = g.unbatch();
        assert_eq!(mirror(&parts[0]), mirror(&a), "{name}");
        assert_eq!(mirror(&parts[1]), mirror(&b), "{name}");
        // Moving between devices keeps everything.
        let flex = burn::tensor::Device::flex();
        assert_eq!(
            mirror(&g.to_device(&flex).to_device(&d)),
            mirror(&g),
            "{name}"
        );
        // Graphs with other features do not batch.
        let bare = GraphsTuple::from_edge_list(&[(0, 1)], 2, &d).unwrap();
        assert!(matches!(
            batch(&[a, bare]),
            Err(GraphError::SchemaMismatch(_))
        ));
        assert!(matches!(batch(&[]), Err(GraphError::EmptyBatch)));
    }
}

#[test]
fn padding_follows_jraph_and_masks_are_exact() {
    for (name, d) in devices() {
        let (a, b) = two_graphs(&d);
        assert_eq!(
            host_bool(a.graph_mask()),
            [true],
            "an unpadded graph is all real"
        );
        let g = batch(&[a, b]).unwrap();
        let p = g.pad_with_graphs(8, 6, 4).unwrap();
        p.validate().unwrap();
        assert_eq!(host_i64(p.n_node().clone()), [3, 2, 3, 0], "{name}");
        assert_eq!(host_i64(p.n_edge().clone()), [2, 1, 3, 0]);
        assert_eq!(p.to_coo(), (vec![0, 1, 4, 5, 5, 5], vec![1, 2, 3, 5, 5, 5]));
        assert_eq!(host_bool(p.graph_mask()), [true, true, false, false]);
        assert_eq!(
            host_bool(p.node_mask()),
            [true, true, true, true, true, false, false, false]
        );
        assert_eq!(
            host_bool(p.edge_mask()),
            [true, true, true, false, false, false]
        );
        assert_eq!(
            host_f32(p.node_tensor::<2>().unwrap()),
            [0.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(mirror(&p.unpad_with_graphs()), mirror(&g));
        // NaN in padding is cleared, NaN in real rows is kept.
        let nan = p
            .clone()
            .with_nodes(floats(&[f32::NAN; 8], [8], &d))
            .unwrap()
            .zero_out_padding();
        let v = host_f32(nan.node_tensor::<1>().unwrap());
        assert!(
            v[..5].iter().all(|x| x.is_nan()) && v[5..] == [0.0; 3],
            "{name}: {v:?}"
        );
        // Padded graphs batch, and unpad removes every padding graph.
        let two = batch(&[p.clone(), p]).unwrap();
        assert_eq!(
            host_bool(two.graph_mask()),
            [true, true, false, false, true, true, false, false]
        );
        assert_eq!(
            mirror(&two.unpad_with_graphs()),
            mirror(&batch(&[g.clone(), g.clone()]).unwrap())
        );
        // Targets that cannot work are errors.
        assert!(
            g.pad_with_graphs(4, 3, 3)
                .unwrap_err()
                .to_string()
                .contains("n_node = 4 is below the graph's 5")
        );
        assert!(
            g.pad_with_graphs(5, 4, 3)
                .unwrap_err()
                .to_string()
                .contains("need a padding node")
        );
        assert!(
            g.pad_with_graphs(6, 3, 2)
                .unwrap_err()
                .to_string()
                .contains("need a padding graph")
        );
        assert_eq!(
            mirror(&g.pad_with_graphs(5, 3, 2).unwrap()),
            mirror(&g),
            "padding to the same size is a no-op"
        );
    }
}

#[test]
fn self_loops() {
    for (name, d) in devices() {
        let g = GraphsTuple::builder(ints(&[0, 1, 2], &d), ints(&[1, 1, 0], &d))
            .num_nodes(3)
            .edges(floats(&[1.0, 2.0, 3.0], [3], &d))
            .build()
            .unwrap();
        let r = g.remove_self_loops();
        assert_eq!(
            (r.to_coo(), host_f32(r.edge_tensor::<1>().unwrap())),
            ((vec![0, 2], vec![1, 0]), vec![1.0, 3.0])
        );
        let a = g.add_self_loops(SelfLoops::default()).unwrap();
        assert_eq!(
            a.to_coo(),
            (vec![0, 1, 2, 0, 1, 2], vec![1, 1, 0, 0, 1, 2]),
            "{name}"
        );
        assert_eq!(
            host_f32(a.edge_tensor::<1>().unwrap()),
            [1.0, 2.0, 3.0, 0.0, 0.0, 0.0]
        );
        let m = g
            .add_self_loops(SelfLoops {
                remove_existing: true,
                fill: SelfLoopFill::Mean,
            })
            .unwrap();
        assert_eq!(m.to_coo(), (vec![0, 2, 0, 1, 2], vec![1, 0, 0, 1, 2]));
        // Incoming means: node 0 gets 3, node 1 gets 1, node 2 has no incoming edge: 0.
        assert_eq!(
            host_f32(m.edge_tensor::<1>().unwrap()),
            [1.0, 3.0, 3.0, 1.0, 0.0]
        );
        let v = g
            .add_self_loops(SelfLoops {
                remove_existing: true,
                fill: SelfLoopFill::Value(7.0),
            })
            .unwrap();
        assert_eq!(
            host_f32(v.edge_tensor::<1>().unwrap()),
            [1.0, 3.0, 7.0, 7.0, 7.0]
        );
        // In a batch, each graph's loops follow its own edges.
        let (x, y) = two_graphs(&d);
        let b = batch(&[x, y])
            .unwrap()
            .add_self_loops(SelfLoops::default())
            .unwrap();
        b.validate().unwrap();
        assert_eq!(
            b.to_coo(),
            (vec![0, 1, 0, 1, 2, 4, 3, 4], vec![1, 2, 0, 1, 2, 3, 3, 4])
        );
        assert_eq!(host_i64(b.n_edge().clone()), [5, 3]);
    }
}

#[test]
fn coalesce_and_to_undirected_merge_duplicates() {
    for (name, d) in devices() {
        let g = GraphsTuple::builder(ints(&[1, 0, 1, 2], &d), ints(&[0, 1, 0, 1], &d))
            .num_nodes(3)
            .edges(floats(&[1.0, 2.0, 4.0, 8.0], [4], &d))
            .build()
            .unwrap();
        for (how, want) in [
            (EdgeReduce::Sum, [5.0, 2.0, 8.0]),
            (EdgeReduce::Max, [4.0, 2.0, 8.0]),
            (EdgeReduce::Min, [1.0, 2.0, 8.0]),
            (EdgeReduce::Mean, [2.5, 2.0, 8.0]),
        ] {
            let c = g.coalesce(how).unwrap();
            assert_eq!(c.to_coo(), (vec![1, 0, 2], vec![0, 1, 1]), "{name}");
            assert_eq!(
                host_f32(c.edge_tensor::<1>().unwrap()),
                want,
                "{name} {how:?}"
            );
            assert_eq!(
                host_i64(c.receiver_offsets().unwrap().clone()),
                [0, 1, 3, 3]
            );
        }
        let g = GraphsTuple::builder(ints(&[0, 1, 1, 2], &d), ints(&[1, 0, 2, 2], &d))
            .num_nodes(3)
            .edges(floats(&[1.0, 2.0, 4.0, 8.0], [4], &d))
            .build()
            .unwrap();
        let u = g.to_undirected(EdgeReduce::Sum).unwrap();
        assert_eq!(
            u.to_coo(),
            (vec![1, 0, 2, 1, 2], vec![0, 1, 1, 2, 2]),
            "{name}"
        );
        assert_eq!(
            host_f32(u.edge_tensor::<1>().unwrap()),
            [3.0, 3.0, 4.0, 4.0, 8.0],
            "self loop not doubled"
        );
        let label = g
            .clone()
            .with_feature(
                FeatureSetKind::Edges,
                Some("kind"),
                Some(ints(&[1, 2, 3, 4], &d).into()),
            )
            .unwrap();
        assert!(
            label.coalesce(EdgeReduce::Mean).is_err(),
            "int features cannot be averaged"
        );
    }
}

#[test]
fn subgraphs_and_k_hop_match_pyg() {
    for (name, d) in devices() {
        let path = GraphsTuple::builder(ints(&[0, 1, 2], &d), ints(&[1, 2, 3], &d))
            .nodes(floats(&[0.0, 1.0, 2.0, 3.0], [4], &d))
            .build()
            .unwrap();
        let s = path.subgraph(&[true, false, true, true]).unwrap();
        assert_eq!(s.graph.to_coo(), (vec![1], vec![2]), "{name}");
        assert_eq!(host_i64(s.node_ids), [0, 2, 3]);
        assert_eq!(host_i64(s.edge_ids), [2]);
        assert_eq!(
            host_f32(s.graph.node_tensor::<1>().unwrap()),
            [0.0, 2.0, 3.0]
        );
        assert!(path.subgraph(&[true]).is_err());
        // The example in PyG's `k_hop_subgraph` documentation.
        let g = GraphsTuple::from_coo(&[0, 1, 2, 3, 4, 5], &[2, 2, 4, 4, 6, 6], 7, &d).unwrap();
        let k = g.k_hop_subgraph(&[6], 2, Flow::SourceToTarget).unwrap();
        assert_eq!(host_i64(k.node_ids), [2, 3, 4, 5, 6], "{name}");
        assert_eq!(k.graph.to_coo(), (vec![0, 1, 2, 3], vec![2, 2, 4, 4]));
        assert_eq!(k.seed_positions, [4]);
        assert_eq!(host_i64(k.edge_ids), [2, 3, 4, 5]);
        let k = g.k_hop_subgraph(&[2, 4], 1, Flow::SourceToTarget).unwrap();
        assert_eq!(host_i64(k.node_ids), [0, 1, 2, 3, 4]);
        assert_eq!(k.seed_positions, [2, 4]);
        let k = g.k_hop_subgraph(&[2], 1, Flow::TargetToSource).unwrap();
        assert_eq!(host_i64(k.node_ids), [2, 4]);
        assert!(g.k_hop_subgraph(&[7], 1, Flow::SourceToTarget).is_err());
    }
}

#[test]
fn empty_graphs() {
    for (name, d) in devices() {
        let g = GraphsTuple::from_coo(&[], &[], 0, &d).unwrap();
        eprintln!("{name}: dense");
        assert_eq!(g.to_dense_adjacency().dims(), [0, 0]);
        eprintln!("{name}: from dense");
        let e = GraphsTuple::from_dense_adjacency(g.to_dense_adjacency()).unwrap();
        assert_eq!((e.sum_n_node(), e.sum_n_edge()), (0, 0));
        eprintln!("{name}: petgraph");
        assert_eq!(
            GraphsTuple::from_petgraph(&g.to_petgraph().unwrap(), &d)
                .unwrap()
                .sum_n_node(),
            0
        );
    }
}

/// Burn 0.22's wgpu backend corrupts later, unrelated results after a `select` or scatter on an
/// empty index (a reused buffer is read uninitialised). Fill the memory pool with non-zeros
/// first, so that such a read shows up, then run every operation on graphs without edges.
#[test]
fn graphs_without_edges_do_not_corrupt_later_results() {
    for (name, d) in devices() {
        let dirty = || {
            for k in 1..40usize {
                let _ = Tensor::<1, burn::tensor::Int>::ones([k], &d)
                    .mul_scalar(7)
                    .into_data();
                let _ = Tensor::<1>::ones([k], &d).mul_scalar(5.0).into_data();
            }
        };
        for n_node in [vec![0], vec![0, 1], vec![2, 0]] {
            let n = n_node.iter().sum::<i64>() as usize;
            let g = GraphsTuple::builder(ints(&[], &d), ints(&[], &d))
                .n_node(ints(&n_node, &d))
                .n_edge(ints(&vec![0; n_node.len()], &d))
                .num_nodes(n)
                .edges(floats(&[], [0], &d))
                .build()
                .unwrap();
            dirty();
            let l = g
                .add_self_loops(SelfLoops {
                    remove_existing: true,
                    fill: SelfLoopFill::Mean,
                })
                .unwrap();
            l.validate().unwrap();
            assert_eq!(host_i64(l.n_edge().clone()), n_node, "{name}");
            assert_eq!(host_f32(l.edge_tensor::<1>().unwrap()), vec![0.0; n]);
            dirty();
            assert_eq!(host_f32(g.to_dense_adjacency()), vec![0.0; n * n], "{name}");
            dirty();
            assert_eq!(host_i64(g.in_degree()), vec![0; n], "{name}");
            dirty();
            let b = batch(&[g.clone(), g.clone()]).unwrap();
            b.validate().unwrap();
            let c = b
                .coalesce(EdgeReduce::Max)
                .unwrap()
                .to_undirected(EdgeReduce::Sum)
                .unwrap();
            c.validate().unwrap();
            dirty();
            let p = c
                .pad_with_graphs(n * 2 + 1, 0, 2 * n_node.len() + 1)
                .unwrap()
                .zero_out_padding();
            p.validate().unwrap();
            assert_eq!(
                host_bool(p.node_mask()).iter().filter(|&&m| m).count(),
                2 * n,
                "{name}"
            );
            assert_eq!(mirror(&p.unpad_with_graphs()), mirror(&b));
            for part in b.unbatch() {
                part.validate().unwrap();
            }
            let s = g.subgraph(&vec![true; n]).unwrap();
            s.graph.validate().unwrap();
        }
    }
}

#[test]
fn fully_connected_graphs() {
    for (name, d) in devices() {
        let g = fully_connected_graph(&[3, 0, 2], false, &d);
        g.validate().unwrap();
        assert_eq!(host_i64(g.n_edge().clone()), [6, 0, 2], "{name}");
        assert_eq!(host_i64(g.in_degree()), [2, 2, 2, 1, 1]);
        assert_eq!(host_i64(g.out_degree()), [2, 2, 2, 1, 1]);
        assert!(g.is_sorted_by_receiver());
        let g = fully_connected_graph(&[3, 0, 2], true, &d);
        assert_eq!(host_i64(g.n_edge().clone()), [9, 0, 4]);
        assert_eq!(
            host_i64(g.receiver_offsets().unwrap().clone()),
            [0, 3, 6, 9, 11, 13]
        );
        g.with_nodes(Tensor::<2>::ones([5, 2], &d))
            .unwrap()
            .validate()
            .unwrap();
    }
}
