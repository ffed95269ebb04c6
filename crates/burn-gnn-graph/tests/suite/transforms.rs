//! The transforms as values (`transforms`): hand-worked cases for each, and chains (`Compose`,
//! `then`, closures) against the methods they wrap, on every backend.

use burn_gnn_graph::transforms::{
    AddSelfLoops, Connection, LargestConnectedComponent, NormalizeFeatures, RemoveIsolatedNodes,
    RemoveSelfLoops, ToUndirected,
};
use burn_gnn_graph::{
    Compose, EdgeReduce, GraphError, GraphsTuple, SelfLoopFill, SelfLoops, Transform, batch,
};

use crate::common::*;

fn edges(list: &[(usize, usize)], n: usize, device: &burn::tensor::Device) -> GraphsTuple {
    GraphsTuple::from_edge_list(list, n, device).unwrap()
}

#[test]
fn normalize_features_shifts_by_the_minimum_and_divides_by_the_clamped_row_sum() {
    for (name, device) in devices() {
        // min -1: shifted [[2,3],[0,1],[1.2,1.2],[0,0.5]], row sums 5, 1, 2.4, 0.5 (clamped to 1).
        let x = floats(&[1., 2., -1., 0., 0.2, 0.2, -1., -0.5], [4, 2], &device);
        let g = edges(&[(0, 1)], 4, &device).with_nodes(x).unwrap();
        let out = NormalizeFeatures.apply(&g).unwrap();
        let got = host_f32(out.node_tensor::<2>().unwrap());
        let want = [0.4, 0.6, 0., 1., 0.5, 0.5, 0., 0.5];
        for (a, b) in got.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{name}: {got:?}");
        }
        assert_eq!(out.to_coo(), g.to_coo());
        // No node features: a typed error.
        let bare = edges(&[(0, 1)], 2, &device);
        assert!(matches!(
            NormalizeFeatures.apply(&bare),
            Err(GraphError::InvalidArgument(_))
        ));
    }
}

#[test]
fn remove_isolated_nodes_keeps_touched_nodes_and_self_loops_per_graph() {
    for (name, device) in devices() {
        // Graph A: 3 nodes, 0 -> 1 (node 2 isolated); graph B: 2 nodes, a loop 0 -> 0 (node 1
        // isolated). Batched: nodes 0..5, edges 0 -> 1, 3 -> 3.
        let a = edges(&[(0, 1)], 3, &device);
        let b = edges(&[(0, 0)], 2, &device);
        let g = batch(&[a, b]).unwrap();
        let g = g
            .with_nodes(floats(&[10., 11., 12., 13., 14.], [5, 1], &device))
            .unwrap()
            .with_edges(floats(&[7., 8.], [2], &device))
            .unwrap();
        let out = RemoveIsolatedNodes.apply(&g).unwrap();
        assert_eq!(out.to_coo(), (vec![0, 2], vec![1, 2]), "{name}");
        assert_eq!(host_i64(out.n_node().clone()), [2, 1], "{name}");
        assert_eq!(host_i64(out.n_edge().clone()), [1, 1], "{name}");
        assert_eq!(host_f32(out.node_tensor::<2>().unwrap()), [10., 11., 13.]);
        assert_eq!(host_f32(out.edge_tensor::<1>().unwrap()), [7., 8.]);
        // Nothing isolated: unchanged.
        let full = edges(&[(0, 1), (1, 0)], 2, &device);
        assert_eq!(
            RemoveIsolatedNodes.apply(&full).unwrap().to_coo(),
            full.to_coo()
        );
    }
}

#[test]
fn largest_weak_component_by_size_then_smallest_node() {
    for (name, device) in devices() {
        // {0, 1, 2} by 0 -> 1 <- 2; {3, 4} by 4 -> 3; {5} alone.
        let g = edges(&[(0, 1), (2, 1), (4, 3)], 6, &device)
            .with_nodes(floats(&[0., 1., 2., 3., 4., 5.], [6, 1], &device))
            .unwrap();
        let one = LargestConnectedComponent::default().apply(&g).unwrap();
        assert_eq!(one.to_coo(), (vec![0, 2], vec![1, 1]), "{name}");
        assert_eq!(host_f32(one.node_tensor::<2>().unwrap()), [0., 1., 2.]);
        let two = LargestConnectedComponent {
            num_components: 2,
            ..Default::default()
        };
        let out = two.apply(&g).unwrap();
        assert_eq!(out.to_coo(), (vec![0, 2, 4], vec![1, 1, 3]), "{name}");
        assert_eq!(out.sum_n_node(), 5);
        // At most `num_components` components: unchanged.
        let three = LargestConnectedComponent {
            num_components: 3,
            ..Default::default()
        };
        assert_eq!(three.apply(&g).unwrap().sum_n_node(), 6);
        // A tie of sizes goes to the component with the smaller node: {0, 2} over {1, 3}.
        let tie = edges(&[(3, 1), (2, 0)], 4, &device)
            .with_nodes(floats(&[0., 1., 2., 3.], [4, 1], &device))
            .unwrap();
        let out = LargestConnectedComponent::default().apply(&tie).unwrap();
        assert_eq!(
            host_f32(out.node_tensor::<2>().unwrap()),
            [0., 2.],
            "{name}"
        );
        let zero = LargestConnectedComponent {
            num_components: 0,
            ..Default::default()
        };
        assert!(matches!(
            zero.apply(&g),
            Err(GraphError::InvalidArgument(_))
        ));
    }
}

#[test]
fn largest_strong_component_follows_edge_directions() {
    for (name, device) in devices() {
        // The cycle 0 -> 1 -> 2 -> 0, then 2 -> 3 and the 2-cycle 3 <-> 4: one weak
        // component, strong components {0, 1, 2} and {3, 4}.
        let list = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3)];
        let g = edges(&list, 5, &device);
        let strong = LargestConnectedComponent {
            num_components: 1,
            connection: Connection::Strong,
        };
        let out = strong.apply(&g).unwrap();
        assert_eq!(out.to_coo(), (vec![0, 1, 2], vec![1, 2, 0]), "{name}");
        let both = LargestConnectedComponent {
            num_components: 2,
            connection: Connection::Strong,
        };
        assert_eq!(both.apply(&g).unwrap().to_coo(), g.to_coo());
        let weak = LargestConnectedComponent::default();
        assert_eq!(weak.apply(&g).unwrap().to_coo(), g.to_coo());
    }
    // A path of 200 000 nodes: every node its own strong component (the walk is iterative, so
    // the depth cannot overflow the stack); the tie goes to node 0.
    let device = burn::tensor::Device::flex();
    let n = 200_000;
    let path: Vec<(usize, usize)> = (0..n - 1).map(|v| (v, v + 1)).collect();
    let g = edges(&path, n, &device);
    let strong = LargestConnectedComponent {
        num_components: 1,
        connection: Connection::Strong,
    };
    let out = strong.apply(&g).unwrap();
    assert_eq!((out.sum_n_node(), out.sum_n_edge()), (1, 0));
}

#[test]
fn compose_then_and_closures_chain_in_order() {
    for (name, device) in devices() {
        // 0 -> 1 with a loop 1 -> 1, edge weights 2 and 5; node 2 isolated.
        let g = edges(&[(0, 1), (1, 1)], 3, &device)
            .with_edges(floats(&[2., 5.], [2], &device))
            .unwrap();
        let loops = SelfLoops {
            remove_existing: true,
            fill: SelfLoopFill::Value(1.0),
        };
        let pipeline = Compose::new()
            .push(RemoveSelfLoops)
            .push(ToUndirected {
                reduce: EdgeReduce::Sum,
            })
            .push(AddSelfLoops { options: loops });
        assert_eq!(pipeline.len(), 3);
        let by_hand = g
            .remove_self_loops()
            .to_undirected(EdgeReduce::Sum)
            .unwrap()
            .add_self_loops(loops)
            .unwrap();
        let out = pipeline.apply(&g).unwrap();
        assert_eq!(out.to_coo(), by_hand.to_coo(), "{name}");
        // Worked out: 1 -> 0, 0 -> 1 (weight 2 both ways), then loops 0, 1, 2 (weight 1).
        assert_eq!(out.to_coo(), (vec![1, 0, 0, 1, 2], vec![0, 1, 0, 1, 2]));
        assert_eq!(
            host_f32(out.edge_tensor::<1>().unwrap()),
            [2., 2., 1., 1., 1.]
        );
        // `then` and a closure step; the order matters (isolated nodes go before the loops
        // would touch them).
        let chained = RemoveIsolatedNodes.then(AddSelfLoops::default());
        assert_eq!(chained.apply(&g).unwrap().sum_n_node(), 2, "{name}");
        let reversed = AddSelfLoops::default().then(RemoveIsolatedNodes);
        assert_eq!(reversed.apply(&g).unwrap().sum_n_node(), 3, "{name}");
        let reverse_edges = |g: &GraphsTuple| {
            let (s, r) = g.to_coo();
            let list: Vec<(usize, usize)> = r
                .iter()
                .zip(&s)
                .map(|(&a, &b)| (a as usize, b as usize))
                .collect();
            GraphsTuple::from_edge_list(&list, g.sum_n_node(), &g.device())
        };
        let out = Compose::new()
            .push(RemoveSelfLoops)
            .push(reverse_edges)
            .apply(&g)
            .unwrap();
        assert_eq!(out.to_coo(), (vec![1], vec![0]));
        // An empty Compose is the identity; an error stops the chain.
        assert_eq!(Compose::new().apply(&g).unwrap().to_coo(), g.to_coo());
        let failing = Compose::new().push(NormalizeFeatures).push(RemoveSelfLoops);
        assert!(matches!(
            failing.apply(&g),
            Err(GraphError::InvalidArgument(_))
        ));
    }
}
