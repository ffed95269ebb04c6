//! Planetoid against the published statistics (PyG's dataset table): Cora and CiteSeer from
//! the copy embedded in the crate, PubMed from the data directory named by `BURN_GNN_DATA_DIR`
//! (skipped, with the reason printed, when it is not set); the lookup order of
//! `Planetoid::open`; and the pickle reader against corrupt input.

use std::path::{Path, PathBuf};

use burn::tensor::Device;
use burn_gnn_data::{DATA_DIR_ENV, DataError, DataSource, Planetoid, check_pickle};
use proptest::prelude::*;

/// The crate's embedded raw files as a directory (Cora and CiteSeer).
fn raw_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/planetoid")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("burn-gnn-data-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dataset(name: &str, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"] {
        let file = format!("ind.{name}.{f}");
        std::fs::copy(raw_dir().join(&file), to.join(&file)).unwrap();
    }
}

fn no_download(e: burn_gnn_data::DownloadEvent) {
    panic!("nothing may be downloaded here: {e:?}")
}

fn count(mask: &[bool]) -> usize {
    mask.iter().filter(|&&m| m).count()
}

/// Nodes, directed edges, features and classes; training, validation and test nodes.
fn assert_sizes(d: &Planetoid, sizes: (usize, usize, usize, usize), split: (usize, usize, usize)) {
    let (n, e, f, c) = sizes;
    assert_eq!(
        (d.num_nodes, d.senders.len(), d.num_features, d.num_classes),
        (n, e, f, c),
        "{}",
        d.name
    );
    let masks = (&d.train_mask, &d.val_mask, &d.test_mask);
    assert_eq!(
        (count(masks.0), count(masks.1), count(masks.2)),
        split,
        "{}",
        d.name
    );
}

#[test]
fn cora_matches_the_published_statistics() {
    let d = Planetoid::embedded("Cora").unwrap();
    assert_sizes(&d, (2708, 10556, 1433, 7), (140, 500, 1000));
    let mut per_class = [0usize; 7];
    d.labels.iter().for_each(|&l| per_class[l as usize] += 1);
    assert_eq!(per_class, [351, 217, 418, 818, 426, 298, 180]);
    // 20 training nodes per class; masks disjoint.
    let mut train = [0usize; 7];
    (0..d.num_nodes)
        .filter(|&i| d.train_mask[i])
        .for_each(|i| train[d.labels[i] as usize] += 1);
    assert_eq!(train, [20; 7]);
    // Kipf & Welling's split: nodes 0..140 train, 140..640 validate, 1708..2708 test.
    let rows = |mask: &[bool]| -> Vec<i64> {
        let t = Planetoid::mask_indices(mask, &Device::flex());
        t.into_data().iter::<i64>().collect()
    };
    assert_eq!(rows(&d.train_mask), (0..140).collect::<Vec<i64>>());
    assert_eq!(rows(&d.val_mask), (140..640).collect::<Vec<i64>>());
    assert_eq!(rows(&d.test_mask), (1708..2708).collect::<Vec<i64>>());
    assert!((0..d.num_nodes).all(|i| {
        [d.train_mask[i], d.val_mask[i], d.test_mask[i]]
            .iter()
            .filter(|&&m| m)
            .count()
            <= 1
    }));
    // Undirected, no self loops, binary bag-of-words features.
    let edges: std::collections::HashSet<(i64, i64)> = d
        .senders
        .iter()
        .copied()
        .zip(d.receivers.iter().copied())
        .collect();
    assert!(
        edges
            .iter()
            .all(|&(a, b)| a != b && edges.contains(&(b, a)))
    );
    assert!(d.features.iter().all(|&v| v == 0.0 || v == 1.0));
    let nnz = d.features.iter().filter(|&&v| v != 0.0).count();
    assert_eq!(nnz, 49216, "Cora's feature matrix has 49,216 non-zeros");
}

#[test]
fn citeseer_matches_the_published_statistics() {
    let mut d = Planetoid::embedded("citeseer").unwrap();
    assert_sizes(&d, (3327, 9104, 3703, 6), (120, 500, 1000));
    // The 15 isolated test-range nodes were padded with zero features.
    let zero_rows = d
        .features
        .chunks(d.num_features)
        .filter(|r| r.iter().all(|&v| v == 0.0))
        .count();
    assert!(zero_rows >= 15, "{zero_rows} all-zero feature rows");
    d.row_normalize();
    for row in d.features.chunks(d.num_features) {
        let s: f32 = row.iter().sum();
        assert!(s == 0.0 || (s - 1.0).abs() < 1e-5, "row sum {s}");
    }
    let g = d.graph(&Device::flex()).unwrap();
    assert_eq!((g.sum_n_node(), g.sum_n_edge()), (3327, 9104));
}

#[test]
fn pubmed_matches_the_published_statistics() {
    let Some(root) = std::env::var_os(DATA_DIR_ENV) else {
        println!(
            "skipped: {DATA_DIR_ENV} is not set (PubMed is not embedded; set it to a directory with the raw files)"
        );
        return;
    };
    let (mut d, source) = Planetoid::open("PubMed", Some(Path::new(&root)), no_download).unwrap();
    assert!(matches!(source, DataSource::Dir(_)), "{source:?}");
    assert_sizes(&d, (19717, 88648, 500, 3), (60, 500, 1000));
    let mut per_class = [0usize; 3];
    d.labels.iter().for_each(|&l| per_class[l as usize] += 1);
    assert_eq!(per_class, [4103, 7739, 7875]);
    // TF-IDF features: non-negative, 988,031 non-zeros.
    assert!(d.features.iter().all(|&v| v >= 0.0 && v.is_finite()));
    assert_eq!(d.features.iter().filter(|&&v| v != 0.0).count(), 988_031);
    d.row_normalize();
    let g = d.graph(&Device::flex()).unwrap();
    assert_eq!((g.sum_n_node(), g.sum_n_edge()), (19717, 88648));
}

#[test]
fn open_looks_in_the_data_directory_then_the_embedded_copy() {
    let embedded = Planetoid::embedded("cora").unwrap();
    // Files under `<root>/planetoid/raw` of a data directory are found there.
    let root = scratch("root");
    copy_dataset("cora", &root.join("planetoid/raw"));
    let (d, source) = Planetoid::open("cora", Some(&root), no_download).unwrap();
    assert_eq!(source, DataSource::Dir(root.join("planetoid/raw")));
    assert_eq!(
        (
            &d.features,
            &d.labels,
            &d.senders,
            &d.receivers,
            &d.test_mask
        ),
        (
            &embedded.features,
            &embedded.labels,
            &embedded.senders,
            &embedded.receivers,
            &embedded.test_mask
        )
    );
    // A data directory without CiteSeer: the embedded copy.
    let (d, source) = Planetoid::open("citeseer", Some(&root), no_download).unwrap();
    assert_eq!((source, d.num_nodes), (DataSource::Embedded, 3327));
    std::fs::remove_dir_all(&root).ok();
    // PubMed is not embedded.
    assert!(matches!(
        Planetoid::embedded("pubmed"),
        Err(DataError::NotEmbedded(_))
    ));
    assert!(matches!(
        Planetoid::open("reddit", None, no_download),
        Err(DataError::UnknownDataset { .. })
    ));
}

#[test]
fn missing_files_unknown_names_and_bad_checksums_are_clear_errors() {
    let e = Planetoid::load("pubmed", &raw_dir()).unwrap_err();
    assert!(matches!(e, DataError::MissingFile { .. }), "{e}");
    assert!(
        e.to_string().contains("ind.pubmed.") && e.to_string().contains("--data-dir"),
        "{e}"
    );
    assert!(matches!(
        Planetoid::load("reddit", &raw_dir()),
        Err(DataError::UnknownDataset { .. })
    ));
    // A copy of Cora with one byte changed fails its checksum.
    let dir = scratch("checksum");
    copy_dataset("cora", &dir);
    let mut y = std::fs::read(dir.join("ind.cora.ty")).unwrap();
    let last = y.len() - 2;
    y[last] ^= 1;
    std::fs::write(dir.join("ind.cora.ty"), y).unwrap();
    let e = Planetoid::load("cora", &dir).unwrap_err();
    assert!(
        matches!(e, DataError::Checksum { .. }) && e.to_string().contains("ind.cora.ty"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Truncated or mutated pickles are errors, never panics.
    #[test]
    fn the_pickle_reader_never_panics(file in 0usize..3, cut in any::<prop::sample::Index>(), edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8)) {
        let name = ["ind.cora.y", "ind.cora.x", "ind.cora.graph"][file];
        let mut bytes = std::fs::read(raw_dir().join(name)).unwrap();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        let cut = cut.index(bytes.len() + 1);
        let _ = check_pickle(&bytes[..cut]);
    }
}

#[test]
fn the_pickle_reader_accepts_every_canonical_file() {
    for entry in std::fs::read_dir(raw_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("ind.") && !name.ends_with("test.index") {
            check_pickle(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    assert!(
        check_pickle(b"\x80\x04K\x01.")
            .unwrap_err()
            .to_string()
            .contains("protocol 4")
    );
    let e = check_pickle(b"\x80\x02cos\nsystem\n(U\x02lstR.")
        .unwrap_err()
        .to_string();
    assert!(e.contains("refusing class os.system"), "{e}");
}
