//! `RandomNodeSplit` (PyG's three split schemes, seeded) and the splits as transforms at the
//! end of a chain: set sizes worked out by hand, disjointness, per-class counts, unlabelled
//! nodes in no set, and every bad argument as a typed error.

use burn::tensor::{Device, Int, Tensor};
use burn_gnn_data::{
    Amount, DataError, NodeSplit, RandomLinkSplit, RandomNodeSplit, TEST_MASK, TRAIN_MASK, VAL_MASK,
};
use burn_gnn_graph::transforms::{RemoveSelfLoops, ToUndirected};
use burn_gnn_graph::{FeatureSetKind, GraphError, GraphsTuple, Transform};

fn count(mask: &[bool]) -> usize {
    mask.iter().filter(|&&b| b).count()
}

fn labelled_graph(labels: &[i64], device: &Device) -> GraphsTuple {
    let y = Tensor::<1, Int>::from_ints(labels, device);
    GraphsTuple::from_edge_list(&[(0, 1)], labels.len(), device)
        .unwrap()
        .with_feature(FeatureSetKind::Nodes, Some("y"), Some(y.into()))
        .unwrap()
}

fn mask_of(g: &GraphsTuple, name: &str) -> Vec<bool> {
    let f = g
        .feature(FeatureSetKind::Nodes, name)
        .expect("mask written");
    f.to_data().iter::<i64>().map(|v| v == 1).collect()
}

#[test]
fn train_rest_draws_val_and_test_and_trains_on_the_rest() {
    let split = RandomNodeSplit::new(NodeSplit::TrainRest {
        val: Amount::Count(2),
        test: Amount::Ratio(0.3),
    })
    .with_seed(7);
    // 10 nodes, no labels: 2 val, round(0.3 * 10) = 3 test, 5 train, each node in one set.
    let m = split.masks(10, None).unwrap();
    assert_eq!((count(&m.train), count(&m.val), count(&m.test)), (5, 2, 3));
    for v in 0..10 {
        assert_eq!(
            m.train[v] as u8 + m.val[v] as u8 + m.test[v] as u8,
            1,
            "node {v}"
        );
    }
    // Labelled -1 nodes join no set, and ratios count labelled nodes only (8 here: 2 val,
    // round(2.4) = 2 test, 4 train).
    let y = [0, 1, -1, 0, 1, 0, -1, 1, 0, 1];
    let m = split.masks(10, Some(&y)).unwrap();
    assert_eq!((count(&m.train), count(&m.val), count(&m.test)), (4, 2, 2));
    assert!(!m.train[2] && !m.val[2] && !m.test[2] && !m.train[6] && !m.val[6] && !m.test[6]);
    // Seeded: the same seed gives the same masks, another seed other masks.
    assert_eq!(split.masks(10, Some(&y)).unwrap(), m);
    let big = RandomNodeSplit::new(NodeSplit::TrainRest {
        val: Amount::Count(30),
        test: Amount::Count(30),
    });
    assert_ne!(
        big.masks(100, None).unwrap(),
        big.clone().with_seed(1).masks(100, None).unwrap()
    );
}

#[test]
fn per_class_splits_take_the_count_of_every_class() {
    // Classes 0, 1, 2 with 4, 3 and 2 nodes; node 9 unlabelled.
    let y = [0, 0, 1, 2, 0, 1, 1, 2, 0, -1];
    let random = RandomNodeSplit::new(NodeSplit::Random {
        train_per_class: Amount::Count(2),
        val: Amount::Count(1),
        test: Amount::Count(2),
    });
    let m = random.masks(10, Some(&y)).unwrap();
    for c in 0..3 {
        let per_class = (0..10).filter(|&v| m.train[v] && y[v] == c).count();
        assert_eq!(per_class, 2, "class {c}");
    }
    // 6 train, 1 val, 2 test from the 3 labelled others; one labelled node is in no set.
    assert_eq!((count(&m.train), count(&m.val), count(&m.test)), (6, 1, 2));
    assert!(!m.train[9] && !m.val[9] && !m.test[9]);
    for v in 0..10 {
        assert!(m.train[v] as u8 + m.val[v] as u8 + m.test[v] as u8 <= 1);
    }
    // test_rest: every labelled non-train, non-val node tests; a ratio is of the class
    // (round(0.5 * 4) = 2, round(1.5) = 2, round(1.0) = 1: 5 train).
    let test_rest = RandomNodeSplit::new(NodeSplit::TestRest {
        train_per_class: Amount::Ratio(0.5),
        val: Amount::Count(1),
    });
    let m = test_rest.masks(10, Some(&y)).unwrap();
    assert_eq!((count(&m.train), count(&m.val), count(&m.test)), (5, 1, 3));
    // A class smaller than the count trains on all it has (PyG's behaviour).
    let greedy = RandomNodeSplit::new(NodeSplit::TestRest {
        train_per_class: Amount::Count(3),
        val: Amount::Count(0),
    });
    let m = greedy.masks(10, Some(&y)).unwrap();
    assert_eq!(count(&m.train), 3 + 3 + 2);
}

#[test]
fn bad_arguments_are_typed_errors() {
    let y = [0, 1, 0, 1];
    let invalid = |r: Result<_, DataError>| matches!(r, Err(DataError::InvalidArgument(_)));
    let too_many = RandomNodeSplit::new(NodeSplit::TrainRest {
        val: Amount::Count(3),
        test: Amount::Count(2),
    });
    assert!(invalid(too_many.masks(4, Some(&y))));
    let bad_ratio = RandomNodeSplit::new(NodeSplit::TrainRest {
        val: Amount::Ratio(1.5),
        test: Amount::Count(0),
    });
    assert!(invalid(bad_ratio.masks(4, None)));
    let per_class = RandomNodeSplit::new(NodeSplit::TestRest {
        train_per_class: Amount::Count(1),
        val: Amount::Count(1),
    });
    assert!(invalid(per_class.masks(4, None)));
    assert!(invalid(per_class.masks(5, Some(&y))));
    let random = RandomNodeSplit::new(NodeSplit::Random {
        train_per_class: Amount::Count(1),
        val: Amount::Count(1),
        test: Amount::Count(2),
    });
    assert!(invalid(random.masks(4, Some(&y))));
    // As a transform: float labels are refused, the DataError inside GraphError::Step.
    let device = Device::flex();
    let g = GraphsTuple::from_edge_list(&[(0, 1)], 2, &device)
        .unwrap()
        .with_feature(
            FeatureSetKind::Nodes,
            Some("y"),
            Some(Tensor::<1>::from_floats([0.0, 1.0], &device).into()),
        )
        .unwrap();
    match per_class.apply(&g) {
        Err(GraphError::Step { step, source }) => {
            assert_eq!(step, "RandomNodeSplit");
            assert!(source.downcast_ref::<DataError>().is_some());
        }
        other => panic!("expected a Step error, got {other:?}"),
    }
}

#[test]
fn the_node_split_writes_masks_and_the_link_split_ends_a_chain() {
    let device = Device::flex();
    let g = labelled_graph(&[0, 0, 0, 1, 1, 1, -1], &device);
    let split = RandomNodeSplit::new(NodeSplit::TestRest {
        train_per_class: Amount::Count(1),
        val: Amount::Count(2),
    })
    .with_seed(3);
    let out = split.apply(&g).unwrap();
    let want = split.masks(7, Some(&[0, 0, 0, 1, 1, 1, -1])).unwrap();
    assert_eq!(mask_of(&out, TRAIN_MASK), want.train);
    assert_eq!(mask_of(&out, VAL_MASK), want.val);
    assert_eq!(mask_of(&out, TEST_MASK), want.test);
    assert_eq!(
        (count(&want.train), count(&want.val), count(&want.test)),
        (2, 2, 2)
    );
    // A ring of 20 nodes with self loops: the chain drops the loops and doubles the edges
    // before the link split sees them, exactly as calling each step by hand.
    let mut list: Vec<(usize, usize)> = (0..20).map(|v| (v, (v + 1) % 20)).collect();
    list.extend((0..20).map(|v| (v, v)));
    let ring = GraphsTuple::from_edge_list(&list, 20, &device).unwrap();
    let link = RandomLinkSplit::new(0.1, 0.2)
        .with_undirected(true)
        .with_seed(5);
    let chained = RemoveSelfLoops
        .then(ToUndirected::default())
        .then(link.clone())
        .apply(&ring)
        .unwrap();
    let by_hand = link
        .split_graph(
            &ring
                .remove_self_loops()
                .to_undirected(Default::default())
                .unwrap(),
        )
        .unwrap();
    assert_eq!(chained.train, by_hand.train);
    assert_eq!(chained.val, by_hand.val);
    assert_eq!(chained.test, by_hand.test);
    // 20 undirected pairs, 20 % of them tested, each pair once.
    assert_eq!(chained.test.pos_senders.len(), 4);
}
