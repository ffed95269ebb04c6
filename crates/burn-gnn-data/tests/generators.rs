//! Karate club, the synthetic generators, and downloads (from a local HTTP server).

use std::collections::HashSet;

use burn::tensor::Device;
use burn_gnn_data::synthetic::{self, SplitMix64, SyntheticGraph};
use burn_gnn_data::{DataError, KarateClub};

/// Checks the invariants every generator promises: ids in range, no self loops, no duplicates,
/// sorted by (receiver, sender), symmetric when undirected.
fn check_simple(g: &SyntheticGraph, undirected: bool) {
    assert_eq!(g.senders.len(), g.receivers.len());
    let n = g.num_nodes as i64;
    let pairs: Vec<(i64, i64)> = g
        .senders
        .iter()
        .copied()
        .zip(g.receivers.iter().copied())
        .collect();
    assert!(
        pairs
            .iter()
            .all(|&(s, r)| (0..n).contains(&s) && (0..n).contains(&r) && s != r)
    );
    assert!(
        pairs
            .windows(2)
            .all(|w| (w[0].1, w[0].0) < (w[1].1, w[1].0)),
        "sorted, no duplicates"
    );
    if undirected {
        let set: HashSet<_> = pairs.iter().copied().collect();
        assert!(
            pairs.iter().all(|&(s, r)| set.contains(&(r, s))),
            "symmetric"
        );
    }
}

#[test]
fn karate_club_matches_zacharys_degrees() {
    let k = KarateClub::load();
    assert_eq!(k.senders.len(), 156);
    let g = SyntheticGraph {
        num_nodes: 34,
        senders: k.senders.clone(),
        receivers: k.receivers.clone(),
        blocks: None,
    };
    check_simple(&g, true);
    // Degrees as Zachary's table lists them (networkx's degree view), independent of the
    // edge-list source.
    let expected = [
        16, 9, 10, 6, 3, 4, 4, 4, 5, 2, 3, 1, 2, 5, 2, 2, 2, 2, 2, 3, 2, 2, 2, 5, 3, 3, 2, 4, 3, 4,
        4, 6, 12, 17,
    ];
    let mut degree = [0; 34];
    k.receivers.iter().for_each(|&r| degree[r as usize] += 1);
    assert_eq!(degree, expected);
    assert_eq!(k.club.iter().filter(|&&c| c == 1).count(), 17);
    assert_eq!(
        (k.club[0], k.club[33]),
        (0, 1),
        "Mr. Hi is node 0, the officer node 33"
    );
    let train: Vec<usize> = (0..34).filter(|&i| k.train_mask[i]).collect();
    assert_eq!(train, [0, 4, 8, 24], "first member of each community");
    let graph = k.graph(&Device::flex()).unwrap();
    assert_eq!((graph.sum_n_node(), graph.sum_n_edge()), (34, 156));
}

#[test]
fn splitmix64_is_the_published_stream() {
    // The first outputs of SplitMix64 from seed 1234567 (Vigna's reference implementation).
    let mut r = SplitMix64::new(1234567);
    let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
    assert_eq!(
        first,
        [
            6457827717110365317,
            3203168211198807973,
            9817491932198370423
        ]
    );
    let mut items: Vec<u32> = (0..50).collect();
    SplitMix64::new(3).shuffle(&mut items);
    let mut again: Vec<u32> = (0..50).collect();
    SplitMix64::new(3).shuffle(&mut again);
    assert_eq!(items, again, "seeded");
    assert_ne!(items, (0..50).collect::<Vec<_>>());
    items.sort_unstable();
    assert_eq!(items, (0..50).collect::<Vec<_>>(), "a permutation");
    let mut r = SplitMix64::new(9);
    let mut counts = [0usize; 7];
    (0..70_000).for_each(|_| counts[r.below(7) as usize] += 1);
    assert!(
        counts.iter().all(|&c| (9_500..10_500).contains(&c)),
        "{counts:?}"
    );
}

#[test]
fn erdos_renyi_has_the_expected_density() {
    for directed in [false, true] {
        let (n, p) = (400usize, 0.05);
        let g = synthetic::erdos_renyi(n, p, directed, 3).unwrap();
        check_simple(&g, !directed);
        let pairs = if directed {
            n * (n - 1)
        } else {
            n * (n - 1) / 2
        };
        let edges = if directed {
            g.num_edges()
        } else {
            g.num_edges() / 2
        };
        let (mean, sd) = (pairs as f64 * p, (pairs as f64 * p * (1.0 - p)).sqrt());
        assert!(
            (edges as f64 - mean).abs() < 5.0 * sd,
            "{edges} edges, expected {mean} ± {sd}"
        );
        // Seeded: same seed, same graph; another seed, another graph.
        assert_eq!(g, synthetic::erdos_renyi(n, p, directed, 3).unwrap());
        assert_ne!(g, synthetic::erdos_renyi(n, p, directed, 4).unwrap());
    }
    // The extremes are exact.
    assert_eq!(
        synthetic::erdos_renyi(50, 0.0, false, 1)
            .unwrap()
            .num_edges(),
        0
    );
    assert_eq!(
        synthetic::erdos_renyi(50, 1.0, false, 1)
            .unwrap()
            .num_edges(),
        50 * 49
    );
    assert_eq!(
        synthetic::erdos_renyi(50, 1.0, true, 1)
            .unwrap()
            .num_edges(),
        50 * 49
    );
    assert_eq!(
        synthetic::erdos_renyi(0, 0.5, false, 1)
            .unwrap()
            .num_edges(),
        0
    );
    assert_eq!(
        synthetic::erdos_renyi(1, 1.0, true, 1).unwrap().num_edges(),
        0
    );
    for bad in [-0.1, 1.5, f64::NAN] {
        assert!(matches!(
            synthetic::erdos_renyi(10, bad, false, 1),
            Err(DataError::InvalidArgument(_))
        ));
    }
}

#[test]
fn erdos_renyi_pairs_are_uniform() {
    // Every pair must be reachable: over many seeds each pair of a 6-node graph appears with
    // frequency near p (a wrong triangle/rectangle index map would skip or repeat some).
    let (n, p, runs) = (6usize, 0.3, 3000);
    let mut hits = vec![0usize; n * n];
    for seed in 0..runs {
        let g = synthetic::erdos_renyi(n, p, false, seed).unwrap();
        g.senders
            .iter()
            .zip(&g.receivers)
            .for_each(|(&s, &r)| hits[s as usize * n + r as usize] += 1);
    }
    for s in 0..n {
        for r in 0..n {
            let h = hits[s * n + r] as f64 / runs as f64;
            if s == r {
                assert_eq!(h, 0.0);
            } else {
                assert!((h - p).abs() < 0.05, "pair ({s}, {r}) frequency {h}");
            }
        }
    }
}

#[test]
fn block_model_densities_follow_probs() {
    let sizes = [150, 250];
    let probs = vec![vec![0.10, 0.01], vec![0.01, 0.05]];
    let g = synthetic::stochastic_block_model(&sizes, &probs, false, 11).unwrap();
    check_simple(&g, true);
    let blocks = g.blocks.as_ref().unwrap();
    assert_eq!(blocks.len(), 400);
    let mut count = [[0usize; 2]; 2];
    g.senders
        .iter()
        .zip(&g.receivers)
        .for_each(|(&s, &r)| count[blocks[s as usize] as usize][blocks[r as usize] as usize] += 1);
    for a in 0..2 {
        for b in 0..2 {
            let pairs = if a == b {
                sizes[a] * (sizes[a] - 1)
            } else {
                sizes[a] * sizes[b]
            } as f64;
            // Directed counts of an undirected graph: each within-block edge twice over
            // n(n-1) ordered pairs, each cross edge once over sa·sb ordered pairs.
            let p = probs[a][b];
            let sd = (pairs * p * (1.0 - p)).sqrt() * if a == b { 2.0_f64.sqrt() } else { 1.0 };
            assert!(
                (count[a][b] as f64 - pairs * p).abs() < 5.0 * sd,
                "blocks ({a}, {b}): {} vs {}",
                count[a][b],
                pairs * p
            );
        }
    }
    let directed =
        synthetic::stochastic_block_model(&sizes, &[vec![0.1, 0.0], vec![0.02, 0.1]], true, 2)
            .unwrap();
    check_simple(&directed, false);
    assert!(
        directed
            .senders
            .iter()
            .zip(&directed.receivers)
            .all(|(&s, &r)| !(s < 150 && r >= 150)),
        "probs[0][1] = 0"
    );
    assert!(matches!(
        synthetic::stochastic_block_model(&sizes, &[vec![0.1, 0.2], vec![0.3, 0.1]], false, 1),
        Err(DataError::InvalidArgument(m)) if m.contains("symmetric")
    ));
    assert!(synthetic::stochastic_block_model(&sizes, &[vec![0.1]], false, 1).is_err());
}

#[test]
fn barabasi_albert_is_preferential() {
    let (n, m) = (2000, 3);
    let g = synthetic::barabasi_albert(n, m, 5).unwrap();
    check_simple(&g, true);
    assert_eq!(g.num_edges(), 2 * m * (n - m));
    let mut degree = vec![0usize; n];
    g.receivers.iter().for_each(|&r| degree[r as usize] += 1);
    assert!(degree.iter().all(|&d| d >= m), "every node joins m others");
    // A heavy tail: the largest hub far above the mean degree (≈ 2m), unlike G(n, p).
    let max = *degree.iter().max().unwrap();
    assert!(max > 15 * 2 * m, "max degree {max}");
    assert_eq!(g, synthetic::barabasi_albert(n, m, 5).unwrap());
    assert!(matches!(
        synthetic::barabasi_albert(5, 5, 1),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(synthetic::barabasi_albert(5, 0, 1).is_err());
}

#[test]
fn watts_strogatz_rewires_a_ring_lattice() {
    let (n, k) = (2000usize, 10usize);
    // Ring distance between two node ids.
    let ring = |s: i64, r: i64| {
        let d = (s - r).unsigned_abs() as usize;
        d.min(n - d)
    };
    // p = 0 is the lattice: each node joined to exactly the k nodes within distance k / 2.
    let lattice = synthetic::watts_strogatz(n, k, 0.0, 1).unwrap();
    check_simple(&lattice, true);
    assert_eq!(lattice.num_edges(), n * k);
    assert!(
        lattice
            .senders
            .iter()
            .zip(&lattice.receivers)
            .all(|(&s, &r)| ring(s, r) <= k / 2)
    );
    for p in [0.2, 1.0] {
        let g = synthetic::watts_strogatz(n, k, p, 7).unwrap();
        check_simple(&g, true);
        assert_eq!(g.num_edges(), n * k, "rewiring keeps the edge count");
        // Each of the n·k/2 lattice edges is rewired with probability p to a node drawn
        // uniformly, which lands beyond distance k / 2 with probability about 1 − k / n.
        let long = g
            .senders
            .iter()
            .zip(&g.receivers)
            .filter(|&(&s, &r)| ring(s, r) > k / 2)
            .count()
            / 2;
        let trials = (n * k / 2) as f64;
        let q = p * (1.0 - k as f64 / n as f64);
        let (mean, sd) = (trials * q, (trials * q * (1.0 - q)).sqrt().max(1.0));
        assert!(
            (long as f64 - mean).abs() < 5.0 * sd,
            "p = {p}: {long} long-range edges, expected {mean:.0} ± {sd:.0}"
        );
        assert_eq!(g, synthetic::watts_strogatz(n, k, p, 7).unwrap(), "seeded");
        assert_ne!(g, synthetic::watts_strogatz(n, k, p, 8).unwrap());
    }
    // A tiny ring where rewiring must skip full nodes: k = n − 2 leaves one free partner each.
    let g = synthetic::watts_strogatz(6, 4, 1.0, 3).unwrap();
    check_simple(&g, true);
    assert_eq!(g.num_edges(), 6 * 4);
    assert_eq!(
        synthetic::watts_strogatz(0, 0, 0.5, 1).unwrap().num_edges(),
        0
    );
    for (n, k, p) in [
        (10, 3, 0.1),
        (10, 10, 0.1),
        (4, 6, 0.1),
        (10, 4, 1.5),
        (10, 4, f64::NAN),
    ] {
        assert!(
            matches!(
                synthetic::watts_strogatz(n, k, p, 1),
                Err(DataError::InvalidArgument(_))
            ),
            "n = {n}, k = {k}, p = {p}"
        );
    }
}

#[test]
fn features_and_graphs_are_built() {
    let device = Device::flex();
    let g = synthetic::erdos_renyi(30, 0.2, false, 1).unwrap();
    let x = synthetic::random_features(30, 4, 1, &device);
    let t = g.graph(Some(x.clone()), &device).unwrap();
    assert_eq!((t.sum_n_node(), t.sum_n_edge()), (30, g.num_edges()));
    assert_eq!(g.graph(None, &device).unwrap().sum_n_node(), 30);
    assert!(matches!(
        g.graph(Some(synthetic::random_features(29, 4, 1, &device)), &device),
        Err(DataError::Graph(_))
    ));
    let v: Vec<f32> = x.into_data().iter::<f32>().collect();
    let mean = v.iter().sum::<f32>() / v.len() as f32;
    assert!(mean.abs() < 0.4 && v.iter().all(|x| x.is_finite()));
}

#[cfg(feature = "download")]
mod download {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use burn_gnn_data::{DataError, DownloadEvent, Planetoid, download_planetoid_from};

    /// The crate's embedded raw files (Cora and CiteSeer), served by the test server.
    fn raw_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/planetoid")
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("burn-gnn-dl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A one-thread HTTP server over `raw_dir()`; `tamper` changes a file's bytes on the way.
    fn serve(tamper: Option<&'static str>) -> (String, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let path = line
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .trim_start_matches('/')
                    .to_string();
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap() <= 2 {
                        break;
                    }
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let reply = match std::fs::read(raw_dir().join(&path)) {
                    Ok(mut body) => {
                        if tamper == Some(path.as_str()) {
                            body[100] ^= 1;
                        }
                        let mut r = format!(
                            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                            body.len()
                        )
                        .into_bytes();
                        r.extend(body);
                        r
                    }
                    Err(_) => {
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                            .to_vec()
                    }
                };
                let _ = stream.write_all(&reply);
            }
        });
        (url, requests)
    }

    #[test]
    fn downloads_once_verifies_and_caches() {
        let (url, requests) = serve(None);
        let dir = scratch("ok");
        let mut done = Vec::new();
        download_planetoid_from(&url, "cora", &dir, |e| {
            if let DownloadEvent::Done { file } = e {
                done.push(file)
            }
        })
        .unwrap();
        assert_eq!(done.len(), 8);
        assert_eq!(requests.load(Ordering::SeqCst), 8);
        for f in &done {
            assert_eq!(
                std::fs::read(dir.join(f)).unwrap(),
                std::fs::read(raw_dir().join(f)).unwrap()
            );
        }
        let data = Planetoid::load("cora", &dir).unwrap();
        assert_eq!(data.num_nodes, 2708);
        // Cached: a second call fetches nothing; a deleted file is fetched alone.
        download_planetoid_from(&url, "cora", &dir, |_| {}).unwrap();
        assert_eq!(requests.load(Ordering::SeqCst), 8);
        std::fs::remove_file(dir.join("ind.cora.ty")).unwrap();
        download_planetoid_from(&url, "cora", &dir, |_| {}).unwrap();
        assert_eq!(requests.load(Ordering::SeqCst), 9);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_tampered_file_is_refused_and_not_kept() {
        let (url, _) = serve(Some("ind.cora.graph"));
        let dir = scratch("tampered");
        let err = download_planetoid_from(&url, "cora", &dir, |_| {}).unwrap_err();
        assert!(
            matches!(&err, DataError::Download { reason, .. } if reason.contains("SHA-256")),
            "{err}"
        );
        assert!(!dir.join("ind.cora.graph").exists() && !dir.join("ind.cora.graph.part").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_files_and_unverifiable_files_are_clear_errors() {
        let (url, requests) = serve(None);
        let dir = scratch("missing");
        let err =
            download_planetoid_from(&format!("{url}/nowhere"), "cora", &dir, |_| {}).unwrap_err();
        assert!(
            matches!(&err, DataError::Download { url, .. } if url.ends_with("/nowhere/ind.cora.x")),
            "{err}"
        );
        assert!(err.to_string().contains("404"), "{err}");
        // PubMed is not served here: the error lists every file still missing, the directory,
        // and the three ways to supply them.
        let err = download_planetoid_from(&url, "pubmed", &dir, |_| {}).unwrap_err();
        let msg = err.to_string();
        for f in ["x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"] {
            assert!(msg.contains(&format!("ind.pubmed.{f}")), "{msg}");
        }
        for what in ["--data-dir", "BURN_GNN_DATA_DIR", "BURN_GNN_PLANETOID_URL"] {
            assert!(msg.contains(what), "{msg}");
        }
        assert!(msg.contains(&dir.display().to_string()), "{msg}");
        assert!(requests.load(Ordering::SeqCst) >= 2);
        assert!(matches!(
            download_planetoid_from(&url, "reddit", &dir, |_| {}),
            Err(DataError::UnknownDataset { .. })
        ));
        // Nothing reachable at all.
        let err = download_planetoid_from("http://127.0.0.1:9", "cora", &dir, |_| {}).unwrap_err();
        assert!(matches!(err, DataError::Download { .. }), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn academic_graph_is_valid_reproducible_and_carries_its_planted_signal() {
    use burn_gnn_data::{Academic, AcademicConfig};
    let config = AcademicConfig {
        papers: 2000,
        authors: 600,
        seed: 3,
        ..AcademicConfig::default()
    };
    let a = Academic::generate(config.clone()).unwrap();
    let b = Academic::generate(config.clone()).unwrap();
    assert_eq!(
        (&a.labels, &a.edges),
        (&b.labels, &b.edges),
        "same seed, same graph"
    );
    let g = a.graph(&Device::flex()).unwrap();
    assert_eq!(
        (
            g.num_nodes("paper"),
            g.num_nodes("author"),
            g.num_nodes("venue")
        ),
        (2000, 600, 24)
    );
    assert_eq!(g.edge_types().len(), 6);
    // Venue topics agree with paper topics with probability h + (1 - h) / K.
    let (_, s, r) = a
        .edges
        .iter()
        .find(|(et, ..)| et.rel == "published_in")
        .unwrap();
    let same = s
        .iter()
        .zip(r)
        .filter(|&(&p, &v)| a.labels[p as usize] == v % 4)
        .count() as f64
        / s.len() as f64;
    let want = 0.75 + 0.25 / 4.0;
    let sigma = (want * (1.0 - want) / s.len() as f64).sqrt();
    assert!(
        (same - want).abs() < 5.0 * sigma,
        "venue agreement {same} vs {want}"
    );
    // Splits partition the papers 20/20/60.
    let count = |m: &[bool]| m.iter().filter(|&&x| x).count();
    assert_eq!(
        (
            count(&a.train_mask),
            count(&a.val_mask),
            count(&a.test_mask)
        ),
        (400, 400, 1200)
    );
    assert!((0..2000).all(|i| {
        [a.train_mask[i], a.val_mask[i], a.test_mask[i]]
            .iter()
            .filter(|&&x| x)
            .count()
            == 1
    }));
    for bad in [
        AcademicConfig {
            venues: 2,
            ..config.clone()
        },
        AcademicConfig {
            homophily: 1.5,
            ..config.clone()
        },
        AcademicConfig {
            papers: 0,
            ..config
        },
    ] {
        assert!(matches!(
            Academic::generate(bad),
            Err(burn_gnn_data::DataError::InvalidArgument(_))
        ));
    }
}
