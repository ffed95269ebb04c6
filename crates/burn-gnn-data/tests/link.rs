//! Link prediction data: negatives are never edges, stay in their graph, are distinct and
//! uniform; splits are disjoint, complete and keep undirected pairs together (PyG's
//! `RandomLinkSplit` semantics); everything is seeded and thread-count independent.

use std::collections::{HashMap, HashSet};

use burn::tensor::{Device, Tensor, TensorData};
use burn_gnn_data::synthetic::erdos_renyi;
use burn_gnn_data::{
    DataError, NegativeMethod, NegativeSampler, NegativeSampling, RandomLinkSplit,
    negative_sampling, structured_negative_sampling,
};
use burn_gnn_graph::{GraphsTuple, batch};
use proptest::prelude::*;

const METHODS: [NegativeMethod; 3] = [
    NegativeMethod::Auto,
    NegativeMethod::Sparse,
    NegativeMethod::Dense,
];

fn options(method: NegativeMethod, self_loops: bool, undirected: bool) -> NegativeSampling {
    NegativeSampling {
        method,
        self_loops,
        undirected,
    }
}

/// Edges of a batch of graphs given as (nodes, local edges), in global ids, and the graph of
/// each node.
fn batch_edges(graphs: &[(usize, Vec<(i64, i64)>)]) -> (Vec<i64>, Vec<i64>, Vec<usize>) {
    let (mut s, mut r, mut graph_of) = (Vec::new(), Vec::new(), Vec::new());
    for (g, (n, edges)) in graphs.iter().enumerate() {
        let offset = graph_of.len() as i64;
        for &(u, v) in edges {
            s.push(u + offset);
            r.push(v + offset);
        }
        graph_of.extend(std::iter::repeat_n(g, *n));
    }
    (s, r, graph_of)
}

fn arb_batch() -> impl Strategy<Value = Vec<(usize, Vec<(i64, i64)>)>> {
    prop::collection::vec(
        (1usize..12).prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((0..n as i64, 0..n as i64), 0..3 * n),
            )
        }),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every negative is a non-edge inside its own graph, distinct, and as many as asked.
    #[test]
    fn negatives_avoid_edges_and_stay_in_their_graph(
        graphs in arb_batch(),
        want in 0usize..40,
        self_loops in any::<bool>(),
        undirected in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let (s, r, graph_of) = batch_edges(&graphs);
        let n_node: Vec<usize> = graphs.iter().map(|g| g.0).collect();
        let edges: HashSet<(i64, i64)> = s.iter().copied().zip(r.iter().copied()).collect();
        for method in METHODS {
            let sampler =
                NegativeSampler::new(&s, &r, &n_node, options(method, self_loops, undirected))
                    .unwrap();
            let available = sampler.available();
            // Brute force: the free pairs of each graph.
            for (g, &n) in n_node.iter().enumerate() {
                let offset = graph_of.iter().position(|&x| x == g).unwrap() as i64;
                let mut free = 0u64;
                for u in offset..offset + n as i64 {
                    for v in offset..offset + n as i64 {
                        let taken = edges.contains(&(u, v))
                            || (undirected && (v < u || edges.contains(&(v, u))))
                            || (!self_loops && u == v);
                        free += u64::from(!taken);
                    }
                }
                prop_assert_eq!(available[g], free);
            }
            let counts: Vec<usize> = available.iter().map(|&a| want.min(a as usize)).collect();
            let (ns, nr) = sampler.sample_per_graph(&counts, seed).unwrap();
            prop_assert_eq!(ns.len(), counts.iter().sum::<usize>());
            let mut seen = HashSet::new();
            let mut per_graph = vec![0usize; n_node.len()];
            for (&u, &v) in ns.iter().zip(&nr) {
                let g = graph_of[u as usize];
                prop_assert_eq!(g, graph_of[v as usize], "{} -> {} crosses graphs", u, v);
                per_graph[g] += 1;
                prop_assert!(!edges.contains(&(u, v)), "{} -> {} is an edge", u, v);
                prop_assert!(self_loops || u != v);
                if undirected {
                    prop_assert!(u <= v && !edges.contains(&(v, u)));
                }
                prop_assert!(seen.insert((u, v)), "{} -> {} drawn twice", u, v);
            }
            prop_assert_eq!(&per_graph, &counts);
            if let Some(g) = available.iter().position(|&a| (a as usize) < want) {
                let err = sampler.sample(want, seed).unwrap_err();
                let too_dense = matches!(err, DataError::TooDense { graph, .. } if graph == g);
                prop_assert!(too_dense, "{}", err);
            }
        }
    }
}

/// Each free pair is drawn with the same probability (a chi-square test per method).
#[test]
fn negatives_are_uniform() {
    // A directed 4-cycle plus 0 -> 2: 16 - 4 - 5 = 7 free pairs.
    let (s, r) = ([0, 1, 2, 3, 0], [1, 2, 3, 0, 2]);
    for method in METHODS {
        let sampler = NegativeSampler::new(&s, &r, &[4], options(method, false, false)).unwrap();
        assert_eq!(sampler.available(), [7]);
        let mut counts: HashMap<(i64, i64), usize> = HashMap::new();
        let draws = 14_000;
        for seed in 0..draws / 2 {
            let (ns, nr) = sampler.sample(2, seed).unwrap();
            for p in ns.into_iter().zip(nr) {
                *counts.entry(p).or_default() += 1;
            }
        }
        assert_eq!(counts.len(), 7, "{method:?}: {counts:?}");
        let expect = draws as f64 / 7.0;
        let chi2: f64 = counts
            .values()
            .map(|&c| (c as f64 - expect).powi(2) / expect)
            .sum();
        // 6 degrees of freedom: P(chi2 > 22.5) = 0.001.
        assert!(chi2 < 22.5, "{method:?}: chi2 = {chi2}, counts {counts:?}");
    }
}

/// Asking for every free pair gives exactly the complement of the edges.
#[test]
fn all_free_pairs_is_the_complement() {
    let g = erdos_renyi(30, 0.3, true, 3).unwrap();
    let edges: HashSet<(i64, i64)> = g.senders.iter().copied().zip(g.receivers.clone()).collect();
    for undirected in [false, true] {
        let opts = options(NegativeMethod::Dense, false, undirected);
        let sampler = NegativeSampler::new(&g.senders, &g.receivers, &[30], opts).unwrap();
        let all = sampler.available()[0] as usize;
        let (ns, nr) = sampler.sample(all, 5).unwrap();
        let got: HashSet<(i64, i64)> = ns.into_iter().zip(nr).collect();
        let want: HashSet<(i64, i64)> = (0..30)
            .flat_map(|u| (0..30).map(move |v| (u, v)))
            .filter(|&(u, v)| u != v && !edges.contains(&(u, v)))
            .filter(|&(u, v)| !undirected || (u < v && !edges.contains(&(v, u))))
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn negatives_do_not_depend_on_the_thread_count() {
    let graphs: Vec<(usize, Vec<(i64, i64)>)> = (0..6)
        .map(|k| {
            let g = erdos_renyi(50 + 10 * k, 0.05, false, k as u64).unwrap();
            (
                g.num_nodes,
                g.senders.into_iter().zip(g.receivers).collect(),
            )
        })
        .collect();
    let (s, r, _) = batch_edges(&graphs);
    let n_node: Vec<usize> = graphs.iter().map(|g| g.0).collect();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let sampler = NegativeSampler::new(&s, &r, &n_node, Default::default()).unwrap();
            (
                sampler.sample(40, 11).unwrap(),
                sampler.structured(&s, 11).unwrap(),
            )
        })
    };
    let one = run(1);
    assert_eq!(one, run(3));
    assert_ne!(one.0, {
        let sampler = NegativeSampler::new(&s, &r, &n_node, Default::default()).unwrap();
        sampler.sample(40, 12).unwrap()
    });
}

#[test]
fn structured_negatives_share_the_sender() {
    let device = Device::flex();
    let a = GraphsTuple::from_edge_list(&[(0, 1), (1, 2), (2, 0), (0, 3)], 5, &device).unwrap();
    let b = GraphsTuple::from_edge_list(&[(0, 1), (1, 0)], 3, &device).unwrap();
    let g = batch(&[a, b]).unwrap();
    let edges: HashSet<(i64, i64)> = {
        let (s, r) = g.to_coo();
        s.into_iter().zip(r).collect()
    };
    for seed in 0..20 {
        let (s, r, k) = structured_negative_sampling(&g, Default::default(), seed).unwrap();
        assert_eq!((s.len(), r.len(), k.len()), (6, 6, 6));
        for (&i, &k) in s.iter().zip(&k) {
            assert!(!edges.contains(&(i, k)) && i != k, "{i} -> {k}");
            assert_eq!(i < 5, k < 5, "{i} -> {k} crosses graphs");
        }
    }
    // Node 0 of a 2-node graph with 0 -> 1 has no free partner.
    let full = GraphsTuple::from_edge_list(&[(0, 1)], 2, &device).unwrap();
    let err = structured_negative_sampling(&full, Default::default(), 0).unwrap_err();
    assert!(matches!(err, DataError::TooDense { graph: 0, .. }), "{err}");
    // From a GraphsTuple, per graph.
    let (ns, nr) = negative_sampling(&g, 1, Default::default(), 3).unwrap();
    assert_eq!(ns.len(), 2);
    assert!(ns[0] < 5 && nr[0] < 5 && ns[1] >= 5 && nr[1] >= 5);
}

#[test]
fn bad_edges_are_typed_errors() {
    let opts = NegativeSampling::default();
    for (s, r) in [
        (vec![0, 5], vec![1, 1]),
        (vec![0, 1], vec![3, 0]),
        (vec![-1], vec![0]),
    ] {
        let err = NegativeSampler::new(&s, &r, &[3, 2], opts).unwrap_err();
        assert!(matches!(err, DataError::InvalidArgument(_)), "{err}");
    }
    assert!(NegativeSampler::new(&[0], &[], &[3], opts).is_err());
    let sampler = NegativeSampler::new(&[0], &[1], &[3], opts).unwrap();
    assert!(sampler.sample_per_graph(&[1, 1], 0).is_err());
    assert!(sampler.structured(&[3], 0).is_err());
}

/// An undirected ER graph's edges, both directions.
fn undirected_graph() -> (Vec<i64>, Vec<i64>, usize) {
    let g = erdos_renyi(200, 0.05, false, 9).unwrap();
    (g.senders, g.receivers, 200)
}

fn pairs(s: &[i64], r: &[i64]) -> Vec<(i64, i64)> {
    s.iter().copied().zip(r.iter().copied()).collect()
}

#[test]
fn undirected_split_follows_pyg() {
    let (s, r, n) = undirected_graph();
    let edges: HashSet<(i64, i64)> = pairs(&s, &r).into_iter().collect();
    let split = RandomLinkSplit::new(0.05, 0.1)
        .with_undirected(true)
        .with_seed(4)
        .split(&s, &r, n)
        .unwrap();
    let p = s.len() / 2;
    let (n_val, n_test) = ((0.05 * p as f64) as usize, (0.1 * p as f64) as usize);
    assert_eq!(split.val.pos_edges.len(), n_val);
    assert_eq!(split.test.pos_edges.len(), n_test);
    assert_eq!(split.train.pos_edges.len(), p - n_val - n_test);
    // Disjoint and complete over the pairs; each pair once, as its u <= v edge.
    let mut all: Vec<usize> = [&split.train, &split.val, &split.test]
        .iter()
        .flat_map(|set| set.pos_edges.iter().copied())
        .collect();
    all.sort_unstable();
    let lower: Vec<usize> = (0..s.len()).filter(|&e| s[e] <= r[e]).collect();
    assert_eq!(all, lower);
    // Message passing: both directions of train pairs (train, val), plus val pairs (test).
    let both = |sets: &[&[usize]]| {
        let mut ids: Vec<usize> = sets
            .iter()
            .flat_map(|x| x.iter())
            .flat_map(|&e| {
                let back = (0..s.len())
                    .find(|&b| s[b] == r[e] && r[b] == s[e])
                    .unwrap();
                [e, back]
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let train_mp = both(&[&split.train.pos_edges]);
    assert_eq!(split.train.message_edges, train_mp);
    assert_eq!(split.val.message_edges, train_mp);
    assert_eq!(
        split.test.message_edges,
        both(&[&split.train.pos_edges, &split.val.pos_edges])
    );
    // Fixed negatives: as many as positives, not edges, unordered, distinct across val and test.
    assert_eq!(split.val.neg_senders.len(), n_val);
    assert_eq!(split.test.neg_senders.len(), n_test);
    assert!(split.train.neg_senders.is_empty());
    let mut negs = HashSet::new();
    for set in [&split.val, &split.test] {
        for (u, v) in pairs(&set.neg_senders, &set.neg_receivers) {
            assert!(u < v && !edges.contains(&(u, v)) && negs.insert((u, v)));
        }
    }
    // Fresh training negatives per epoch, never a training edge.
    let train_edges: HashSet<(i64, i64)> = train_mp.iter().map(|&e| (s[e], r[e])).collect();
    let (e0, e1) = (
        split.train_negatives(0).unwrap(),
        split.train_negatives(1).unwrap(),
    );
    assert_ne!(e0, e1);
    assert_eq!(e0, split.train_negatives(0).unwrap());
    assert_eq!(e0.0.len(), split.train.pos_edges.len());
    for (u, v) in pairs(&e0.0, &e0.1) {
        assert!(u < v && !train_edges.contains(&(u, v)));
    }
    // Labelled pairs: positives then negatives.
    let (ls, lr, y) = split.val.labelled_pairs();
    assert_eq!(ls.len(), 2 * n_val);
    assert_eq!(lr[..n_val], split.val.pos_receivers[..]);
    assert!(y[..n_val].iter().all(|&l| l == 1.0) && y[n_val..].iter().all(|&l| l == 0.0));
    // Same seed, same split; another seed, another split.
    let again = RandomLinkSplit::new(0.05, 0.1)
        .with_undirected(true)
        .with_seed(4);
    assert_eq!(again.split(&s, &r, n).unwrap().test, split.test);
    let other = RandomLinkSplit::new(0.05, 0.1)
        .with_undirected(true)
        .with_seed(5);
    assert_ne!(other.split(&s, &r, n).unwrap().test, split.test);
}

#[test]
fn disjoint_supervision_and_directed_split() {
    let (s, r, n) = undirected_graph();
    let split = RandomLinkSplit::new(0.1, 0.1)
        .with_disjoint_train_ratio(0.3)
        .with_neg_sampling_ratio(2.0)
        .split(&s, &r, n)
        .unwrap();
    let e = s.len();
    let (n_val, n_test) = ((0.1 * e as f64) as usize, (0.1 * e as f64) as usize);
    let n_train = e - n_val - n_test;
    let n_disjoint = (0.3 * n_train as f64) as usize;
    assert_eq!(split.train.pos_edges.len(), n_disjoint);
    assert_eq!(split.train.message_edges.len(), n_train - n_disjoint);
    let mp: HashSet<usize> = split.train.message_edges.iter().copied().collect();
    assert!(split.train.pos_edges.iter().all(|e| !mp.contains(e)));
    assert_eq!(split.val.message_edges.len(), n_train);
    assert_eq!(split.test.message_edges.len(), n_train + n_val);
    assert_eq!(split.val.neg_senders.len(), 2 * n_val);
    assert_eq!(split.train_negatives(0).unwrap().0.len(), 2 * n_disjoint);
}

#[test]
fn bad_splits_are_typed_errors() {
    let (s, r, n) = undirected_graph();
    for bad in [
        RandomLinkSplit::new(0.6, 0.5),
        RandomLinkSplit::new(-0.1, 0.1),
        RandomLinkSplit::new(0.1, 0.1).with_disjoint_train_ratio(1.0),
        RandomLinkSplit::new(0.1, 0.1).with_neg_sampling_ratio(f64::NAN),
    ] {
        assert!(
            matches!(bad.split(&s, &r, n), Err(DataError::InvalidArgument(_))),
            "{bad:?}"
        );
    }
    let undirected = RandomLinkSplit::new(0.1, 0.1).with_undirected(true);
    let err = undirected.split(&[0, 1, 1], &[1, 0, 2], 3).unwrap_err();
    assert!(err.to_string().contains("no reverse"), "{err}");
    let err = RandomLinkSplit::new(0.1, 0.1)
        .split(&[0, 0], &[1, 1], 3)
        .unwrap_err();
    assert!(err.to_string().contains("coalesce"), "{err}");
    let err = RandomLinkSplit::new(0.0, 0.0)
        .split(&[0, 1], &[1, 5], 3)
        .unwrap_err();
    assert!(matches!(err, DataError::InvalidArgument(_)), "{err}");
    // A complete graph has no negatives to hold out.
    let (ks, kr): (Vec<i64>, Vec<i64>) = (0..4)
        .flat_map(|u| (0..4).filter(move |&v| v != u).map(move |v| (u, v)))
        .unzip();
    let err = RandomLinkSplit::new(0.2, 0.2)
        .split(&ks, &kr, 4)
        .unwrap_err();
    assert!(matches!(err, DataError::TooDense { .. }), "{err}");
}

/// The message graph keeps every node and each kept edge's features.
#[test]
fn message_graph_keeps_edge_features() {
    let device = Device::flex();
    let (s, r, n) = undirected_graph();
    let e = s.len();
    let feats: Vec<f32> = (0..e).map(|i| i as f32).collect();
    let graph = GraphsTuple::from_coo(&s, &r, n, &device)
        .unwrap()
        .with_edges(Tensor::<2>::from_data(
            TensorData::new(feats, [e, 1]),
            &device,
        ))
        .unwrap();
    let split = RandomLinkSplit::new(0.1, 0.1)
        .with_undirected(true)
        .split_graph(&graph)
        .unwrap();
    let mp = split.test.message_graph(&graph).unwrap();
    assert_eq!(
        (mp.sum_n_node(), mp.sum_n_edge()),
        (n, split.test.message_edges.len())
    );
    let (ms, mr) = mp.to_coo();
    let got: Vec<f32> = mp.edge_tensor::<2>().unwrap().into_data().iter().collect();
    for (k, &id) in split.test.message_edges.iter().enumerate() {
        assert_eq!((ms[k], mr[k], got[k]), (s[id], r[id], id as f32));
    }
    let two = batch(&[graph.clone(), graph]).unwrap();
    assert!(RandomLinkSplit::new(0.1, 0.1).split_graph(&two).is_err());
}

/// Every seed edge once per epoch, positives first in local ids that map back to the global
/// pair, negatives never an edge; the same batches for any thread count, new ones per epoch.
#[test]
fn link_neighbor_loader_batches_seed_edges_with_negatives() {
    use burn_gnn_data::{InNeighbors, LinkNeighborLoader};
    let (s, r, n) = undirected_graph();
    let edges: HashSet<(i64, i64)> = pairs(&s, &r).into_iter().collect();
    let graph = InNeighbors::new(&s, &r, n).unwrap();
    let seeds: Vec<usize> = (0..s.len()).filter(|&e| s[e] < r[e]).collect();
    let (ss, sr): (Vec<i64>, Vec<i64>) = seeds.iter().map(|&e| (s[e], r[e])).unzip();
    let opts = NegativeSampling {
        undirected: true,
        ..Default::default()
    };
    let loader = LinkNeighborLoader::new(graph, ss.clone(), sr.clone(), vec![5, 3], 64, opts)
        .unwrap()
        .with_neg_sampling_ratio(2.0)
        .unwrap()
        .with_seed(7);
    let run = |threads: usize, epoch: u64| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| loader.epoch(epoch).collect::<Vec<_>>())
    };
    let batches = run(1, 0);
    assert_eq!(batches.len(), loader.num_batches());
    assert_eq!(batches, run(3, 0));
    assert_ne!(batches, run(1, 1));
    let mut seen = Vec::new();
    for b in &batches {
        let k = b.labels.iter().filter(|&&l| l == 1).count();
        assert_eq!(b.labels.len(), 3 * k, "two negatives per seed edge");
        assert!(b.labels[..k].iter().all(|&l| l == 1));
        for (i, (&u, &v)) in b.senders.iter().zip(&b.receivers).enumerate() {
            let (gu, gv) = (b.batch.nodes[u as usize], b.batch.nodes[v as usize]);
            assert!((u as usize) < b.batch.num_seeds && (v as usize) < b.batch.num_seeds);
            if i < k {
                seen.push((gu, gv));
            } else {
                assert!(
                    gu < gv && !edges.contains(&(gu, gv)),
                    "negative {gu} -> {gv}"
                );
            }
        }
    }
    seen.sort_unstable();
    let mut want = pairs(&ss, &sr);
    want.sort_unstable();
    assert_eq!(seen, want);
    // Given labels replace the 1s; with no negatives drawn, a batch holds the seed pairs only.
    let graph = InNeighbors::new(&s, &r, n).unwrap();
    let given: Vec<i64> = (0..ss.len() as i64).map(|i| i % 2).collect();
    let labelled = LinkNeighborLoader::new(graph, ss.clone(), sr.clone(), vec![2], 50, opts)
        .and_then(|l| l.with_neg_sampling_ratio(0.0))
        .and_then(|l| l.with_labels(given.clone()))
        .unwrap()
        .with_shuffle(false);
    let got: Vec<i64> = labelled.epoch(0).flat_map(|b| b.labels).collect();
    assert_eq!(got, given);
    assert!(labelled.clone().with_labels(vec![1]).is_err());
    // Slices split the seed edges; bad input is a typed error.
    assert_eq!(
        loader.slice(0..10).epoch(0).next().unwrap().labels.len(),
        30
    );
    let graph = InNeighbors::new(&s, &r, n).unwrap();
    let bad = LinkNeighborLoader::new(graph, vec![0], vec![n as i64], vec![5], 4, opts);
    assert!(matches!(bad, Err(DataError::InvalidArgument(_))));
    // A complete graph of 4 nodes has no negatives for a batch.
    let (ks, kr): (Vec<i64>, Vec<i64>) = (0..4)
        .flat_map(|u| (0..4).filter(move |&v| v != u).map(move |v| (u, v)))
        .unzip();
    let full = InNeighbors::new(&ks, &kr, 4).unwrap();
    let dense = LinkNeighborLoader::new(full, ks, kr, vec![2], 4, NegativeSampling::default());
    assert!(matches!(
        dense,
        Err(DataError::TooDense {
            asked: 4,
            available: 0,
            ..
        })
    ));
}

/// One relation of a heterogeneous graph: its edges split, its reverse relation following,
/// other relations whole, negatives (source, target) pairs that are not edges.
#[test]
fn heterogeneous_split_keeps_the_reverse_relation_in_step() {
    use burn::tensor::Int;
    use burn_gnn_graph::{EdgeType, HeteroGraph};
    let device = Device::flex();
    let (users, items) = (20i64, 30i64);
    let mut rng = burn_gnn_data::synthetic::SplitMix64::new(3);
    let mut rated = HashSet::new();
    while rated.len() < 120 {
        rated.insert((
            rng.below(users as u64) as i64,
            rng.below(items as u64) as i64,
        ));
    }
    let rated: Vec<(i64, i64)> = rated.into_iter().collect();
    let rates = EdgeType::new("user", "rates", "item");
    let rev = EdgeType::new("item", "rated_by", "user");
    let follows = EdgeType::new("user", "follows", "user");
    let ints =
        |v: Vec<i64>| Tensor::<1, Int>::from_data(TensorData::new(v.clone(), [v.len()]), &device);
    let (s, r): (Vec<i64>, Vec<i64>) = rated.iter().copied().unzip();
    // The reverse relation lists its edges in another order.
    let (rs, rr): (Vec<i64>, Vec<i64>) = rated.iter().rev().map(|&(u, i)| (i, u)).unzip();
    let feats: Vec<f32> = (0..s.len()).map(|e| e as f32).collect();
    let graph = HeteroGraph::builder(&device)
        .node_set("user", users as usize)
        .node_set("item", items as usize)
        .edge_set(rates.clone(), ints(s.clone()), ints(r.clone()))
        .edge_features(
            rates.clone(),
            Tensor::<2>::from_data(TensorData::new(feats, [s.len(), 1]), &device),
        )
        .edge_set(rev.clone(), ints(rs.clone()), ints(rr.clone()))
        .edge_set(follows.clone(), ints(vec![0, 1, 2]), ints(vec![1, 2, 0]))
        .build()
        .unwrap();
    let split = RandomLinkSplit::new(0.1, 0.2).with_seed(5);
    let split = split.split_hetero(&graph, &rates, Some(&rev)).unwrap();
    let (n_val, n_test) = (12, 24);
    assert_eq!(
        (split.val.pos_edges.len(), split.test.pos_edges.len()),
        (n_val, n_test)
    );
    let mut all: Vec<usize> = [&split.train, &split.val, &split.test]
        .iter()
        .flat_map(|set| set.pos_edges.clone())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..s.len()).collect::<Vec<_>>());
    let sorted = |sets: &[&[usize]]| {
        let mut ids: Vec<usize> = sets.concat();
        ids.sort_unstable();
        ids
    };
    assert_eq!(split.train.message_edges, sorted(&[&split.train.pos_edges]));
    assert_eq!(
        split.test.message_edges,
        sorted(&[&split.train.pos_edges, &split.val.pos_edges])
    );
    let edges: HashSet<(i64, i64)> = rated.iter().copied().collect();
    for set in [&split.train, &split.val, &split.test] {
        // The reverse relation keeps exactly the reverses of the message edges.
        let back: HashSet<(i64, i64)> = set
            .rev_message_edges
            .iter()
            .map(|&e| (rr[e], rs[e]))
            .collect();
        let forward: HashSet<(i64, i64)> =
            set.message_edges.iter().map(|&e| (s[e], r[e])).collect();
        assert_eq!(back, forward);
        for (u, i) in pairs(&set.neg_senders, &set.neg_receivers) {
            assert!((0..users).contains(&u) && (0..items).contains(&i) && !edges.contains(&(u, i)));
        }
        let g = split.message_hetero_graph(set, &graph).unwrap();
        assert_eq!(g.num_edges(&rates), set.message_edges.len());
        assert_eq!(g.num_edges(&rev), set.message_edges.len());
        assert_eq!(g.num_edges(&follows), 3);
        let got: Vec<f32> = g
            .edge_set(&rates)
            .unwrap()
            .features()
            .main
            .as_ref()
            .unwrap()
            .float::<2>()
            .unwrap()
            .into_data()
            .iter()
            .collect();
        let want: Vec<f32> = set.message_edges.iter().map(|&e| e as f32).collect();
        assert_eq!(got, want);
    }
    assert_eq!(split.val.neg_senders.len(), n_val);
    let train_edges: HashSet<(i64, i64)> = split
        .train
        .message_edges
        .iter()
        .map(|&e| (s[e], r[e]))
        .collect();
    let (ns, nr) = split.train_negatives(2).unwrap();
    assert!(pairs(&ns, &nr).iter().all(|p| !train_edges.contains(p)));
    // Errors: a reverse of other types, a missing reverse, undirected, a homogeneous split.
    let base = RandomLinkSplit::new(0.1, 0.2);
    assert!(base.split_hetero(&graph, &rates, Some(&follows)).is_err());
    assert!(
        base.split_hetero(&graph, &EdgeType::new("a", "b", "c"), None)
            .is_err()
    );
    assert!(
        base.clone()
            .with_undirected(true)
            .split_hetero(&graph, &rates, None)
            .is_err()
    );
    let partial = HeteroGraph::builder(&device)
        .node_set("user", 20)
        .node_set("item", 30)
        .edge_set(rates.clone(), ints(s.clone()), ints(r.clone()))
        .edge_set(rev.clone(), ints(rs[1..].to_vec()), ints(rr[1..].to_vec()))
        .build()
        .unwrap();
    let err = base.split_hetero(&partial, &rates, Some(&rev)).unwrap_err();
    assert!(err.to_string().contains("no reverse"), "{err}");
    let (hs, hr) = undirected_graph_pairs();
    let homogeneous = base.split(&hs, &hr, 200).unwrap();
    assert!(
        homogeneous
            .message_hetero_graph(&homogeneous.train, &graph)
            .is_err()
    );
}

fn undirected_graph_pairs() -> (Vec<i64>, Vec<i64>) {
    let (s, r, _) = undirected_graph();
    (s, r)
}
