//! OGB: the evaluators against OGB's own output on seeded inputs (tests/data/ogb/
//! make_evaluator_cases.py) and hand-worked cases; the raw layouts, written here in OGB's exact
//! layout (CSV.gz) or committed (binary .npz, tests/data/ogb/make_binary.py), read as OGB reads
//! them; and every bad input as a typed error naming the file and line.

use std::io::Write;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_data::DataError;
use burn_gnn_data::io::LABELS;
use burn_gnn_data::ogb::{
    Evaluator, OgbGraphDataset, OgbInfo, OgbLevel, OgbMetric, OgbNodeDataset, accuracy,
    average_precision, hits_at_k, ranking, rmse, roc_auc, subtoken_f1,
};
use burn_gnn_graph::{FeatureData, FeatureValues};

/// The LCG `make_evaluator_cases.py` draws its inputs from.
struct Draw(u64);

impl Draw {
    fn next(&mut self, m: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % m
    }
}

fn matrix(rows: usize, tasks: usize, mut cell: impl FnMut() -> f64) -> Vec<f64> {
    (0..rows * tasks).map(|_| cell()).collect()
}

fn expected() -> std::collections::HashMap<String, f64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ogb/evaluator_cases.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (name, value) = l.split_once(' ').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

fn close(name: &str, got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "{name}: {got} vs OGB's {want}");
}

#[test]
fn evaluators_match_ogbs_own_output() {
    let want = expected();
    let nan = f64::NAN;
    let ev = |name: &str| Evaluator::new(name).unwrap();

    let mut d = Draw(1);
    let y = matrix(300, 1, || d.next(40) as f64);
    let pred: Vec<f64> = y
        .iter()
        .map(|&v| {
            if d.next(100) < 60 {
                v
            } else {
                d.next(40) as f64
            }
        })
        .collect();
    let got = ev("ogbn-arxiv").eval(&y, &pred, [300, 1]).unwrap();
    close("node_arxiv_acc", got, want["node_arxiv_acc"], 1e-12);

    let mut d = Draw(2);
    let mut y = matrix(50, 112, || d.next(2) as f64);
    for r in 0..50 {
        y[r * 112] = 0.0;
    }
    let score = matrix(50, 112, || d.next(10) as f64 / 10.0);
    let got = ev("ogbn-proteins").eval(&y, &score, [50, 112]).unwrap();
    close(
        "node_proteins_rocauc",
        got,
        want["node_proteins_rocauc"],
        1e-12,
    );

    let mut d = Draw(3);
    let y = matrix(200, 1, || {
        if d.next(10) == 0 {
            nan
        } else {
            d.next(2) as f64
        }
    });
    let score = matrix(200, 1, || d.next(1000) as f64 / 1000.0);
    let got = ev("ogbg-molhiv").eval(&y, &score, [200, 1]).unwrap();
    close(
        "graph_molhiv_rocauc",
        got,
        want["graph_molhiv_rocauc"],
        1e-12,
    );

    let mut d = Draw(4);
    let mut y = matrix(60, 128, || {
        if d.next(4) == 0 {
            nan
        } else {
            d.next(2) as f64
        }
    });
    for r in 0..60 {
        y[r * 128 + 5] = nan;
        if !y[r * 128 + 6].is_nan() {
            y[r * 128 + 6] = 1.0;
        }
    }
    let score = matrix(60, 128, || d.next(20) as f64 / 20.0);
    let got = ev("ogbg-molpcba").eval(&y, &score, [60, 128]).unwrap();
    close("graph_molpcba_ap", got, want["graph_molpcba_ap"], 1e-12);

    let mut d = Draw(5);
    let y = matrix(100, 1, || {
        if d.next(10) == 0 {
            nan
        } else {
            (d.next(2000) as f64 - 1000.0) / 100.0
        }
    });
    let pred = matrix(100, 1, || (d.next(2000) as f64 - 1000.0) / 100.0);
    let got = ev("ogbg-molesol").eval(&y, &pred, [100, 1]).unwrap();
    close("graph_molesol_rmse", got, want["graph_molesol_rmse"], 1e-12);

    let mut d = Draw(6);
    let y = matrix(100, 1, || d.next(37) as f64);
    let pred: Vec<f64> = y
        .iter()
        .map(|&v| if d.next(10) < 3 { v } else { d.next(37) as f64 })
        .collect();
    let got = ev("ogbg-ppa").eval(&y, &pred, [100, 1]).unwrap();
    close("graph_ppa_acc", got, want["graph_ppa_acc"], 1e-12);

    for (case, name, seed, n_pos, n_neg) in [
        ("link_collab_hits", "ogbl-collab", 7, 100, 400),
        ("link_ddi_hits", "ogbl-ddi", 8, 50, 10),
        ("link_ppa_hits", "ogbl-ppa", 9, 300, 1000),
        ("link_vessel_rocauc", "ogbl-vessel", 10, 100, 150),
    ] {
        let mut d = Draw(seed);
        let pos = matrix(n_pos, 1, || d.next(1000) as f64 / 1000.0);
        let neg = matrix(n_neg, 1, || d.next(1000) as f64 / 1000.0);
        let got = ev(name).eval_link(&pos, &neg).unwrap();
        close(case, got, want[case], 1e-12);
    }

    // OGB averages float32 lists here: agreement to float32's precision.
    let mut d = Draw(11);
    let pos = matrix(40, 1, || d.next(20) as f64 / 20.0);
    let neg = matrix(40, 30, || d.next(20) as f64 / 20.0);
    let r = ev("ogbl-citation2").eval_ranking(&pos, &neg, 30).unwrap();
    close("mrr", r.mrr(), want["link_citation2_mrr"], 1e-6);
    close("hits@1", r.hits(1), want["link_citation2_hits@1"], 1e-6);
    close("hits@3", r.hits(3), want["link_citation2_hits@3"], 1e-6);
    close("hits@10", r.hits(10), want["link_citation2_hits@10"], 1e-6);

    let mut d = Draw(12);
    let words = ["get", "set", "name", "value", "add", "to", "list", "init"];
    let mut seqs = || -> Vec<Vec<String>> {
        (0..50)
            .map(|_| {
                let len = d.next(4);
                (0..len)
                    .map(|_| words[d.next(8) as usize].to_string())
                    .collect()
            })
            .collect()
    };
    let (refs, preds) = (seqs(), seqs());
    let s = ev("ogbg-code2").eval_subtokens(&refs, &preds).unwrap();
    close(
        "precision",
        s.precision,
        want["graph_code2_precision"],
        1e-12,
    );
    close("recall", s.recall, want["graph_code2_recall"], 1e-12);
    close("F1", s.f1, want["graph_code2_F1"], 1e-12);
}

#[test]
fn metrics_on_hand_worked_cases() {
    let nan = f64::NAN;
    // Positives 0.9, 0.5; negatives 0.5, 0.1: pairs (0.9 > 0.5), (0.9 > 0.1), (0.5 = 0.5: ½),
    // (0.5 > 0.1): AUC 3.5 / 4. The NaN-labelled row is skipped.
    let auc = roc_auc(&[1., 1., 0., 0., nan], &[0.9, 0.5, 0.5, 0.1, 0.7], [5, 1]).unwrap();
    assert_eq!(auc, 0.875);
    // Descending: 0.9 (tp 1, P 1, R ½), then {0.5, 0.5} (tp 2, fp 1, P ⅔, R 1), 0.1:
    // AP = ½·1 + ½·⅔ = ⅚.
    let ap = average_precision(&[1., 1., 0., 0.], &[0.9, 0.5, 0.5, 0.1], [4, 1]).unwrap();
    assert!((ap - 5.0 / 6.0).abs() < 1e-15);
    // Two tasks: 2 of 3 right; both labelled rows right (the NaN row is skipped).
    let acc = accuracy(
        &[1., 0., 2., nan, 1., 1.],
        &[1., 0., 2., 5., 0., 1.],
        [3, 2],
    )
    .unwrap();
    assert!((acc - (2.0 / 3.0 + 1.0) / 2.0).abs() < 1e-15);
    assert_eq!(
        rmse(&[1., 2., nan], &[2., 0., 9.], [3, 1]).unwrap(),
        2.5f64.sqrt()
    );
    // The 2nd-best negative is 0.6: positives strictly above it.
    assert_eq!(
        hits_at_k(&[0.7, 0.6, 0.9, 0.1], &[0.8, 0.6, 0.2], 2).unwrap(),
        0.5
    );
    assert_eq!(hits_at_k(&[0.1], &[0.8], 2).unwrap(), 1.0);
    // Ranks: 1 + above + ties / 2.
    let r = ranking(&[0.5, 0.9], &[0.5, 0.7, 0.1, 0.2], 2).unwrap();
    assert_eq!(r.ranks, vec![2.5, 1.0]);
    assert_eq!(r.mrr(), (0.4 + 1.0) / 2.0);
    assert_eq!(r.hits(1), 0.5);
    let s = subtoken_f1(
        &[vec!["a".into(), "b".into()], vec![]],
        &[vec!["a".into(), "c".into(), "a".into()], vec!["x".into()]],
    )
    .unwrap();
    // Sample 1: sets {a, b} and {a, c}: P = R = F1 = ½; sample 2: all 0.
    assert_eq!((s.precision, s.recall, s.f1), (0.25, 0.25, 0.25));
}

#[test]
fn evaluator_input_checks_are_typed_errors() {
    let invalid = |r: Result<f64, DataError>| matches!(r, Err(DataError::InvalidArgument(_)));
    let arxiv = Evaluator::new("ogbn-arxiv").unwrap();
    assert_eq!(arxiv.metric, OgbMetric::Accuracy);
    assert!(invalid(arxiv.eval(&[1., 2.], &[1.], [2, 1])));
    assert!(invalid(arxiv.eval(&[1., 2.], &[1., 2.], [1, 2]))); // 2 tasks, arxiv has 1
    assert!(invalid(arxiv.eval_link(&[1.], &[0.])));
    assert!(invalid(arxiv.eval(&[nan()], &[1.], [1, 1]))); // a task without labels
    let hiv = Evaluator::new("ogbg-molhiv").unwrap();
    assert!(invalid(hiv.eval(&[1., 1.], &[0.2, 0.3], [2, 1]))); // no negative
    assert!(invalid(hiv.eval(&[1., 2.], &[0.2, 0.3], [2, 1]))); // not a binary label
    assert!(invalid(hiv.eval(&[1., 0.], &[nan(), 0.3], [2, 1]))); // NaN score
    let collab = Evaluator::new("ogbl-collab").unwrap();
    assert_eq!(collab.metric, OgbMetric::HitsAt(50));
    assert!(invalid(collab.eval_link(&[], &[0.1])));
    assert!(invalid(collab.eval(&[1.], &[1.], [1, 1])));
    let citation = Evaluator::new("ogbl-citation2").unwrap();
    assert!(matches!(
        citation.eval_ranking(&[0.1, 0.2], &[0.1, 0.2, 0.3], 2),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        Evaluator::new("ogbn-nonesuch"),
        Err(DataError::UnknownDataset { .. })
    ));
    assert!(OgbMetric::from_name("hits@0").is_err());
}

fn nan() -> f64 {
    f64::NAN
}

#[test]
fn master_table_describes_the_datasets() {
    let arxiv = OgbInfo::get("ogbn-arxiv").unwrap();
    assert_eq!(arxiv.level, OgbLevel::Node);
    assert_eq!((arxiv.num_tasks, arxiv.num_classes), (1, Some(40)));
    assert_eq!(arxiv.split, "time");
    assert_eq!(arxiv.additional_node_files, ["node_year"]);
    assert!(!arxiv.add_inverse_edge && !arxiv.binary && !arxiv.hetero);
    assert_eq!(arxiv.dir_name(), "ogbn_arxiv");
    let collab = OgbInfo::get("ogbl-collab").unwrap();
    assert_eq!(collab.additional_edge_files, ["edge_weight", "edge_year"]);
    assert_eq!(collab.num_classes, None);
    let pcba = OgbInfo::get("ogbg-molpcba").unwrap();
    assert_eq!(
        (pcba.num_tasks, pcba.metric),
        (128, OgbMetric::AveragePrecision)
    );
    assert!(OgbInfo::get("ogbn-mag").unwrap().hetero);
    assert!(OgbInfo::get("ogbn-papers100M").unwrap().binary);
    assert_eq!(OgbInfo::names().len(), 5 + 7 + 15);
}

/// A scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burn-gnn-ogb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Copies the files of the folders `subs` of `src` into the same folders under `dst`.
fn copy_folders(src: &Path, dst: &Path, subs: &[&str]) {
    for sub in subs {
        std::fs::create_dir_all(dst.join(sub)).unwrap();
        for entry in std::fs::read_dir(src.join(sub)).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), dst.join(sub).join(entry.file_name())).unwrap();
        }
    }
}

/// Writes `text` gzip-compressed, as OGB ships its tables.
fn gz(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut e = flate2::write::GzEncoder::new(
        std::fs::File::create(path).unwrap(),
        flate2::Compression::default(),
    );
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap();
}

/// An ogbn-arxiv-shaped dataset: 5 nodes, 4 edges, float features, node_year, labels, the
/// `time` split.
fn write_arxiv(root: &Path) -> PathBuf {
    let dir = root.join("ogbn_arxiv");
    let raw = dir.join("raw");
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n3,1\n4,0\n");
    gz(&raw.join("num-node-list.csv.gz"), "5\n");
    gz(&raw.join("num-edge-list.csv.gz"), "4\n");
    gz(
        &raw.join("node-feat.csv.gz"),
        "0.5,-1.0\n1.5,2.0\n0.0,0.25\n-3.0,1e-2\n7,8\n",
    );
    gz(
        &raw.join("node_year.csv.gz"),
        "2001\n2002\n2003\n2004\n2005\n",
    );
    gz(&raw.join("node-label.csv.gz"), "3\n0\n39\n1\n1\n");
    for (name, ids) in [("train", "0\n1\n"), ("valid", "2\n"), ("test", "3\n4\n")] {
        gz(&dir.join(format!("split/time/{name}.csv.gz")), ids);
    }
    dir
}

fn f32s(f: &FeatureData) -> Vec<f32> {
    match &f.values {
        FeatureValues::F32(v) => v.clone(),
        other => panic!("expected f32 values, got {other:?}"),
    }
}

fn i64s(f: &FeatureData) -> Vec<i64> {
    match &f.values {
        FeatureValues::I64(v) => v.clone(),
        other => panic!("expected i64 values, got {other:?}"),
    }
}

#[test]
fn a_node_dataset_in_ogbs_csv_layout() {
    let root = scratch("arxiv");
    write_arxiv(&root);
    let ds = OgbNodeDataset::open("ogbn-arxiv", Some(&root)).unwrap();
    let g = &ds.graph;
    assert_eq!(
        (g.senders.clone(), g.receivers.clone()),
        (vec![0, 1, 3, 4], vec![1, 2, 1, 0])
    );
    assert_eq!(
        (g.num_nodes, g.n_node.clone(), g.n_edge.clone()),
        (5, vec![5], vec![4])
    );
    let x = g.nodes.main.as_ref().unwrap();
    assert_eq!(x.shape, [5, 2]);
    assert_eq!(
        f32s(x),
        [0.5, -1.0, 1.5, 2.0, 0.0, 0.25, -3.0, 0.01, 7.0, 8.0]
    );
    assert_eq!(
        i64s(&g.nodes.named["node_year"]),
        [2001, 2002, 2003, 2004, 2005]
    );
    assert_eq!(g.nodes.named[LABELS].shape, [5]);
    assert_eq!(i64s(&g.nodes.named[LABELS]), [3, 0, 39, 1, 1]);
    assert_eq!(
        (ds.split.scheme.as_str(), ds.split.train.clone()),
        ("time", vec![0, 1])
    );
    assert_eq!(
        (ds.split.valid.clone(), ds.split.test.clone()),
        (vec![2], vec![3, 4])
    );
    assert_eq!(ds.y_true(&ds.split.test).unwrap(), [1.0, 1.0]);
    assert_eq!(ds.num_classes(), Some(40));
    let acc = ds
        .evaluator()
        .eval(&ds.y_true(&[0, 1, 2]).unwrap(), &[3., 0., 0.], [3, 1]);
    assert_eq!(acc.unwrap(), 2.0 / 3.0);
    // The graph builds on a device; the data directory may also be the dataset folder itself.
    let graph = ds.graph(&Device::flex()).unwrap();
    assert_eq!(graph.sum_n_edge(), 4);
    let again = OgbNodeDataset::open("ogbn-arxiv", Some(&root.join("ogbn_arxiv"))).unwrap();
    assert_eq!(again.graph, ds.graph);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn inverse_edges_follow_each_edge_with_its_features() {
    // ogbn-proteins: add_inverse_edge, edge features, node_species shipped as species.csv.gz,
    // 112 binary tasks.
    let root = scratch("proteins");
    let dir = root.join("ogbn_proteins");
    let raw = dir.join("raw");
    gz(&raw.join("edge.csv.gz"), "0,1\n2,0\n");
    gz(&raw.join("num-node-list.csv.gz"), "3\n");
    gz(&raw.join("num-edge-list.csv.gz"), "2\n");
    gz(&raw.join("edge-feat.csv.gz"), "0.1,0.2\n0.3,0.4\n");
    gz(&raw.join("species.csv.gz"), "7\n7\n9\n");
    let labels: String = (0..3)
        .map(|r| {
            (0..112)
                .map(|t| ((r + t) % 2).to_string())
                .collect::<Vec<_>>()
                .join(",")
                + "\n"
        })
        .collect();
    gz(&raw.join("node-label.csv.gz"), &labels);
    for name in ["train", "valid", "test"] {
        gz(&dir.join(format!("split/species/{name}.csv.gz")), "0\n");
    }
    let ds = OgbNodeDataset::open("ogbn-proteins", Some(&root)).unwrap();
    let g = &ds.graph;
    assert_eq!(g.senders, [0, 1, 2, 0]);
    assert_eq!(g.receivers, [1, 0, 0, 2]);
    assert_eq!(g.n_edge, [4]);
    let e = g.edges.main.as_ref().unwrap();
    assert_eq!(e.shape, [4, 2]);
    assert_eq!(f32s(e), [0.1, 0.2, 0.1, 0.2, 0.3, 0.4, 0.3, 0.4]);
    assert_eq!(i64s(&g.nodes.named["node_species"]), [7, 7, 9]);
    // Multi-task labels stay [N, T].
    assert_eq!(g.nodes.named[LABELS].shape, [3, 112]);
    assert_eq!(ds.y_true(&[1]).unwrap()[..3], [1.0, 0.0, 1.0]);
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_graph_dataset_in_ogbs_csv_layout() {
    // ogbg-molhiv: three graphs, ids local to each, int features, inverse edges, NaN labels.
    let root = scratch("molhiv");
    let dir = root.join("hiv"); // the download's folder name works too
    let raw = dir.join("raw");
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n0,1\n");
    gz(&raw.join("num-node-list.csv.gz"), "3\n1\n2\n");
    gz(&raw.join("num-edge-list.csv.gz"), "2\n0\n1\n");
    gz(
        &raw.join("node-feat.csv.gz"),
        "6,0\n8,1\n6,0\n7,2\n6,1\n8,0\n",
    );
    gz(&raw.join("edge-feat.csv.gz"), "1,0\n2,1\n0,0\n");
    gz(&raw.join("graph-label.csv.gz"), "1\nnan\n0\n");
    gz(&dir.join("split/scaffold/train.csv.gz"), "0\n2\n");
    gz(&dir.join("split/scaffold/valid.csv.gz"), "1\n");
    gz(&dir.join("split/scaffold/test.csv.gz"), "1\n");
    let ds = OgbGraphDataset::open("ogbg-molhiv", Some(&root)).unwrap();
    assert_eq!(ds.graphs.len(), 3);
    let (a, b, c) = (&ds.graphs[0], &ds.graphs[1], &ds.graphs[2]);
    assert_eq!(
        (a.senders.clone(), a.receivers.clone()),
        (vec![0, 1, 1, 2], vec![1, 0, 2, 1])
    );
    assert_eq!((b.num_nodes, b.senders.len()), (1, 0));
    assert_eq!(
        (c.senders.clone(), c.receivers.clone()),
        (vec![0, 1], vec![1, 0])
    );
    assert_eq!(i64s(c.nodes.main.as_ref().unwrap()), [6, 1, 8, 0]);
    assert_eq!(i64s(c.edges.main.as_ref().unwrap()), [0, 0, 0, 0]);
    assert_eq!(
        i64s(a.edges.main.as_ref().unwrap()),
        [1, 0, 1, 0, 2, 1, 2, 1]
    );
    // Binary labels: [1, T] floats, NaN kept; y_true for the evaluator.
    assert_eq!(f32s(&a.globals.named[LABELS]), [1.0]);
    assert!(f32s(&b.globals.named[LABELS])[0].is_nan());
    let y = ds.y_true(&[0, 2]).unwrap();
    assert_eq!(y, [1.0, 0.0]);
    assert_eq!(ds.evaluator().eval(&y, &[0.9, 0.2], [2, 1]).unwrap(), 1.0);
    assert_eq!(ds.split.train, [0, 2]);
    // The graphs batch into one GraphsTuple.
    let device = Device::flex();
    let graphs: Vec<_> = ds
        .graphs
        .iter()
        .map(|g| burn_gnn_graph::GraphsTuple::from_graph_data(g, &device).unwrap())
        .collect();
    let batch = burn_gnn_graph::batch(&graphs).unwrap();
    assert_eq!(
        (batch.sum_n_node(), batch.sum_n_edge(), batch.n_graph()),
        (6, 6, 3)
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_node_dataset_in_ogbs_binary_layout() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ogb/binary_node");
    let info = OgbInfo::get("ogbn-papers100M").unwrap();
    let ds = OgbNodeDataset::open_dir(&dir, info).unwrap();
    let g = &ds.graph;
    assert_eq!(g.senders, [0, 1, 2, 3, 5]);
    assert_eq!(g.receivers, [1, 2, 0, 4, 4]);
    let x = g.nodes.main.as_ref().unwrap();
    assert_eq!(x.shape, [6, 3]);
    assert_eq!(f32s(x)[..4], [0.0, 0.25, 0.5, 0.75]);
    assert_eq!(
        i64s(&g.nodes.named["node_year"]),
        [2010, 2011, 2012, 2013, 2014, 2015]
    );
    // Float labels with NaN: single-task classes, -1 where unlabelled; NaN again in y_true.
    assert_eq!(i64s(&g.nodes.named[LABELS]), [3, -1, 1, 0, -1, 2]);
    assert!(ds.y_true(&[1]).unwrap()[0].is_nan());
    assert_eq!(
        (ds.split.train.clone(), ds.split.test.clone()),
        (vec![0, 2], vec![5])
    );
}

/// (file name, line, column, reason) of a table error.
fn table_error(e: DataError) -> (String, u64, Option<String>, String) {
    match e {
        DataError::Table {
            file,
            line,
            column,
            reason,
        } => (
            Path::new(&file)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            line,
            column,
            reason,
        ),
        other => panic!("expected a table error, got {other:?}"),
    }
}

#[test]
fn bad_layouts_name_the_file_and_line() {
    let root = scratch("bad");
    let dir = write_arxiv(&root);
    let raw = dir.join("raw");
    let open = || OgbNodeDataset::open("ogbn-arxiv", Some(&root));
    assert!(open().is_ok());

    // An edge to a node the graph does not have.
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n3,5\n4,0\n");
    let (file, line, column, reason) = table_error(open().unwrap_err());
    assert_eq!(
        (file.as_str(), line, column.as_deref()),
        ("edge.csv.gz", 3, Some("#1"))
    );
    assert!(reason.contains("node 5"), "{reason}");
    // A non-integer id; a row of three fields.
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2.5\n3,1\n4,0\n");
    let (_, line, column, reason) = table_error(open().unwrap_err());
    assert_eq!((line, column.as_deref()), (2, Some("#1")));
    assert!(reason.contains("integers"), "{reason}");
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n3,1,1\n4,0\n");
    assert_eq!(table_error(open().unwrap_err()).1, 3);
    // Edge counts that do not add up.
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n3,1\n");
    let (file, _, _, reason) = table_error(open().unwrap_err());
    assert_eq!(file, "num-edge-list.csv.gz");
    assert!(reason.contains("add up to 4"), "{reason}");
    gz(&raw.join("edge.csv.gz"), "0,1\n1,2\n3,1\n4,0\n");
    // A feature that is not a number; a feature table one row short.
    gz(
        &raw.join("node-feat.csv.gz"),
        "0.5,-1.0\n1.5,x\n0,0\n0,0\n0,0\n",
    );
    let (file, line, column, _) = table_error(open().unwrap_err());
    assert_eq!(
        (file.as_str(), line, column.as_deref()),
        ("node-feat.csv.gz", 2, Some("#1"))
    );
    gz(&raw.join("node-feat.csv.gz"), "0.5,-1.0\n1.5,2\n0,0\n0,0\n");
    let (file, line, _, reason) = table_error(open().unwrap_err());
    assert_eq!((file.as_str(), line), ("node-feat.csv.gz", 5));
    assert!(reason.contains("4 rows"), "{reason}");
    gz(&raw.join("node-feat.csv.gz"), "0,0\n0,0\n0,0\n0,0\n0,0\n");
    // Labels of another length; a split id out of range.
    gz(&raw.join("node-label.csv.gz"), "1\n2\n");
    assert_eq!(table_error(open().unwrap_err()).0, "node-label.csv.gz");
    gz(&raw.join("node-label.csv.gz"), "1\n2\n3\n4\n5\n");
    gz(&dir.join("split/time/valid.csv.gz"), "2\n9\n");
    let (file, line, _, _) = table_error(open().unwrap_err());
    assert_eq!((file.as_str(), line), ("valid.csv.gz", 2));
    gz(&dir.join("split/time/valid.csv.gz"), "2\n");
    // A truncated gzip stream.
    let bytes = std::fs::read(raw.join("node_year.csv.gz")).unwrap();
    std::fs::write(raw.join("node_year.csv.gz"), &bytes[..bytes.len() - 9]).unwrap();
    assert_eq!(table_error(open().unwrap_err()).0, "node_year.csv.gz");
    gz(&raw.join("node_year.csv.gz"), "1\n2\n3\n4\n5\n");
    assert!(open().is_ok());
    // A missing required file, a missing dataset, a graph-level name for a node dataset.
    std::fs::remove_file(raw.join("num-node-list.csv.gz")).unwrap();
    assert!(matches!(open(), Err(DataError::MissingFile { .. })));
    assert!(matches!(
        OgbNodeDataset::open("ogbn-products", Some(&root)),
        Err(DataError::MissingFile { .. })
    ));
    assert!(matches!(
        OgbNodeDataset::open("ogbg-molhiv", Some(&root)),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        OgbNodeDataset::open("ogbn-mag", Some(&root)),
        Err(DataError::MissingFile { .. } | DataError::InvalidArgument(_))
    ));
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn mutated_binary_archives_never_panic() {
    // Every single-byte change of the committed data.npz gives a dataset or a typed error.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ogb/binary_node");
    let root = scratch("mutated");
    copy_folders(&src, &root, &["raw", "split/time"]);
    let original = std::fs::read(src.join("raw/data.npz")).unwrap();
    let info = OgbInfo::get("ogbn-papers100M").unwrap();
    let mut errors = 0;
    for i in (0..original.len()).step_by(7) {
        let mut bytes = original.clone();
        bytes[i] ^= 0x5a;
        std::fs::write(root.join("raw/data.npz"), &bytes).unwrap();
        if OgbNodeDataset::open_dir(&root, info.clone()).is_err() {
            errors += 1;
        }
    }
    assert!(errors > 0);
    std::fs::remove_dir_all(root).unwrap();
}

/// An ogbn-mag-shaped dataset: four node types, four relations, paper features and labels.
fn write_mag(root: &Path) -> PathBuf {
    let dir = root.join("ogbn_mag");
    let raw = dir.join("raw");
    gz(
        &raw.join("num-node-dict.csv.gz"),
        "author,field_of_study,institution,paper\n3,2,1,4\n",
    );
    // Written unsorted: OGB sorts the relations.
    gz(
        &raw.join("triplet-type-list.csv.gz"),
        "paper,cites,paper\nauthor,writes,paper\nauthor,affiliated_with,institution\npaper,has_topic,field_of_study\n",
    );
    let relations = [
        (
            "author___affiliated_with___institution",
            "0,0\n2,0\n",
            "0\n0\n",
        ),
        ("author___writes___paper", "0,1\n1,1\n2,3\n", "1\n1\n1\n"),
        ("paper___cites___paper", "1,0\n3,1\n", "2\n2\n"),
        (
            "paper___has_topic___field_of_study",
            "0,1\n2,0\n3,1\n",
            "3\n3\n3\n",
        ),
    ];
    for (name, edges, reltype) in relations {
        let folder = raw.join("relations").join(name);
        gz(&folder.join("edge.csv.gz"), edges);
        gz(
            &folder.join("num-edge-list.csv.gz"),
            &format!("{}\n", edges.lines().count()),
        );
        gz(&folder.join("edge_reltype.csv.gz"), reltype);
    }
    gz(
        &raw.join("node-feat/paper/node-feat.csv.gz"),
        "0.5,1.5\n-1,2\n0,0\n3.25,4\n",
    );
    gz(
        &raw.join("node-feat/paper/node_year.csv.gz"),
        "2010\n2011\n2019\n2019\n",
    );
    gz(
        &raw.join("nodetype-has-label.csv.gz"),
        "author,field_of_study,institution,paper\nFalse,False,False,True\n",
    );
    gz(
        &raw.join("node-label/paper/node-label.csv.gz"),
        "5\n348\n0\n5\n",
    );
    let split = dir.join("split/time");
    gz(
        &split.join("nodetype-has-split.csv.gz"),
        "author,field_of_study,institution,paper\nFalse,False,False,True\n",
    );
    gz(&split.join("paper/train.csv.gz"), "0\n1\n");
    gz(&split.join("paper/valid.csv.gz"), "2\n");
    gz(&split.join("paper/test.csv.gz"), "3\n");
    dir
}

#[test]
fn a_heterogeneous_node_dataset_in_ogbs_csv_layout() {
    use burn_gnn_data::ogb::OgbHeteroNodeDataset;
    use burn_gnn_graph::EdgeType;
    let root = scratch("mag");
    let dir = write_mag(&root);
    let ds = OgbHeteroNodeDataset::open("ogbn-mag", Some(&root)).unwrap();
    let g = &ds.graph;
    let counts: Vec<_> = g
        .node_sets
        .iter()
        .map(|(t, s)| (t.as_str(), s.num_nodes))
        .collect();
    assert_eq!(
        counts,
        [
            ("author", 3),
            ("field_of_study", 2),
            ("institution", 1),
            ("paper", 4)
        ]
    );
    let types: Vec<_> = g.edge_sets.iter().map(|s| s.edge_type.clone()).collect();
    assert_eq!(
        types,
        [
            EdgeType::new("author", "affiliated_with", "institution"),
            EdgeType::new("author", "writes", "paper"),
            EdgeType::new("paper", "cites", "paper"),
            EdgeType::new("paper", "has_topic", "field_of_study"),
        ]
    );
    let writes = &g.edge_sets[1];
    assert_eq!(
        (writes.senders.clone(), writes.receivers.clone()),
        (vec![0, 1, 2], vec![1, 1, 3])
    );
    assert_eq!(i64s(&writes.features.named["edge_reltype"]), [1, 1, 1]);
    let paper = &g.node_sets["paper"].features;
    assert_eq!(
        f32s(paper.main.as_ref().unwrap()),
        [0.5, 1.5, -1.0, 2.0, 0.0, 0.0, 3.25, 4.0]
    );
    assert_eq!(i64s(&paper.named["node_year"]), [2010, 2011, 2019, 2019]);
    assert_eq!(i64s(&paper.named[LABELS]), [5, 348, 0, 5]);
    assert!(g.node_sets["author"].features.main.is_none());
    let split = &ds.split["paper"];
    assert_eq!(
        (split.train.clone(), split.valid.clone(), split.test.clone()),
        (vec![0, 1], vec![2], vec![3])
    );
    assert_eq!(ds.split.len(), 1);
    assert_eq!(ds.y_true("paper", &split.test).unwrap(), [5.0]);
    assert!(matches!(
        ds.y_true("author", &[0]),
        Err(DataError::InvalidArgument(_))
    ));
    let graph = ds.graph(&Device::flex()).unwrap();
    assert_eq!(graph.to_data().unwrap(), ds.graph);
    // The homogeneous reader points to this one.
    assert!(matches!(
        OgbNodeDataset::open("ogbn-mag", Some(&root)),
        Err(DataError::InvalidArgument(_))
    ));
    // A paper id past the four papers, in the relation's own file.
    gz(
        &dir.join("raw/relations/paper___cites___paper/edge.csv.gz"),
        "1,0\n3,4\n",
    );
    let (file, line, column, reason) =
        table_error(OgbHeteroNodeDataset::open("ogbn-mag", Some(&root)).unwrap_err());
    assert_eq!(
        (file.as_str(), line, column.as_deref()),
        ("edge.csv.gz", 2, Some("#1"))
    );
    assert!(reason.contains("`paper`"), "{reason}");
    std::fs::remove_dir_all(root).unwrap();
}

/// What OGB's own `LinkPropPredDataset` read from `ogbl_collab/` (make_link.py): name → (shape,
/// values).
fn ogb_read(file: &str) -> std::collections::HashMap<String, (Vec<usize>, Vec<f64>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ogb")
        .join(file);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (name, rest) = l.split_once(' ').unwrap();
            let (shape, values) = rest.split_once("] ").unwrap();
            let shape = shape
                .trim_start_matches('[')
                .split(", ")
                .map(|d| d.parse().unwrap())
                .collect();
            let values = values.split(' ').map(|v| v.parse().unwrap()).collect();
            (name.to_string(), (shape, values))
        })
        .collect()
}

fn as_f64(f: &FeatureData) -> (Vec<usize>, Vec<f64>) {
    let values = match &f.values {
        FeatureValues::F32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::F64(v) => v.clone(),
        FeatureValues::I32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::I64(v) => v.iter().map(|&x| x as f64).collect(),
    };
    (f.shape.clone(), values)
}

#[test]
fn a_link_dataset_reads_as_ogb_reads_it() {
    use burn_gnn_data::ogb::OgbLinkDataset;
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ogb");
    let ds = OgbLinkDataset::open("ogbl-collab", Some(&fixtures)).unwrap();
    let want = ogb_read("ogbl_collab_expected.txt");
    let g = &ds.graph;
    let (shape, edge_index) = &want["edge_index"];
    let e = shape[1];
    let ids = |v: &[i64]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    assert_eq!(ids(&g.senders), edge_index[..e]);
    assert_eq!(ids(&g.receivers), edge_index[e..]);
    assert_eq!(as_f64(g.nodes.main.as_ref().unwrap()), want["node_feat"]);
    assert_eq!(as_f64(&g.edges.named["edge_weight"]), want["edge_weight"]);
    assert_eq!(as_f64(&g.edges.named["edge_year"]), want["edge_year"]);
    assert_eq!(g.num_nodes as f64, want["num_nodes"].1[0]);
    // The split: every tensor OGB loaded from the .pt files, with its shape and values.
    let mut count = 0;
    for (name, part) in [
        ("train", &ds.split.train),
        ("valid", &ds.split.valid),
        ("test", &ds.split.test),
    ] {
        for (key, tensor) in &part.tensors {
            assert_eq!(
                as_f64(tensor),
                want[&format!("{name}.{key}")],
                "{name}.{key}"
            );
            count += 1;
        }
    }
    assert_eq!(count, want.keys().filter(|k| k.contains('.')).count());
    let (s, r) = ds.split.valid.pairs("edge_neg").unwrap();
    assert_eq!((s, r), (vec![1, 2, 3], vec![4, 5, 3]));
    assert!(matches!(
        ds.split.valid.pairs("year"),
        Err(DataError::InvalidArgument(_))
    ));
    assert_eq!(ds.evaluator().metric, OgbMetric::HitsAt(50));
}

#[test]
fn bad_link_splits_name_the_file() {
    use burn_gnn_data::ogb::OgbLinkDataset;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/ogb/ogbl_collab");
    let root = scratch("link");
    let dir = root.join("ogbl_collab");
    copy_folders(&src, &dir, &["raw", "split/time"]);
    let open = || OgbLinkDataset::open("ogbl-collab", Some(&root));
    assert!(open().is_ok());
    // Five nodes (node features, which would be one row long, left out) where train.pt's
    // edges name node 5.
    std::fs::remove_file(dir.join("raw/node-feat.csv.gz")).unwrap();
    gz(&dir.join("raw/num-node-list.csv.gz"), "5\n");
    gz(&dir.join("raw/edge.csv.gz"), "0,1\n1,2\n3,1\n4,0\n0,0\n");
    match open().unwrap_err() {
        DataError::Array { file, reason } => {
            assert!(file.ends_with("train.pt:edge"), "{file}");
            assert!(reason.contains("node 5"), "{reason}");
        }
        other => panic!("expected an array error, got {other:?}"),
    }
    gz(&dir.join("raw/num-node-list.csv.gz"), "6\n");
    assert!(open().is_ok());
    // A truncated .pt, a missing one, bytes that are not PyTorch's format.
    let bytes = std::fs::read(src.join("split/time/valid.pt")).unwrap();
    std::fs::write(dir.join("split/time/valid.pt"), &bytes[..bytes.len() / 2]).unwrap();
    assert!(matches!(open(), Err(DataError::Array { file, .. }) if file.contains("valid.pt")));
    std::fs::write(dir.join("split/time/valid.pt"), b"not a checkpoint").unwrap();
    assert!(matches!(open(), Err(DataError::Array { file, .. }) if file.contains("valid.pt")));
    std::fs::remove_file(dir.join("split/time/valid.pt")).unwrap();
    assert!(matches!(open(), Err(DataError::MissingFile { .. })));
    // Every single-byte change of test.pt reads or is a typed error.
    std::fs::copy(
        src.join("split/time/valid.pt"),
        dir.join("split/time/valid.pt"),
    )
    .unwrap();
    let original = std::fs::read(src.join("split/time/test.pt")).unwrap();
    for i in (0..original.len()).step_by(5) {
        let mut bytes = original.clone();
        bytes[i] ^= 0x5a;
        std::fs::write(dir.join("split/time/test.pt"), &bytes).unwrap();
        let _ = open();
    }
    std::fs::remove_dir_all(root).unwrap();
}

#[cfg(feature = "download")]
mod download {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    use burn_gnn_data::ogb::{OgbInfo, OgbNodeDataset};
    use burn_gnn_data::{DataError, DownloadEvent, download_ogb_from};

    use super::{scratch, write_arxiv};

    /// A zip of the folder `dir` with its entries under `prefix/`, plus `extra` entries.
    fn zip_of(dir: &std::path::Path, prefix: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let relative = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                zip.start_file(format!("{prefix}/{relative}"), options)
                    .unwrap();
                zip.write_all(&std::fs::read(&path).unwrap()).unwrap();
            }
        }
        for (name, bytes) in extra {
            zip.start_file(*name, options).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    /// Serves `body` at any path, announcing `announced` bytes (the body's length if `None`).
    fn serve_announcing(body: Vec<u8>, announced: Option<usize>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/arxiv.zip", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                let mut reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    announced.unwrap_or(body.len())
                )
                .into_bytes();
                reply.extend(&body);
                let _ = stream.write_all(&reply);
            }
        });
        url
    }

    /// Serves `body` at any path.
    fn serve(body: Vec<u8>) -> String {
        serve_announcing(body, None)
    }

    #[test]
    fn a_dataset_downloads_unpacks_and_reads() {
        let source = scratch("dl-src");
        let folder = write_arxiv(&source);
        let info = OgbInfo::get("ogbn-arxiv").unwrap();
        // As OGB's zips are laid out: everything under the download name (`arxiv/`).
        let url = serve(zip_of(&folder, "arxiv", &[]));
        let root = scratch("dl-root");
        let mut events = Vec::new();
        let dir = download_ogb_from(&url, &info, &root, |e| events.push(e)).unwrap();
        assert_eq!(dir, root.join("ogbn_arxiv"));
        assert!(matches!(
            events.first(),
            Some(DownloadEvent::Start { total: Some(_), .. })
        ));
        assert!(matches!(events.last(), Some(DownloadEvent::Done { file }) if file == "arxiv.zip"));
        // Read from the download as from the folder it came from; nothing else is left.
        let read = OgbNodeDataset::open("ogbn-arxiv", Some(&root)).unwrap();
        let original = OgbNodeDataset::open("ogbn-arxiv", Some(&source)).unwrap();
        assert_eq!(read.graph, original.graph);
        assert_eq!(read.split, original.split);
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["ogbn_arxiv"]);
        // Present: nothing is fetched again (the server would serve the same; no events).
        let mut again = Vec::new();
        download_ogb_from(&url, &info, &root, |e| again.push(e)).unwrap();
        assert!(again.is_empty());
        std::fs::remove_dir_all(root).unwrap();

        // An entry outside the dataset's folder, a truncated zip: typed errors, nothing left.
        for body in [
            zip_of(&folder, "arxiv", &[("../evil.txt", b"x")]),
            zip_of(&folder, "arxiv", &[])[..200].to_vec(),
        ] {
            let url = serve(body);
            let root = scratch("dl-bad");
            let e = download_ogb_from(&url, &info, &root, |_| {}).unwrap_err();
            assert!(matches!(e, DataError::Download { .. }), "{e:?}");
            let left = std::fs::read_dir(&root).unwrap().count();
            assert_eq!(left, 0, "{e}");
            std::fs::remove_dir_all(root).unwrap();
        }
        // A body that breaks off before the announced length: no partial zip is left either.
        let body = zip_of(&folder, "arxiv", &[]);
        let url = serve_announcing(body.clone(), Some(body.len() + 1000));
        let root = scratch("dl-short");
        let e = download_ogb_from(&url, &info, &root, |_| {}).unwrap_err();
        assert!(matches!(e, DataError::Download { .. }), "{e:?}");
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "{e}");
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(source).unwrap();
    }
}
