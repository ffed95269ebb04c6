//! NeighborLoader: every sampled edge is a real edge, fan-outs are exact and without
//! replacement, seeds come first, epochs cover every seed once, draws are uniform and do not
//! depend on the number of threads.

use std::collections::{HashMap, HashSet};

use burn::tensor::{Device, Tensor, TensorData};
use burn_gnn_data::synthetic::erdos_renyi;
use burn_gnn_data::{DataError, InNeighbors, NeighborLoader, RandomPartitionLoader, SampledBatch};
use burn_gnn_graph::FeatureSetKind;

fn graph() -> (Vec<i64>, Vec<i64>, usize) {
    let g = erdos_renyi(400, 0.03, true, 7).unwrap();
    (g.senders, g.receivers, 400)
}

/// Checks one batch against the graph: real edges, exact fan-outs per layer, no repeats.
fn check_batch(b: &SampledBatch, edges: &HashSet<(i64, i64)>, indeg: &[usize], fanouts: &[usize]) {
    let mut layer: HashMap<i64, usize> = (0..b.num_seeds as i64).map(|l| (l, 0)).collect();
    let mut incoming: HashMap<i64, Vec<i64>> = HashMap::new();
    for (&s, &r) in b.senders.iter().zip(&b.receivers) {
        let (gs, gr) = (b.nodes[s as usize], b.nodes[r as usize]);
        assert!(
            edges.contains(&(gs, gr)),
            "sampled edge {gs} -> {gr} is not in the graph"
        );
        let lr = layer[&r];
        layer.entry(s).or_insert(lr + 1);
        incoming.entry(r).or_default().push(gs);
    }
    assert_eq!(
        layer.len(),
        b.nodes.len(),
        "every node is a seed or a sampled neighbour"
    );
    let unique: HashSet<i64> = b.nodes.iter().copied().collect();
    assert_eq!(unique.len(), b.nodes.len(), "nodes are distinct");
    for (local, &l) in &layer {
        let got = incoming.get(local).map_or(0, Vec::len);
        let want = if l < fanouts.len() {
            fanouts[l].min(indeg[b.nodes[*local as usize] as usize])
        } else {
            0
        };
        assert_eq!(
            got, want,
            "node {} (layer {l}) got {got} sampled neighbours",
            b.nodes[*local as usize]
        );
        if let Some(from) = incoming.get(local) {
            assert_eq!(
                from.iter().collect::<HashSet<_>>().len(),
                from.len(),
                "drawn without replacement"
            );
        }
    }
}

#[test]
fn batches_hold_real_edges_exact_fanouts_and_every_seed_once() {
    let (s, r, n) = graph();
    let edges: HashSet<(i64, i64)> = s.iter().copied().zip(r.iter().copied()).collect();
    let mut indeg = vec![0usize; n];
    r.iter().for_each(|&v| indeg[v as usize] += 1);
    let seeds: Vec<i64> = (0..n as i64).step_by(3).collect();
    let fanouts = vec![5, 3];
    let loader = NeighborLoader::new(
        InNeighbors::new(&s, &r, n).unwrap(),
        seeds.clone(),
        fanouts.clone(),
        16,
    )
    .unwrap()
    .with_seed(9);
    assert_eq!(loader.num_batches(), seeds.len().div_ceil(16));
    let mut seen = vec![];
    for b in loader.epoch(0) {
        assert!(b.num_seeds <= 16);
        seen.extend_from_slice(&b.nodes[..b.num_seeds]);
        check_batch(&b, &edges, &indeg, &fanouts);
    }
    seen.sort_unstable();
    assert_eq!(seen, seeds, "an epoch visits every seed once");
    // Another epoch: another order.
    let first = |e| loader.epoch(e).next().unwrap().nodes[..4].to_vec();
    assert_ne!(first(0), first(1));
}

#[test]
fn sampling_is_reproducible_and_independent_of_the_thread_count() {
    let (s, r, n) = graph();
    let loader = NeighborLoader::new(
        InNeighbors::new(&s, &r, n).unwrap(),
        (0..n as i64).collect(),
        vec![4, 4],
        64,
    )
    .unwrap()
    .with_seed(3);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| loader.epoch(2).collect::<Vec<_>>())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, loader.epoch(2).collect::<Vec<_>>());
}

#[test]
fn each_neighbour_is_drawn_with_probability_fanout_over_degree() {
    // Node 0 has 20 in-neighbours; drawing 5 of them, each should come up a quarter of the time.
    let senders: Vec<i64> = (1..=20).collect();
    let receivers = vec![0i64; 20];
    let loader = NeighborLoader::new(
        InNeighbors::new(&senders, &receivers, 21).unwrap(),
        vec![0],
        vec![5],
        1,
    )
    .unwrap();
    let trials = 4000;
    let mut count = [0usize; 21];
    for t in 0..trials {
        let b = loader.sample(&[0], 0, t);
        for &l in &b.senders {
            count[b.nodes[l as usize] as usize] += 1;
        }
    }
    let p = 0.25;
    let sigma = (trials as f64 * p * (1.0 - p)).sqrt();
    for (v, &c) in count.iter().enumerate().skip(1) {
        assert!(
            (c as f64 - trials as f64 * p).abs() < 5.0 * sigma,
            "neighbour {v} drawn {c} times of {trials}"
        );
    }
}

#[test]
fn batches_become_graphs_with_their_features_and_a_seed_flag() {
    let device = Device::flex();
    let (s, r, n) = graph();
    let x: Vec<f32> = (0..n * 2).map(|i| i as f32).collect();
    let x = Tensor::<2>::from_data(TensorData::new(x, [n, 2]), &device);
    let loader = NeighborLoader::new(
        InNeighbors::new(&s, &r, n).unwrap(),
        vec![5, 7, 11],
        vec![3, 2],
        3,
    )
    .unwrap();
    let b = loader.epoch(0).next().unwrap();
    let g = b.graph(&x, &device).unwrap();
    assert_eq!(
        (g.sum_n_node(), g.sum_n_edge()),
        (b.nodes.len(), b.num_edges())
    );
    let feats: Vec<f32> = g
        .node_tensor::<2>()
        .unwrap()
        .into_data()
        .iter::<f32>()
        .collect();
    for (i, &v) in b.nodes.iter().enumerate() {
        assert_eq!(feats[2 * i], 2.0 * v as f32);
    }
    let seed = g
        .feature(FeatureSetKind::Nodes, "seed")
        .unwrap()
        .int::<1>()
        .unwrap();
    let seed: Vec<i64> = seed.into_data().iter::<i64>().collect();
    assert_eq!(seed.iter().sum::<i64>(), 3);
    assert!(seed[..3].iter().all(|&f| f == 1));
}

#[test]
fn bad_arguments_are_typed_errors() {
    assert!(matches!(
        InNeighbors::new(&[0, 1], &[1], 2),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        InNeighbors::new(&[0, 5], &[1, 0], 2),
        Err(DataError::InvalidArgument(_))
    ));
    let g = InNeighbors::new(&[0], &[1], 2).unwrap();
    assert!(matches!(
        NeighborLoader::new(g.clone(), vec![2], vec![1], 1),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        NeighborLoader::new(g.clone(), vec![0], vec![], 1),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        NeighborLoader::new(g, vec![0], vec![1], 0),
        Err(DataError::InvalidArgument(_))
    ));
}

#[test]
fn random_partitions_cover_the_nodes_and_keep_exactly_the_inner_edges() {
    let (s, r, n) = graph();
    let loader = RandomPartitionLoader::new(InNeighbors::new(&s, &r, n).unwrap(), 7)
        .unwrap()
        .with_seed(4);
    let parts: Vec<SampledBatch> = loader.epoch(0).collect();
    assert_eq!(parts.len(), 7);
    let mut all: Vec<i64> = parts.iter().flat_map(|p| p.nodes.clone()).collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..n as i64).collect::<Vec<_>>(),
        "the parts partition the nodes"
    );
    let mut kept = 0;
    for p in &parts {
        let inside: HashSet<i64> = p.nodes.iter().copied().collect();
        let want: HashSet<(i64, i64)> = s
            .iter()
            .zip(&r)
            .filter(|(a, b)| inside.contains(a) && inside.contains(b))
            .map(|(&a, &b)| (a, b))
            .collect();
        let got: HashSet<(i64, i64)> = p
            .senders
            .iter()
            .zip(&p.receivers)
            .map(|(&a, &b)| (p.nodes[a as usize], p.nodes[b as usize]))
            .collect();
        assert_eq!(got, want, "a part keeps exactly its induced edges");
        assert_eq!(p.num_seeds, p.nodes.len());
        kept += got.len();
    }
    assert!(kept < s.len(), "edges between parts are dropped");
    assert_ne!(
        loader.epoch(0).next().unwrap().nodes,
        loader.epoch(1).next().unwrap().nodes,
        "epochs reshuffle"
    );
    assert!(matches!(
        RandomPartitionLoader::new(InNeighbors::new(&s, &r, n).unwrap(), 0),
        Err(DataError::InvalidArgument(_))
    ));
}

#[test]
fn hetero_batches_hold_real_edges_per_relation_and_exact_fanouts_at_the_seeds() {
    use burn_gnn_data::{Academic, AcademicConfig, HeteroNeighborLoader, HeteroNeighbors};
    use std::collections::BTreeMap;
    let a = Academic::generate(AcademicConfig {
        papers: 300,
        authors: 120,
        ..AcademicConfig::default()
    })
    .unwrap();
    let counts: BTreeMap<String, usize> = a
        .features
        .iter()
        .map(|(t, x)| (t.clone(), x.len() / a.config.features))
        .collect();
    let lists = HeteroNeighbors::new(counts.clone(), &a.edges).unwrap();
    let fanouts = vec![4, 3];
    let seeds: Vec<i64> = (0..300).step_by(2).collect();
    let loader = HeteroNeighborLoader::new(lists, "paper", seeds.clone(), fanouts.clone(), 32)
        .unwrap()
        .with_seed(5);
    let device = Device::flex();
    let x: BTreeMap<String, Tensor<2>> = a
        .features
        .iter()
        .map(|(t, v)| {
            (
                t.clone(),
                Tensor::<2>::from_data(TensorData::new(v.clone(), [v.len() / 32, 32]), &device),
            )
        })
        .collect();
    let mut visited = vec![];
    for b in loader.epoch(0) {
        visited.extend_from_slice(&b.nodes["paper"][..b.num_seeds]);
        for (et, s, r) in &a.edges {
            let real: HashSet<(i64, i64)> = s.iter().copied().zip(r.iter().copied()).collect();
            let mut indeg: HashMap<i64, usize> = HashMap::new();
            r.iter().for_each(|&v| *indeg.entry(v).or_default() += 1);
            let (ls, lr) = &b.edges[et];
            let mut into: HashMap<i64, Vec<i64>> = HashMap::new();
            for (&u, &v) in ls.iter().zip(lr) {
                let (gu, gv) = (b.nodes[&et.src][u as usize], b.nodes[&et.dst][v as usize]);
                assert!(
                    real.contains(&(gu, gv)),
                    "{et}: sampled {gu} -> {gv} is not an edge"
                );
                into.entry(gv).or_default().push(gu);
            }
            for (v, from) in &into {
                let d = indeg[v];
                assert!(
                    fanouts.iter().any(|&k| k.min(d) == from.len()),
                    "{et}: node {v} got {} of {d}",
                    from.len()
                );
                assert_eq!(
                    from.iter().collect::<HashSet<_>>().len(),
                    from.len(),
                    "{et}: without replacement"
                );
            }
            if et.dst == "paper" {
                for &v in &b.nodes["paper"][..b.num_seeds] {
                    let want = fanouts[0].min(indeg.get(&v).copied().unwrap_or(0));
                    assert_eq!(into.get(&v).map_or(0, Vec::len), want, "{et}: seed {v}");
                }
            }
        }
        let g = b.graph(&x, &device).unwrap();
        assert_eq!(g.num_nodes("paper"), b.nodes["paper"].len());
        assert_eq!(g.edge_types().len(), a.edges.len());
    }
    visited.sort_unstable();
    assert_eq!(visited, seeds);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(
        pool.install(|| loader.epoch(1).collect::<Vec<_>>()),
        loader.epoch(1).collect::<Vec<_>>()
    );
    assert!(matches!(
        HeteroNeighborLoader::new(
            HeteroNeighbors::new(counts, &a.edges).unwrap(),
            "book",
            vec![0],
            vec![1],
            1
        ),
        Err(DataError::InvalidArgument(_))
    ));
}
