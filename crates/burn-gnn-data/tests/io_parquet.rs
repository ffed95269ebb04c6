//! Parquet tables (feature `parquet`): files pyarrow wrote (tests/data/parquet/make.py) read as
//! the CSV pandas wrote from the same tables reads, row groups and codecs included; bad input
//! as typed errors naming file, row (and row group) and column; mutated bytes never panic.
#![cfg(feature = "parquet")]

use std::path::{Path, PathBuf};

use burn_gnn_data::DataError;
use burn_gnn_data::io::{EdgeTable, Features, IdKind, LabelKind, NodeTable, Table};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parquet")
        .join(name)
}

/// The line, column and reason of a table error.
fn at(e: DataError) -> (u64, Option<String>, String) {
    match e {
        DataError::Table {
            line,
            column,
            reason,
            ..
        } => (line, column, reason),
        other => panic!("expected a table error, got {other:?}"),
    }
}

#[test]
fn an_edge_list_reads_as_its_csv() {
    for ids in [IdKind::Index, IdKind::Integer, IdKind::Text] {
        let read = |table: Table| {
            EdgeTable::new(table)
                .source("src")
                .target("dst")
                .weight("weight")
                .ids(ids)
                .read()
                .unwrap()
        };
        let parquet = read(Table::parquet(fixture("edges.parquet")));
        let csv = read(Table::csv(fixture("edges.csv")));
        assert_eq!(parquet, csv, "{ids:?}");
        assert_eq!(parquet.data.senders.len(), 12);
    }
    // Columns by position, a feature column by name.
    let parquet = EdgeTable::new(Table::parquet(fixture("edges.parquet")))
        .source(0)
        .target(1)
        .features(Features::columns(["weight"]))
        .read()
        .unwrap();
    let csv = EdgeTable::new(Table::csv(fixture("edges.csv")))
        .source(0)
        .target(1)
        .features(Features::columns(["weight"]))
        .read()
        .unwrap();
    assert_eq!(parquet, csv);
}

#[test]
fn a_node_table_reads_as_its_csv() {
    let edges = || {
        Table::from_bytes(
            "edges.csv",
            "s,t\nn7,n3\na,b,n0\n".replace("a,b", "\"a,b\""),
        )
    };
    for features in [
        Features::columns(["age", "score"]),
        Features::vector("emb", ','),
    ] {
        let read = |table: Table, label: &str| {
            EdgeTable::new(edges())
                .ids(IdKind::Text)
                .nodes(
                    NodeTable::new(table)
                        .id("id")
                        .features(features.clone())
                        .label(label, LabelKind::Text),
                )
                .read()
                .unwrap()
        };
        for label in ["team", "kind"] {
            let parquet = read(Table::parquet(fixture("nodes.parquet")), label);
            let csv = read(Table::csv(fixture("nodes.csv")), label);
            assert_eq!(parquet.data, csv.data, "{features:?} {label}");
            assert_eq!(parquet.index, csv.index);
            assert_eq!(parquet.classes, csv.classes);
        }
    }
    // The null label is an unlabelled node, as an empty CSV field.
    let g = EdgeTable::new(edges())
        .ids(IdKind::Text)
        .nodes(
            NodeTable::new(Table::parquet(fixture("nodes.parquet"))).label("team", LabelKind::Text),
        )
        .read()
        .unwrap();
    assert_eq!(g.labels(), Some(&[1, -1, 0, 1][..]));
}

#[test]
fn narrow_integers_convert_exactly() {
    let g = EdgeTable::new(Table::parquet(fixture("small_ints.parquet")))
        .read()
        .unwrap();
    // Integer ids -1, 0, 1, 2, 3, 65535 numbered in ascending order.
    assert_eq!(g.data.senders, [1, 3, 5]);
    assert_eq!(g.data.receivers, [2, 0, 4]);
    // As rows, -1 is not a row: row 2 (row group 0), column `t`.
    let e = EdgeTable::new(Table::parquet(fixture("small_ints.parquet")))
        .ids(IdKind::Index)
        .read()
        .unwrap_err();
    let (line, column, reason) = at(e);
    assert_eq!((line, column.as_deref()), (2, Some("t")));
    assert!(reason.contains("row group 0"), "{reason}");
}

#[test]
fn bad_parquet_is_a_typed_error() {
    // A column type the reader does not hold, taken as a feature: row 1, its column.
    let e = EdgeTable::new(Table::parquet(fixture("timestamps.parquet")))
        .features(Features::Rest)
        .read()
        .unwrap_err();
    let (line, column, reason) = at(e);
    assert_eq!((line, column.as_deref()), (1, Some("when")));
    assert!(reason.contains("not read"), "{reason}");
    // A missing column lists the file's columns.
    let e = EdgeTable::new(Table::parquet(fixture("edges.parquet")))
        .source("from")
        .read()
        .unwrap_err();
    assert!(e.to_string().contains("src, dst, weight"), "{e}");
    // A missing file, a file that is not Parquet, truncated and mutated files.
    assert!(matches!(
        EdgeTable::new(Table::parquet(fixture("absent.parquet"))).read(),
        Err(DataError::Io { .. })
    ));
    let dir = std::env::temp_dir().join(format!("burn-gnn-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.parquet");
    let original = std::fs::read(fixture("edges.parquet")).unwrap();
    let read = || {
        EdgeTable::new(Table::parquet(&path))
            .source("src")
            .target("dst")
            .weight("weight")
            .read()
    };
    std::fs::write(&path, b"src,dst\n0,1\n").unwrap();
    assert!(matches!(read(), Err(DataError::Table { .. })));
    std::fs::write(&path, &original[..original.len() / 2]).unwrap();
    assert!(matches!(read(), Err(DataError::Table { .. })));
    let mut errors = 0;
    for i in (0..original.len()).step_by(3) {
        let mut bytes = original.clone();
        bytes[i] ^= 0x5a;
        std::fs::write(&path, &bytes).unwrap();
        errors += read().is_err() as usize;
    }
    assert!(errors > 0);
    std::fs::remove_dir_all(dir).unwrap();
}
