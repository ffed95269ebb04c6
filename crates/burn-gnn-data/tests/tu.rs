//! The TU datasets against the published statistics (MUTAG from the embedded copy, the other
//! four from the data directory named by `BURN_GNN_DATA_DIR`, skipped with the reason printed
//! when it is not set), against an independent reading of the raw files, the lookup order of
//! `TuDataset::open`, every kind of malformed input, and the stratified k-fold splitter.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_data::{
    DATA_DIR_ENV, DataError, DataSource, TuDataset, TuFeatures, stratified_k_fold,
};
use burn_gnn_graph::GraphsTuple;
use proptest::prelude::*;

fn embedded_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/tu/MUTAG")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burn-gnn-tu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn no_download(e: burn_gnn_data::DownloadEvent) {
    panic!("nothing may be downloaded here: {e:?}")
}

/// The shared data directory, or `None` after printing why the test is skipped.
fn data_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os(DATA_DIR_ENV) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("skipping {test}: {DATA_DIR_ENV} is not set (CI sets it)");
            None
        }
    }
}

/// Graphs, nodes, distinct directed edges and graphs per class (by raw label value).
fn assert_counts(
    d: &TuDataset,
    graphs: usize,
    nodes: usize,
    edges: usize,
    classes: &[(i64, usize)],
) {
    assert_eq!(
        (d.graphs.len(), d.num_nodes(), d.num_edges()),
        (graphs, nodes, edges),
        "{}",
        d.name
    );
    let mut per_class = BTreeMap::new();
    for g in &d.graphs {
        *per_class.entry(d.class_values[g.label]).or_insert(0) += 1;
    }
    let expected: BTreeMap<i64, usize> = classes.iter().copied().collect();
    assert_eq!(per_class, expected, "{}", d.name);
}

#[test]
fn mutag_matches_the_published_statistics() {
    let d = TuDataset::embedded("mutag").unwrap();
    // 3371 nodes, 3721 undirected edges (7442 directed), 125 mutagenic : 63 not.
    assert_counts(&d, 188, 3371, 7442, &[(-1, 63), (1, 125)]);
    assert_eq!(d.class_values, vec![-1, 1]);
    assert_eq!((d.node_label_width, d.edge_feature_width), (7, 4));
    assert_eq!((d.node_attribute_width, d.graph_attribute_width), (0, 0));
}

#[test]
fn the_other_four_match_the_published_statistics() {
    let Some(dir) = data_dir("the_other_four_match_the_published_statistics") else {
        return;
    };
    let open = |name| TuDataset::open(name, Some(&dir), no_download).unwrap().0;
    let proteins = open("PROTEINS");
    assert_counts(&proteins, 1113, 43471, 162088, &[(1, 663), (2, 450)]);
    assert_eq!(
        (proteins.node_label_width, proteins.node_attribute_width),
        (3, 1)
    );
    let enzymes = open("enzymes");
    let six: Vec<(i64, usize)> = (1..=6).map(|c| (c, 100)).collect();
    assert_counts(&enzymes, 600, 19580, 74564, &six);
    assert_eq!(
        (enzymes.node_label_width, enzymes.node_attribute_width),
        (3, 18)
    );
    let nci1 = open("NCI1");
    assert_counts(&nci1, 4110, 122747, 265506, &[(0, 2053), (1, 2057)]);
    assert_eq!(nci1.node_label_width, 37);
    // IMDB-BINARY's _A lists every directed edge twice: 386124 lines, 193062 distinct edges.
    let imdb = open("imdb-binary");
    assert_counts(&imdb, 1000, 19773, 193062, &[(0, 500), (1, 500)]);
    assert_eq!(imdb.node_label_width, 0);
    assert_eq!(
        imdb.max_degree(),
        135,
        "PyG's OneHotDegree(135) for IMDB-BINARY"
    );
}

/// An independent reading of a TU folder: per graph its node count, its set of directed edges
/// (local ids), each node's raw label and the raw graph label.
type Raw = Vec<(usize, BTreeSet<(i64, i64)>, Vec<i64>, i64)>;

fn read_raw(dir: &Path, name: &str) -> Raw {
    let read = |suffix: &str| -> Vec<Vec<i64>> {
        std::fs::read_to_string(dir.join(format!("{name}_{suffix}.txt")))
            .map(|t| {
                t.lines()
                    .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
                    .collect()
            })
            .unwrap_or_default()
    };
    let indicator: Vec<usize> = read("graph_indicator")
        .iter()
        .map(|r| r[0] as usize)
        .collect();
    let labels = read("graph_labels");
    let node_labels = read("node_labels");
    let mut graphs: Raw = labels
        .iter()
        .map(|l| (0, BTreeSet::new(), Vec::new(), l[0]))
        .collect();
    let mut first = BTreeMap::new();
    for (node, &g) in indicator.iter().enumerate() {
        first.entry(g).or_insert(node);
        graphs[g - 1].0 += 1;
        graphs[g - 1]
            .2
            .push(node_labels.get(node).map_or(0, |r| r[0]));
    }
    for e in read("A") {
        let (s, r) = (e[0] as usize - 1, e[1] as usize - 1);
        let g = indicator[s];
        let base = first[&g] as i64;
        graphs[g - 1].1.insert((s as i64 - base, r as i64 - base));
    }
    graphs
}

/// Every graph of `d` against [`read_raw`]: nodes, edges, the one-hot position of each node's
/// label (its raw value minus the smallest), the class order.
fn assert_same_as_raw(d: &TuDataset, raw: &Raw) {
    assert_eq!(d.graphs.len(), raw.len());
    let min_label = raw
        .iter()
        .flat_map(|g| g.2.iter())
        .min()
        .copied()
        .unwrap_or(0);
    for (g, (n, edges, labels, class)) in d.graphs.iter().zip(raw) {
        assert_eq!(g.num_nodes, *n);
        let ours: BTreeSet<(i64, i64)> = g
            .senders
            .iter()
            .copied()
            .zip(g.receivers.iter().copied())
            .collect();
        assert_eq!(ours.len(), g.num_edges(), "no duplicate edges");
        assert_eq!(&ours, edges);
        assert_eq!(d.class_values[g.label], *class);
        let w = d.node_label_width;
        for (node, &label) in labels.iter().enumerate().filter(|_| w > 0) {
            let row = &g.node_labels[node * w..(node + 1) * w];
            assert_eq!(row.iter().sum::<f32>(), 1.0);
            assert_eq!(row[(label - min_label) as usize], 1.0);
        }
    }
}

#[test]
fn mutag_equals_an_independent_reading_of_its_files() {
    let d = TuDataset::embedded("MUTAG").unwrap();
    assert_same_as_raw(&d, &read_raw(&embedded_dir(), "MUTAG"));
    // Sorted by receiver, then sender.
    for g in &d.graphs {
        let pairs: Vec<_> = g.receivers.iter().zip(&g.senders).collect();
        assert!(pairs.windows(2).all(|w| w[0] < w[1]));
    }
}

#[test]
fn the_shared_copies_equal_an_independent_reading_of_their_files() {
    let Some(dir) = data_dir("the_shared_copies_equal_an_independent_reading") else {
        return;
    };
    for name in ["PROTEINS", "ENZYMES", "NCI1", "IMDB-BINARY"] {
        let (d, source) = TuDataset::open(name, Some(&dir), no_download).unwrap();
        let DataSource::Dir(folder) = source else {
            panic!("{name} came from {source}")
        };
        assert_same_as_raw(&d, &read_raw(&folder, name));
    }
}

#[test]
fn graph_data_builds_the_asked_features_and_batches() {
    let d = TuDataset::embedded("MUTAG").unwrap();
    let device = Device::flex();
    let features = TuFeatures {
        node_attributes: false,
        one_hot_degree: Some(d.max_degree()),
    };
    let width = d.num_node_features(features);
    assert_eq!(width, 7 + d.max_degree() + 1);
    let graphs: Vec<GraphsTuple> = (0..d.graphs.len())
        .map(|i| {
            let data = d.graph_data(i, features).unwrap();
            GraphsTuple::from_graph_data(&data, &device).unwrap()
        })
        .collect();
    let all = burn_gnn_graph::batch(&graphs).unwrap();
    assert_eq!(
        (all.n_graph(), all.sum_n_node(), all.sum_n_edge()),
        (188, 3371, 7442)
    );
    let x: Vec<f32> = all
        .node_tensor::<2>()
        .unwrap()
        .into_data()
        .iter::<f32>()
        .collect();
    // Each node row: one label bit and one degree bit, the degree bit at its out-degree.
    let g = &d.graphs[0];
    for node in 0..g.num_nodes {
        let row = &x[node * width..(node + 1) * width];
        assert_eq!(row.iter().sum::<f32>(), 2.0);
        let degree = g.senders.iter().filter(|&&s| s as usize == node).count();
        assert_eq!(row[7 + degree], 1.0);
    }
    let edges = all.edge_tensor::<2>().expect("MUTAG's one-hot edge labels");
    assert_eq!(edges.dims(), [7442, 4]);
    // Too small a degree maximum, and no node features at all, are errors.
    let small = TuFeatures {
        node_attributes: false,
        one_hot_degree: Some(1),
    };
    assert!(matches!(
        d.graph_data(0, small),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        d.graph_data(188, TuFeatures::default()),
        Err(DataError::InvalidArgument(_))
    ));
}

/// A tiny dataset from text: two graphs (nodes 1-2 and 3-5).
fn tiny(files: &[(&str, &str)]) -> Result<TuDataset, DataError> {
    let base: BTreeMap<&str, &str> = [
        ("A", "1, 2\n2, 1\n3, 4\n4, 3\n4, 5\n5, 4\n"),
        ("graph_indicator", "1\n1\n2\n2\n2\n"),
        ("graph_labels", "7\n-3\n"),
    ]
    .into_iter()
    .chain(files.iter().copied())
    .collect();
    TuDataset::from_files("TINY", |suffix| {
        Ok(base.get(suffix).map(|t| Cow::Owned(t.as_bytes().to_vec())))
    })
}

#[test]
fn a_tiny_dataset_reads_as_pyg_reads_it() {
    let d = tiny(&[
        ("node_labels", "4\n2\n2\n3\n4\n"),
        ("edge_labels", "0\n0\n1\n1\n0\n0\n"),
        ("graph_attributes", "0.5\n-1.5\n"),
    ])
    .unwrap();
    assert_eq!(d.class_values, vec![-3, 7]);
    assert_eq!(d.labels(), vec![1, 0]);
    assert_eq!(
        (
            d.node_label_width,
            d.edge_feature_width,
            d.graph_attribute_width
        ),
        (3, 2, 1)
    );
    let g = &d.graphs[1];
    assert_eq!(
        (g.num_nodes, g.senders.clone(), g.receivers.clone()),
        (3, vec![1, 0, 2, 1], vec![0, 1, 1, 2])
    );
    // Labels 2, 3, 4 one-hot over 2..=4.
    assert_eq!(g.node_labels, vec![1., 0., 0., 0., 1., 0., 0., 0., 1.]);
    // Edge (1 -> 0) is line 4 (label 1), (0 -> 1) line 3 (1), (2 -> 1) line 6 (0), (1 -> 2) line 5 (0).
    assert_eq!(g.edge_features, vec![0., 1., 0., 1., 1., 0., 1., 0.]);
    assert_eq!(g.graph_attributes, vec![-1.5]);
    // Duplicate lines are one edge.
    let doubled = tiny(&[("A", "1, 2\n1, 2\n2, 1\n3, 4\n")]).unwrap();
    assert_eq!(doubled.num_edges(), 3);
}

/// The error of `tiny(files)`, which must name `file` and `line`.
fn parse_error(files: &[(&str, &str)], file: &str, line: usize) -> String {
    match tiny(files) {
        Err(e @ DataError::Parse { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains(&format!("TINY_{file}.txt, line {line}:")),
                "{text}"
            );
            text
        }
        other => panic!("expected a parse error in {file} line {line}, got {other:?}"),
    }
}

#[test]
fn every_malformed_input_is_an_error_naming_file_and_line() {
    // Wrong column count, first line and later.
    parse_error(&[("A", "1, 2, 3\n")], "A", 1);
    parse_error(&[("A", "1, 2\n2\n")], "A", 2);
    // Node id 0, and past the end.
    parse_error(&[("A", "1, 2\n0, 1\n")], "A", 2);
    parse_error(&[("A", "1, 2\n\n2, 6\n")], "A", 3);
    // An edge across graphs.
    let text = parse_error(&[("A", "1, 2\n2, 3\n")], "A", 2);
    assert!(text.contains("graph 1 and graph 2"), "{text}");
    // Graph ids not 1, 2, 3, ...: a gap, a start past 1, going back.
    parse_error(
        &[("graph_indicator", "1\n1\n3\n3\n3\n")],
        "graph_indicator",
        3,
    );
    parse_error(
        &[("graph_indicator", "2\n2\n3\n3\n3\n")],
        "graph_indicator",
        1,
    );
    parse_error(
        &[("graph_indicator", "1\n2\n1\n2\n2\n")],
        "graph_indicator",
        3,
    );
    // Not a number; not finite; not UTF-8.
    parse_error(&[("graph_labels", "7\nx\n")], "graph_labels", 2);
    parse_error(
        &[("node_attributes", "1\n2\nnan\n4\n5\n")],
        "node_attributes",
        3,
    );
    parse_error(&[("node_labels", "1\n\u{0}\n1\n1\n1\n")], "node_labels", 2);
    match TuDataset::from_files("TINY", |s| {
        Ok((s == "A")
            .then(|| Cow::Borrowed(&b"1, 2\n\xff\n"[..]))
            .or_else(|| tiny_file(s).map(|t| Cow::Owned(t.as_bytes().to_vec()))))
    }) {
        Err(DataError::Parse { line: 2, .. }) => {}
        other => panic!("{other:?}"),
    }
    // Too few and too many lines.
    parse_error(&[("graph_labels", "7\n")], "graph_labels", 2);
    parse_error(&[("node_labels", "1\n1\n1\n1\n1\n1\n")], "node_labels", 6);
    parse_error(&[("edge_labels", "0\n0\n")], "edge_labels", 3);
    // The same edge twice with different labels.
    parse_error(&[("A", "1, 2\n1, 2\n"), ("edge_labels", "0\n1\n")], "A", 2);
    // A label column too wide to one-hot encode.
    parse_error(
        &[("node_labels", "0\n0\n0\n0\n99999999\n")],
        "node_labels",
        1,
    );
    // Missing required file.
    assert!(matches!(
        TuDataset::from_files("TINY", |s| Ok(tiny_file(s)
            .filter(|_| s != "graph_labels")
            .map(|t| Cow::Owned(t.as_bytes().to_vec())))),
        Err(DataError::MissingFile { .. })
    ));
}

fn tiny_file(suffix: &str) -> Option<&'static str> {
    match suffix {
        "A" => Some("1, 2\n2, 1\n"),
        "graph_indicator" => Some("1\n1\n2\n2\n2\n"),
        "graph_labels" => Some("7\n-3\n"),
        _ => None,
    }
}

#[test]
fn open_looks_in_the_data_dir_then_the_embedded_copy_and_checks_every_file() {
    // A data root with the files under tu/MUTAG.
    let root = scratch("root");
    let folder = root.join("tu").join("MUTAG");
    std::fs::create_dir_all(&folder).unwrap();
    for entry in std::fs::read_dir(embedded_dir()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, folder.join(path.file_name().unwrap())).unwrap();
    }
    std::fs::write(folder.join("README.txt~"), "ignored").unwrap();
    let (d, source) = TuDataset::open("mutag", Some(&root), no_download).unwrap();
    assert_eq!(source, DataSource::Dir(folder.clone()));
    assert_eq!(d, TuDataset::embedded("MUTAG").unwrap());
    // A directory without the files: the embedded copy.
    let empty = scratch("empty");
    let (_, source) = TuDataset::open("MUTAG", Some(&empty), no_download).unwrap();
    assert_eq!(source, DataSource::Embedded);
    // One changed byte: a checksum error naming the file.
    let labels = folder.join("MUTAG_graph_labels.txt");
    let mut bytes = std::fs::read(&labels).unwrap();
    bytes[0] = b'2';
    std::fs::write(&labels, bytes).unwrap();
    match TuDataset::load("MUTAG", &folder) {
        Err(DataError::Checksum { path, .. }) => assert_eq!(path, labels),
        other => panic!("{other:?}"),
    }
    // A missing file, and an unknown name.
    std::fs::remove_file(folder.join("MUTAG_A.txt")).unwrap();
    assert!(matches!(
        TuDataset::load("MUTAG", &folder),
        Err(DataError::MissingFile { .. })
    ));
    assert!(matches!(
        TuDataset::embedded("PROTEINS"),
        Err(DataError::NotEmbedded(_))
    ));
    match TuDataset::embedded("QM9") {
        Err(e @ DataError::UnknownDataset { .. }) => assert!(e.to_string().contains("mutag")),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(root);
    let _ = std::fs::remove_dir_all(empty);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Corrupt MUTAG files (bytes changed, the file cut short) give an error or a dataset,
    /// never a panic.
    #[test]
    fn the_reader_never_panics_on_corrupt_files(
        which in 0usize..5,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let suffixes = ["A", "edge_labels", "graph_indicator", "graph_labels", "node_labels"];
        let target = suffixes[which];
        let _ = TuDataset::from_files("MUTAG", |suffix| {
            let Ok(mut bytes) = std::fs::read(embedded_dir().join(format!("MUTAG_{suffix}.txt")))
            else {
                return Ok(None); // MUTAG has no such file
            };
            if suffix == target {
                for (at, v) in &edits {
                    let i = at.index(bytes.len());
                    bytes[i] = *v;
                }
                bytes.truncate(cut.index(bytes.len() + 1));
            }
            Ok(Some(Cow::Owned(bytes)))
        });
    }

    /// Folds are disjoint and complete, each class split as evenly as possible, the sizes
    /// within one of each other, the same for the same seed.
    #[test]
    fn stratified_folds_are_disjoint_complete_and_balanced(
        labels in prop::collection::vec(0usize..4, 2..200),
        k in 2usize..11,
        seed in any::<u64>(),
    ) {
        prop_assume!(k <= labels.len());
        let folds = stratified_k_fold(&labels, k, seed).unwrap();
        prop_assert_eq!(folds.len(), k);
        let mut seen = vec![0; labels.len()];
        for f in &folds {
            prop_assert!(f.test.windows(2).all(|w| w[0] < w[1]));
            let mut all: Vec<usize> = f.train.iter().chain(&f.test).copied().collect();
            all.sort_unstable();
            prop_assert_eq!(all, (0..labels.len()).collect::<Vec<_>>());
            for &i in &f.test {
                seen[i] += 1;
            }
        }
        prop_assert!(seen.iter().all(|&s| s == 1));
        let sizes: Vec<usize> = folds.iter().map(|f| f.test.len()).collect();
        prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        for c in 0..4 {
            let total = labels.iter().filter(|&&l| l == c).count();
            for f in &folds {
                let n = f.test.iter().filter(|&&i| labels[i] == c).count();
                prop_assert!(n == total / k || n == total.div_ceil(k), "class {} {} of {}", c, n, total);
            }
        }
        prop_assert_eq!(folds, stratified_k_fold(&labels, k, seed).unwrap());
    }
}

#[test]
fn k_fold_rejects_k_out_of_range() {
    assert!(matches!(
        stratified_k_fold(&[0, 1, 0], 1, 0),
        Err(DataError::InvalidArgument(_))
    ));
    assert!(matches!(
        stratified_k_fold(&[0, 1, 0], 4, 0),
        Err(DataError::InvalidArgument(_))
    ));
    // Different seeds shuffle differently (MUTAG's labels, 10 folds).
    let labels = TuDataset::embedded("MUTAG").unwrap().labels();
    assert_ne!(
        stratified_k_fold(&labels, 10, 0).unwrap(),
        stratified_k_fold(&labels, 10, 1).unwrap()
    );
}
