//! HeteroGraph: validation, batching, padding, homogeneous round trips and serde, on every
//! backend of the suite.

use std::collections::{BTreeMap, BTreeSet};

use burn::tensor::Device;
use burn_gnn_graph::{
    EDGE_TYPE, EdgeType, FeatureSetKind, GraphError, HeteroGraph, HeteroGraphData, NODE_TYPE,
};

use crate::common::*;

fn writes() -> EdgeType {
    EdgeType::new("author", "writes", "paper")
}
fn cites() -> EdgeType {
    EdgeType::new("paper", "cites", "paper")
}
fn published() -> EdgeType {
    EdgeType::new("paper", "published_in", "venue")
}
fn sponsors() -> EdgeType {
    EdgeType::new("venue", "sponsors", "author")
}

const TYPES: [&str; 3] = ["author", "paper", "venue"];

/// Feature code of a node: unique per (type, graph, local index), exact in f32.
fn code(t: usize, graph: usize, local: usize) -> f32 {
    (t * 10_000 + graph * 100 + local) as f32
}

/// One random graph (`graph` is its position, used in the codes). `sponsors` never has edges.
fn random_graph(seed: u64, graph: usize, device: &Device) -> HeteroGraph {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m.max(1) as u64) as usize
    };
    let sizes = [next(4), 1 + next(5), next(3)];
    let mut b = HeteroGraph::builder(device);
    for (t, name) in TYPES.iter().enumerate() {
        let x: Vec<f32> = (0..sizes[t])
            .flat_map(|i| [code(t, graph, i), (i % 3) as f32])
            .collect();
        b = b
            .node_set(*name, sizes[t])
            .node_features(*name, floats(&x, [sizes[t], 2], device));
    }
    for (et, (s, d)) in [
        (writes(), (0, 1)),
        (cites(), (1, 1)),
        (published(), (1, 2)),
        (sponsors(), (2, 0)),
    ] {
        let count = if et == sponsors() || sizes[s] == 0 || sizes[d] == 0 {
            0
        } else {
            next(6)
        };
        let senders: Vec<i64> = (0..count).map(|_| next(sizes[s]) as i64).collect();
        let receivers: Vec<i64> = (0..count).map(|_| next(sizes[d]) as i64).collect();
        let w: Vec<f32> = (0..count).map(|i| i as f32 + 0.5).collect();
        b = b
            .edge_list(et.clone(), &senders, &receivers)
            .edge_features(et, floats(&w, [count, 1], device));
    }
    b.context(floats(&[graph as f32, 1.0], [1, 2], device))
        .build()
        .expect("a valid random graph")
}

/// `(sender code, receiver code, edge type)` of every edge, from a heterogeneous graph.
fn hetero_triples(g: &HeteroGraph) -> BTreeSet<(i64, i64, usize)> {
    let codes: BTreeMap<String, Vec<f32>> = g
        .x_dict()
        .into_iter()
        .map(|(t, x)| {
            let v = host_f32(x);
            (t, v.chunks(2).map(|c| c[0]).collect())
        })
        .collect();
    let mut out = BTreeSet::new();
    for (k, et) in g.edge_types().iter().enumerate() {
        let s = g.edge_set(et).unwrap();
        for (a, b) in host_i64(s.senders().clone())
            .into_iter()
            .zip(host_i64(s.receivers().clone()))
        {
            out.insert((
                codes[&et.src][a as usize] as i64,
                codes[&et.dst][b as usize] as i64,
                k,
            ));
        }
    }
    out
}

#[test]
fn hetero_builder_reports_typed_errors() {
    let device = Device::flex();
    let base = || {
        HeteroGraph::builder(&device)
            .node_set("author", 2)
            .node_set("paper", 3)
    };
    let err = base()
        .edge_list(EdgeType::new("author", "writes", "book"), &[0], &[0])
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InSet { error, .. } if matches!(**error, GraphError::UnknownNodeType(ref t) if t == "book")),
        "{err}"
    );
    let err = base()
        .edge_list(writes(), &[0, 2], &[1, 1])
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "edge set (author, writes, paper): senders[1] = 2 is out of range: the graph has 2 nodes"
    );
    let err = base()
        .node_features("paper", floats(&[0.0; 4], [2, 2], &device))
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("node set `paper`: node feature `main` has 2 rows"),
        "{err}"
    );
    // Two graphs: an edge from the first graph's author to the second graph's paper.
    let err = base()
        .n_node("author", ints(&[1, 1], &device))
        .n_node("paper", ints(&[1, 2], &device))
        .edge_list(writes(), &[0], &[2])
        .n_edge(writes(), ints(&[1, 0], &device))
        .build()
        .unwrap_err();
    assert!(
        matches!(&err, GraphError::InSet { error, .. } if matches!(**error, GraphError::EdgeCrossesGraphs { .. })),
        "{err}"
    );
    let err = base()
        .n_node("venue", ints(&[1], &device))
        .build()
        .unwrap_err();
    assert!(
        matches!(err, GraphError::UnknownNodeType(ref t) if t == "venue"),
        "{err}"
    );
}

#[test]
fn hetero_batch_unbatch_round_trip_and_offsets() {
    for (name, device) in devices() {
        let graphs: Vec<HeteroGraph> = (0..4)
            .map(|g| random_graph(g as u64 + 3, g, &device))
            .collect();
        let batch = HeteroGraph::batch(&graphs).unwrap();
        batch.validate().unwrap();
        assert_eq!(batch.n_graph(), 4, "{name}");
        for t in TYPES {
            assert_eq!(
                batch.num_nodes(t),
                graphs.iter().map(|g| g.num_nodes(t)).sum::<usize>(),
                "{name} {t}"
            );
        }
        // Offsets: every edge of the batch joins the same coded endpoints as in its graph.
        let want: BTreeSet<_> = graphs.iter().flat_map(hetero_triples).collect();
        assert_eq!(hetero_triples(&batch), want, "{name}: batched edges");
        let back = batch.unbatch();
        assert_eq!(back.len(), 4);
        for (a, b) in back.iter().zip(&graphs) {
            assert_eq!(
                a.to_data().unwrap(),
                b.to_data().unwrap(),
                "{name}: unbatch"
            );
        }
        let other = HeteroGraph::builder(&device)
            .node_set("author", 1)
            .build()
            .unwrap();
        assert!(matches!(
            HeteroGraph::batch(&[graphs[0].clone(), other]),
            Err(GraphError::HeteroMismatch(_))
        ));
    }
}

#[test]
fn hetero_padding_is_exact_and_reversible() {
    for (name, device) in devices() {
        let graphs: Vec<HeteroGraph> = (0..2)
            .map(|g| random_graph(g as u64 + 11, g, &device))
            .collect();
        let g = HeteroGraph::batch(&graphs).unwrap();
        let n_node: BTreeMap<String, usize> = TYPES
            .iter()
            .map(|t| (t.to_string(), g.num_nodes(t) + 3))
            .collect();
        let n_edge = BTreeMap::from([(cites(), g.num_edges(&cites()) + 4), (sponsors(), 2)]);
        let p = g.pad_with_graphs(&n_node, &n_edge, 4).unwrap();
        p.validate().unwrap();
        assert_eq!(
            (
                p.n_graph(),
                p.num_nodes("paper"),
                p.num_edges(&cites()),
                p.num_edges(&sponsors())
            ),
            (4, n_node["paper"], n_edge[&cites()], 2)
        );
        assert_eq!(
            host_bool(p.graph_mask()),
            [true, true, false, false],
            "{name}"
        );
        let mask = host_bool(p.node_mask("paper").unwrap());
        assert_eq!(mask.iter().filter(|&&m| !m).count(), 3, "{name}");
        let emask = host_bool(p.edge_mask(&cites()).unwrap());
        assert_eq!(emask.iter().filter(|&&m| !m).count(), 4, "{name}");
        assert_eq!(
            p.unpad_with_graphs().to_data().unwrap(),
            g.to_data().unwrap(),
            "{name}"
        );
        // Errors: below the size; edges without a padding node of their source type.
        assert!(matches!(
            g.pad_with_graphs(&n_node, &n_edge, 1),
            Err(GraphError::Padding(_))
        ));
        let no_author = BTreeMap::from([("paper".to_string(), g.num_nodes("paper") + 1)]);
        let err = g
            .pad_with_graphs(
                &no_author,
                &BTreeMap::from([(writes(), g.num_edges(&writes()) + 1)]),
                3,
            )
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("padding node of types `author` and `paper`"),
            "{err}"
        );
    }
}

#[test]
fn hetero_to_homogeneous_keeps_every_edge_and_comes_back() {
    for (name, device) in devices() {
        let graphs: Vec<HeteroGraph> = (0..3)
            .map(|g| random_graph(g as u64 + 21, g, &device))
            .collect();
        let g = HeteroGraph::batch(&graphs).unwrap();
        let h = g.to_homogeneous().unwrap();
        h.validate().unwrap();
        let total: usize = TYPES.iter().map(|t| g.num_nodes(t)).sum();
        assert_eq!((h.sum_n_node(), h.n_graph()), (total, 3), "{name}");
        let x = host_f32(h.node_tensor::<2>().unwrap());
        let codes: Vec<i64> = x.chunks(2).map(|c| c[0] as i64).collect();
        let types = host_i64(
            h.feature(FeatureSetKind::Nodes, NODE_TYPE)
                .unwrap()
                .int::<1>()
                .unwrap(),
        );
        assert!(
            codes.iter().zip(&types).all(|(c, t)| c / 10_000 == *t),
            "{name}: node types"
        );
        let et = host_i64(
            h.feature(FeatureSetKind::Edges, EDGE_TYPE)
                .unwrap()
                .int::<1>()
                .unwrap(),
        );
        let (s, r) = h.to_coo();
        let homo: BTreeSet<(i64, i64, usize)> = s
            .iter()
            .zip(&r)
            .zip(&et)
            .map(|((&a, &b), &k)| (codes[a as usize], codes[b as usize], k as usize))
            .collect();
        assert_eq!(homo, hetero_triples(&g), "{name}: homogeneous edges");
        // Features by type ⇄ rows of the homogeneous graph.
        let rows = g.nodes_to_homogeneous(&g.x_dict()).unwrap();
        assert_eq!(host_f32(rows.clone()), x, "{name}: nodes_to_homogeneous");
        let split = g.nodes_from_homogeneous(rows).unwrap();
        for (t, xt) in g.x_dict() {
            assert_eq!(
                host_f32(split[&t].clone()),
                host_f32(xt),
                "{name}: nodes_from_homogeneous {t}"
            );
        }
        let (node_types, edge_types) = g.metadata();
        let back = HeteroGraph::from_homogeneous(&h, &node_types, &edge_types).unwrap();
        assert_eq!(
            back.to_data().unwrap(),
            g.to_data().unwrap(),
            "{name}: round trip"
        );
        let wrong = [
            edge_types[1].clone(),
            edge_types[0].clone(),
            edge_types[2].clone(),
            edge_types[3].clone(),
        ];
        assert!(
            HeteroGraph::from_homogeneous(&h, &node_types, &wrong).is_err(),
            "{name}: mislabelled edge types"
        );
    }
}

#[test]
fn hetero_data_round_trips_through_json_and_bytes() {
    let device = Device::flex();
    let g =
        HeteroGraph::batch(&[random_graph(5, 0, &device), random_graph(6, 1, &device)]).unwrap();
    let data = g.to_data().unwrap();
    let json = data.to_json().unwrap();
    assert_eq!(
        HeteroGraph::from_data(&HeteroGraphData::from_json(&json).unwrap(), &device)
            .unwrap()
            .to_data()
            .unwrap(),
        data
    );
    let bytes = data.to_bytes().unwrap();
    assert_eq!(HeteroGraphData::from_bytes(&bytes).unwrap(), data);
    assert!(matches!(
        HeteroGraphData::from_bytes(&bytes[..bytes.len() / 2]),
        Err(GraphError::Decode(_))
    ));
    assert!(matches!(
        HeteroGraphData::from_bytes(b"BGNNGRF\0\x01"),
        Err(GraphError::Decode(_))
    ));
    let mut bad = data.clone();
    bad.edge_sets[0].senders[0] = 1_000;
    assert!(matches!(
        HeteroGraph::from_data(&bad, &device),
        Err(GraphError::InSet { .. })
    ));
    let moved = g.to_device(&Device::flex().autodiff());
    assert_eq!(moved.to_data().unwrap(), data);
}
