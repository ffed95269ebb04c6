//! Conversions and saving/loading, hand-computed, on every device.

use burn_gnn_graph::petgraph::graph::{DiGraph, UnGraph};
use burn_gnn_graph::{Csr, GraphData, GraphError, GraphsTuple};

use crate::common::*;

#[test]
fn coo_csr_and_dense_adjacency() {
    for (name, d) in devices() {
        let g = GraphsTuple::from_edge_list(&[(2, 0), (0, 1), (0, 2)], 3, &d).unwrap();
        assert_eq!(g.to_coo(), (vec![2, 0, 0], vec![0, 1, 2]), "{name}");
        let (csr, order) = g.to_csr();
        assert_eq!(
            csr,
            Csr {
                indptr: vec![0, 2, 2, 3],
                indices: vec![1, 2, 0]
            }
        );
        assert_eq!(order, [1, 2, 0]);
        assert_eq!(
            GraphsTuple::from_csr(&csr, &d).unwrap().to_coo(),
            (vec![0, 0, 2], vec![1, 2, 0])
        );
        for bad in [
            Csr {
                indptr: vec![],
                indices: vec![],
            },
            Csr {
                indptr: vec![1, 1],
                indices: vec![0],
            },
            Csr {
                indptr: vec![0, 2, 1],
                indices: vec![0],
            },
            Csr {
                indptr: vec![0, 1],
                indices: vec![3],
            },
        ] {
            assert!(GraphsTuple::from_csr(&bad, &d).is_err(), "{bad:?}");
        }
        assert!(GraphsTuple::from_edge_list(&[(0, 3)], 3, &d).is_err());
        let adj = floats(&[0.0, 2.0, 3.0, 0.0], [2, 2], &d);
        let g = GraphsTuple::from_dense_adjacency(adj).unwrap();
        assert_eq!(g.to_coo(), (vec![0, 1], vec![1, 0]));
        assert_eq!(host_f32(g.edge_tensor::<1>().unwrap()), [2.0, 3.0]);
        assert_eq!(host_f32(g.to_dense_adjacency()), [0.0, 2.0, 3.0, 0.0]);
        // Duplicate edges add up; without weights every edge counts 1.
        let dup = GraphsTuple::from_edge_list(&[(0, 1), (0, 1), (1, 1)], 2, &d).unwrap();
        assert_eq!(
            host_f32(dup.to_dense_adjacency()),
            [0.0, 2.0, 0.0, 1.0],
            "{name}"
        );
        assert!(GraphsTuple::from_dense_adjacency(floats(&[0.0; 2], [1, 2], &d)).is_err());
    }
}

#[test]
fn petgraph_round_trip() {
    for (name, d) in devices() {
        let mut pg = DiGraph::<[f32; 2], f32>::new();
        let n: Vec<_> = (0..3)
            .map(|i| pg.add_node([i as f32, -(i as f32)]))
            .collect();
        pg.add_edge(n[0], n[1], 0.5);
        pg.add_edge(n[2], n[0], 1.5);
        let g = GraphsTuple::from_petgraph(&pg, &d).unwrap();
        assert_eq!(g.to_coo(), (vec![0, 2], vec![1, 0]), "{name}");
        assert_eq!(
            host_f32(g.node_tensor::<2>().unwrap()),
            [0.0, 0.0, 1.0, -1.0, 2.0, -2.0]
        );
        assert_eq!(host_f32(g.edge_tensor::<2>().unwrap()), [0.5, 1.5]);
        let back = g.to_petgraph().unwrap();
        assert_eq!(back.node_count(), 3);
        assert_eq!(back.raw_nodes()[2].weight, vec![2.0, -2.0]);
        assert_eq!(back.raw_edges()[1].weight, vec![1.5]);
        assert_eq!(
            (
                back.raw_edges()[1].source().index(),
                back.raw_edges()[1].target().index()
            ),
            (2, 0)
        );
        // Undirected: both directions, self loops once; () weights give no features.
        let mut ug = UnGraph::<(), ()>::new_undirected();
        let m: Vec<_> = (0..2).map(|_| ug.add_node(())).collect();
        ug.add_edge(m[0], m[1], ());
        ug.add_edge(m[1], m[1], ());
        let g = GraphsTuple::from_petgraph(&ug, &d).unwrap();
        assert_eq!(g.to_coo(), (vec![0, 1, 1], vec![1, 0, 1]));
        assert!(g.nodes().is_none() && g.edges().is_none());
        let mut ragged = DiGraph::<Vec<f32>, ()>::new();
        ragged.add_node(vec![1.0]);
        ragged.add_node(vec![1.0, 2.0]);
        assert!(
            GraphsTuple::from_petgraph(&ragged, &d)
                .unwrap_err()
                .to_string()
                .contains("one width")
        );
    }
}

#[test]
fn save_and_load_json_and_binary() {
    let dir = std::env::temp_dir().join(format!("burn-gnn-graph-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, d) in devices() {
        let data = graph_data(
            vec![3, 0, 2],
            vec![vec![(0, 1, 1), (2, 2, 3)], vec![], vec![(1, 0, 2)]],
            vec![1, -3, 5],
        );
        let g = build(&data, &d).pad_with_graphs(7, 5, 5).unwrap();
        let m = mirror(&g);
        for file in ["g.json", "g.bin"] {
            let path = dir.join(file);
            g.to_graph_data().unwrap().save(&path).unwrap();
            let loaded =
                GraphsTuple::from_graph_data(&GraphData::load(&path).unwrap(), &d).unwrap();
            assert_eq!(mirror(&loaded), m, "{name} {file}");
            assert_eq!(
                host_bool(loaded.graph_mask()),
                [true, true, true, false, false]
            );
        }
        // JSON cannot hold NaN: an error, not a silent null. The binary form keeps it.
        let nan = g
            .clone()
            .with_nodes(floats(&[f32::NAN; 7], [7], &d))
            .unwrap()
            .to_graph_data()
            .unwrap();
        assert!(matches!(nan.to_json(), Err(GraphError::NonFiniteJson(_))));
        let back = GraphData::from_bytes(&nan.to_bytes().unwrap()).unwrap();
        assert!(
            values_f64(back.nodes.main.as_ref().unwrap())
                .iter()
                .all(|x| x.is_nan())
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn corrupt_data_is_an_error_not_a_panic() {
    let d = &devices()[0].1;
    let data = graph_data(
        vec![3, 2],
        vec![vec![(0, 1, 1), (2, 2, 3)], vec![(1, 0, 2)]],
        vec![1, -3, 5],
    );
    let bytes = data.to_bytes().unwrap();
    for cut in 0..bytes.len() {
        assert!(
            GraphData::from_bytes(&bytes[..cut]).is_err(),
            "truncated at {cut}"
        );
    }
    let mut wrong = bytes.clone();
    wrong[8] = 9;
    assert!(
        GraphData::from_bytes(&wrong)
            .unwrap_err()
            .to_string()
            .contains("format version 9")
    );
    assert!(
        GraphData::from_bytes(b"PNG....")
            .unwrap_err()
            .to_string()
            .contains("magic")
    );
    assert!(GraphData::from_json("{\"senders\": [").is_err());
    // Decodes, but is not a valid graph.
    let mut bad = data.clone();
    bad.receivers[0] = 9;
    assert!(matches!(
        GraphsTuple::from_graph_data(&bad, d),
        Err(GraphError::NodeIndexOutOfRange { .. })
    ));
    let mut bad = data.clone();
    bad.nodes.main.as_mut().unwrap().shape = vec![5, 3];
    assert!(matches!(
        GraphsTuple::from_graph_data(&bad, d),
        Err(GraphError::Decode(_))
    ));
    let mut bad = data.clone();
    bad.nodes.main.as_mut().unwrap().shape = vec![usize::MAX, 3];
    assert!(matches!(
        GraphsTuple::from_graph_data(&bad, d),
        Err(GraphError::Decode(_))
    ));
    let mut bad = data;
    bad.padding = vec![true];
    assert!(matches!(
        GraphsTuple::from_graph_data(&bad, d),
        Err(GraphError::Decode(_))
    ));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Random byte edits of a valid file decode to an error or to data that either builds a
    /// valid graph or is rejected with an error: never a panic.
    #[test]
    fn mutated_binary_files_never_panic(edits in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 1..6)) {
        let d = &devices()[0].1;
        let data = graph_data(vec![3, 2], vec![vec![(0, 1, 1), (2, 2, 3)], vec![(1, 0, 2)]], vec![1, -3, 5]);
        let mut bytes = data.to_bytes().unwrap();
        for (at, value) in edits {
            let i = at % bytes.len();
            bytes[i] = value;
        }
        if let Ok(decoded) = GraphData::from_bytes(&bytes)
            && let Ok(g) = GraphsTuple::from_graph_data(&decoded, d)
        {
            g.validate().unwrap();
        }
    }
}
