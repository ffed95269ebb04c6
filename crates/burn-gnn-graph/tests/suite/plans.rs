//! The plans a graph holds: what they plan, built once and shared, moved with the graph, and
//! gone from every graph whose edges change.

use std::panic::{AssertUnwindSafe, catch_unwind};

use burn_gnn_graph::GraphsTuple;
use burn_segment::Segments;

use crate::common::*;

/// Two graphs of 3 and 2 nodes; receivers unsorted, node 1 without incoming edges.
fn graph(device: &burn::tensor::Device) -> GraphsTuple {
    GraphsTuple::builder(
        ints(&[0, 2, 1, 0, 3, 4], device),
        ints(&[2, 0, 2, 0, 4, 3], device),
    )
    .n_node(ints(&[3, 2], device))
    .n_edge(ints(&[4, 2], device))
    .build()
    .expect("valid")
}

#[test]
fn a_graph_plans_its_receivers_senders_and_graph_ids() {
    for (name, device) in devices() {
        let g = graph(&device);
        let r = g.receiver_plan();
        assert_eq!((r.num_segments(), r.num_rows()), (5, 6), "{name}");
        assert_eq!(host_i64(r.count()), [2, 0, 2, 1, 1], "{name}");
        assert_eq!(host_i64(g.sender_plan().count()), [2, 1, 1, 1, 1], "{name}");
        assert_eq!(host_i64(g.node_graph_plan().count()), [3, 2], "{name}");
        assert_eq!(host_i64(g.edge_graph_plan().count()), [4, 2], "{name}");
        assert!(g.node_graph_plan().is_sorted(), "{name}");
        // A sum through the plan is the sum over the receivers.
        let x = floats(&[1.0, 2.0, 4.0, 8.0, 16.0, 32.0], [6, 1], &device);
        assert_eq!(host_f32(r.sum(x)), [10.0, 0.0, 5.0, 32.0, 16.0], "{name}");
    }
}

#[test]
fn a_plan_is_built_once_and_shared_by_the_graphs_clones() {
    let device = burn::tensor::Device::flex();
    let g = graph(&device);
    let first: *const _ = g.receiver_plan();
    let copy = g.clone();
    assert!(std::ptr::eq(first, copy.receiver_plan()));
    assert!(std::ptr::eq(first, g.receiver_plan()));
    // Features do not change the edges: the plan stays.
    let with_nodes = g
        .clone()
        .with_nodes(floats(&[0.0; 5], [5, 1], &device))
        .unwrap();
    assert!(std::ptr::eq(first, with_nodes.receiver_plan()));
}

#[test]
fn graphs_with_other_edges_plan_their_own() {
    let device = burn::tensor::Device::flex();
    let g = graph(&device);
    let before = host_i64(g.receiver_plan().count());
    let no_loops = g.remove_self_loops();
    assert_eq!(before, [2, 0, 2, 1, 1]);
    assert_eq!(host_i64(no_loops.receiver_plan().count()), [1, 0, 2, 1, 1]);
    let sorted = g.sort_by_receiver();
    assert!(sorted.receiver_plan().is_sorted() && !g.receiver_plan().is_sorted());
    assert_eq!(
        host_i64(sorted.receiver_offsets().unwrap().clone()),
        [0, 2, 2, 4, 5, 6]
    );
}

#[test]
fn a_moved_graph_keeps_its_plans_on_the_new_device() {
    let g = graph(&burn::tensor::Device::flex());
    let _ = g.receiver_plan();
    for (name, device) in devices() {
        let moved = g.to_device(&device);
        let plan = moved.receiver_plan();
        assert_eq!(plan.offsets().device(), device, "{name}");
        assert_eq!(host_i64(plan.count()), [2, 0, 2, 1, 1], "{name}");
    }
}

#[test]
fn an_unchecked_graph_with_a_bad_receiver_names_it_when_planned() {
    let device = burn::tensor::Device::flex();
    let g = GraphsTuple::builder(ints(&[0, 1], &device), ints(&[1, 7], &device))
        .num_nodes(3)
        .build_unchecked()
        .expect("shapes agree");
    let err = catch_unwind(AssertUnwindSafe(|| g.receiver_plan().num_rows()));
    let msg = *err.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("the graph's receivers: segment id 7 at position 1 is out of range"),
        "{msg}"
    );
}

#[test]
fn a_heterogeneous_graph_plans_each_relation_and_moves_its_plans() {
    use burn_gnn_graph::{EdgeType, HeteroGraph};
    let flex = burn::tensor::Device::flex();
    let writes = EdgeType::new("author", "writes", "paper");
    let g = HeteroGraph::builder(&flex)
        .node_set("author", 2)
        .node_set("paper", 3)
        .edge_set(
            writes.clone(),
            ints(&[1, 0, 1], &flex),
            ints(&[2, 2, 0], &flex),
        )
        .build()
        .expect("valid");
    let (s, r) = g.edge_plans(&writes).expect("the relation exists");
    assert_eq!((s.num_segments(), r.num_segments()), (2, 3));
    assert_eq!(host_i64(r.count()), [1, 0, 2]);
    for (name, device) in devices() {
        let moved = g.to_device(&device);
        let (s, r) = moved.edge_plans(&writes).expect("the relation exists");
        assert_eq!(r.offsets().device(), device, "{name}");
        assert_eq!(host_i64(s.count()), [1, 2], "{name}");
        assert_eq!(host_i64(r.count()), [1, 0, 2], "{name}");
    }
    assert!(
        g.edge_plans(&EdgeType::new("paper", "cites", "paper"))
            .is_none()
    );
}
