//! Planetoid against the published statistics (PyG's dataset table), on the canonical raw files
//! in `../shared/datasets/planetoid/raw` (or `BURN_GNN_TEST_DATA`), and the pickle reader
//! against corrupt input.

use std::path::PathBuf;

use burn::tensor::Device;
use burn_gnn_data::{DataError, Planetoid, check_pickle};
use proptest::prelude::*;

fn raw_dir() -> PathBuf {
    std::env::var_os("BURN_GNN_TEST_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/planetoid/raw")
        })
}

fn count(mask: &[bool]) -> usize {
    mask.iter().filter(|&&m| m).count()
}

#[test]
fn cora_matches_the_published_statistics() {
    let d = Planetoid::load("Cora", &raw_dir()).unwrap();
    assert_eq!(
        (d.num_nodes, d.senders.len(), d.num_features, d.num_classes),
        (2708, 10556, 1433, 7)
    );
    assert_eq!(
        (
            count(&d.train_mask),
            count(&d.val_mask),
            count(&d.test_mask)
        ),
        (140, 500, 1000)
    );
    let mut per_class = [0usize; 7];
    d.labels.iter().for_each(|&l| per_class[l as usize] += 1);
    assert_eq!(per_class, [351, 217, 418, 818, 426, 298, 180]);
    // 20 training nodes per class; masks disjoint.
    let mut train = [0usize; 7];
    (0..d.num_nodes)
        .filter(|&i| d.train_mask[i])
        .for_each(|i| train[d.labels[i] as usize] += 1);
    assert_eq!(train, [20; 7]);
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
    let mut d = Planetoid::load("citeseer", &raw_dir()).unwrap();
    assert_eq!(
        (d.num_nodes, d.senders.len(), d.num_features, d.num_classes),
        (3327, 9104, 3703, 6)
    );
    assert_eq!(
        (
            count(&d.train_mask),
            count(&d.val_mask),
            count(&d.test_mask)
        ),
        (120, 500, 1000)
    );
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
fn missing_files_unknown_names_and_bad_checksums_are_clear_errors() {
    let e = Planetoid::load("pubmed", &raw_dir()).unwrap_err();
    assert!(matches!(e, DataError::MissingFile { .. }), "{e}");
    assert!(
        e.to_string().contains("ind.pubmed.allx") && e.to_string().contains("--data-dir"),
        "{e}"
    );
    assert!(matches!(
        Planetoid::load("reddit", &raw_dir()),
        Err(DataError::UnknownDataset(_))
    ));
    // A copy of Cora with one byte changed fails its checksum.
    let dir = std::env::temp_dir().join(format!("burn-gnn-data-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"] {
        std::fs::copy(
            raw_dir().join(format!("ind.cora.{f}")),
            dir.join(format!("ind.cora.{f}")),
        )
        .unwrap();
    }
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
