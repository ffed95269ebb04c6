//! The NumPy readers against files NumPy itself wrote (`tests/data/numpy/make.py`): every dtype,
//! byte order and memory order, `.npz` archives stored and compressed, PyG's graph names, and
//! every bad-input case as a typed error; mutated bytes never panic.

use std::borrow::Cow;
use std::path::PathBuf;

use burn_gnn_data::DataError;
use burn_gnn_data::io::{EDGE_WEIGHT, LABELS, NpyArray, NpyDType, NpzArchive, NumpyGraph};
use burn_gnn_graph::FeatureValues;
use proptest::prelude::*;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/numpy")
        .join(name)
}

/// `a2[i, j] = 10 i + j - 5` over shape (3, 4), in C order: make.py's formula, recomputed.
fn a2() -> Vec<i64> {
    (0..3)
        .flat_map(|i| (0..4).map(move |j| 10 * i + j - 5))
        .collect()
}

fn array_error(e: DataError) -> String {
    match e {
        DataError::Array { .. } => e.to_string(),
        other => panic!("expected an array error, got {other:?}"),
    }
}

#[test]
fn every_dtype_byte_order_and_memory_order() {
    let want = a2();
    let want_f32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    for (dtype, kind) in [
        ("f4", NpyDType::F32),
        ("f8", NpyDType::F64),
        ("i4", NpyDType::I32),
        ("i8", NpyDType::I64),
    ] {
        for endian in ["le", "be"] {
            for order in ["C", "F"] {
                let name = format!("a2_{dtype}_{endian}_{order}.npy");
                let a = NpyArray::open(fixture(&name)).unwrap();
                assert_eq!(
                    (a.shape(), a.dtype(), a.len()),
                    (&[3, 4][..], kind, 12),
                    "{name}"
                );
                assert_eq!(a.to_f32().unwrap().as_ref(), &want_f32[..], "{name}");
                if dtype.starts_with('i') {
                    assert_eq!(a.to_i64().unwrap().as_ref(), &want[..], "{name}");
                } else {
                    assert!(a.to_i64().is_err(), "{name}: floats are not ids");
                }
                // A little-endian C-order array of the asked type is handed out in place.
                let in_place = |c: &Cow<'_, [f32]>| matches!(c, Cow::Borrowed(_));
                let expect = cfg!(target_endian = "little")
                    && endian == "le"
                    && order == "C"
                    && dtype == "f4";
                assert_eq!(in_place(&a.to_f32().unwrap()), expect, "{name}");
                let bytes = std::fs::read(fixture(&name)).unwrap();
                let from_bytes = NpyArray::from_bytes(name.clone(), bytes).unwrap();
                assert_eq!(from_bytes.to_f32().unwrap(), a.to_f32().unwrap());
            }
        }
    }
    // Three axes in Fortran order: a3[i, j, k] = 100 i + 10 j + k.
    let a3 = NpyArray::open(fixture("a3_i8_F.npy")).unwrap();
    let want: Vec<i64> = (0..2)
        .flat_map(|i| (0..3).flat_map(move |j| (0..2).map(move |k| 100 * i + 10 * j + k)))
        .collect();
    assert_eq!(a3.shape(), [2, 3, 2]);
    assert_eq!(a3.to_i64().unwrap().as_ref(), &want[..]);
    // bool, and a 0-d array.
    let mask = NpyArray::open(fixture("mask_b1.npy")).unwrap();
    let want: Vec<bool> = a2().iter().map(|v| v.rem_euclid(3) == 0).collect();
    assert_eq!(mask.to_bool().unwrap(), want);
    assert!(mask.to_f32().is_err());
    let scalar = NpyArray::open(fixture("scalar_i8.npy")).unwrap();
    assert_eq!(
        (scalar.shape(), scalar.to_i64().unwrap().as_ref()),
        (&[][..], &[-7][..])
    );
}

#[test]
fn npz_archives_stored_and_compressed_read_as_pyg_graphs() {
    for name in ["graph.npz", "graph_compressed.npz"] {
        let mut archive = NpzArchive::open(fixture(name)).unwrap();
        assert_eq!(
            archive.names(),
            ["edge_attr", "edge_index", "train_mask", "x", "y"],
            "{name}"
        );
        assert!(archive.array("nope").unwrap().is_none());
        let g = NumpyGraph::npz(fixture(name)).read().unwrap();
        assert_eq!(g.data.senders, [0, 1, 1, 2, 3], "{name}");
        assert_eq!(g.data.receivers, [1, 0, 2, 3, 0], "{name}");
        assert_eq!((g.data.num_nodes, g.index.len()), (4, 4));
        let x = g.data.nodes.main.as_ref().unwrap();
        let want: Vec<f32> = (0..12).map(|v| v as f32 / 4.0).collect();
        assert_eq!(
            (x.shape.clone(), x.values.clone()),
            (vec![4, 3], FeatureValues::F32(want))
        );
        assert_eq!(g.labels(), Some(&[1, 0, 2, 1][..]), "{name}");
        assert_eq!(g.num_classes(), Some(3));
        assert_eq!(g.masks["train_mask"], [true, true, false, false]);
        let e = g.data.edges.main.as_ref().unwrap();
        let want: Vec<f32> = (0..10).map(|v| v as f32).collect();
        assert_eq!(
            (e.shape.clone(), e.values.clone()),
            (vec![5, 2], FeatureValues::F32(want))
        );
        let graph = g.graph(&burn::tensor::Device::flex()).unwrap();
        assert_eq!((graph.sum_n_node(), graph.sum_n_edge()), (4, 5));
    }
}

#[test]
fn a_folder_of_npy_files() {
    let dir = std::env::temp_dir().join(format!("burn-gnn-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // edge_index in Fortran order, big-endian; a float y (regression) and an edge weight.
    std::fs::copy(fixture("a2_i8_be_F.npy"), dir.join("unused.npy")).unwrap();
    let mut archive = NpzArchive::open(fixture("graph_compressed.npz")).unwrap();
    let edge_index = archive.array("edge_index").unwrap().unwrap();
    assert_eq!(
        edge_index.to_i64().unwrap().as_ref(),
        [0, 1, 1, 2, 3, 1, 0, 2, 3, 0]
    );
    std::fs::write(
        dir.join("edge_index.npy"),
        npy(
            "<i8",
            &[2, 3],
            &[0i64, 1, 2, 1, 2, 4].map(i64::to_le_bytes).concat(),
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("edge_weight.npy"),
        npy(
            "<f8",
            &[3],
            &[0.5f64, 1.5, 2.5].map(f64::to_le_bytes).concat(),
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("num_nodes.npy"),
        npy("<i8", &[], &7i64.to_le_bytes()),
    )
    .unwrap();
    let g = NumpyGraph::dir(&dir).read().unwrap();
    assert_eq!(
        (g.data.senders.clone(), g.data.receivers.clone()),
        (vec![0, 1, 2], vec![1, 2, 4])
    );
    assert_eq!(g.data.num_nodes, 7);
    assert_eq!(
        g.data.edges.named[EDGE_WEIGHT].values,
        FeatureValues::F32(vec![0.5, 1.5, 2.5])
    );
    assert!(!g.data.nodes.named.contains_key(LABELS));
    // An id past num_nodes.
    std::fs::write(
        dir.join("num_nodes.npy"),
        npy("<i8", &[], &4i64.to_le_bytes()),
    )
    .unwrap();
    let e = array_error(NumpyGraph::dir(&dir).read().unwrap_err());
    assert!(
        e.contains("edge_index[1, 2] = 4 is not a node of 0..4"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A version 1.0 `.npy` file, written by hand as the format describes (for the cases NumPy
/// itself would not write: truncations, lies in the header).
fn npy(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
    let shape = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn bad_arrays_are_typed_errors() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not numpy at all".to_vec(), "not a readable .npy header"),
        (
            npy("<i8", &[3], &[0; 16]),
            "16 bytes of data where shape [3] of I64 needs 24",
        ),
        (npy("<i8", &[3], &[0; 32]), "32 bytes of data"),
        (npy("<u2", &[2], &[0; 4]), "dtype `<u2` is not held"),
        (std::fs::read(fixture("u2.npy")).unwrap(), "is not held"),
        (
            std::fs::read(fixture("strings.npy")).unwrap(),
            "is not held",
        ),
        (npy("<i8", &[usize::MAX, 4], &[]), "overflows"),
        // No values, but strides past u64.
        (npy("<i8", &[0, 1 << 40, 1 << 40], &[]), "overflows"),
    ];
    for (i, (bytes, reason)) in cases.into_iter().enumerate() {
        let e = array_error(NpyArray::from_bytes("a.npy", bytes).unwrap_err());
        assert!(
            e.starts_with("a.npy: ") && e.contains(reason),
            "case {i}: `{e}` lacks `{reason}`"
        );
    }
    // Conversions that would be wrong are refused.
    let floats = NpyArray::from_bytes("f.npy", npy("<f4", &[1], &1.5f32.to_le_bytes())).unwrap();
    assert!(array_error(floats.to_i64().unwrap_err()).contains("F32 values where integers"));
    let twos = NpyArray::from_bytes("m.npy", npy("|u1", &[2], &[1, 2])).unwrap();
    assert!(array_error(twos.to_bool().unwrap_err()).contains("2 in a mask"));
    // A graph without edge_index, a wrong shape, a truncated archive.
    let dir = std::env::temp_dir().join(format!("burn-gnn-npy-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.npy"), npy("<f4", &[1], &[0; 4])).unwrap();
    let e = array_error(NumpyGraph::dir(&dir).read().unwrap_err());
    assert!(e.contains("no `edge_index` array (found: x)"), "{e}");
    std::fs::write(dir.join("edge_index.npy"), npy("<i8", &[3, 1], &[0; 24])).unwrap();
    let e = array_error(NumpyGraph::dir(&dir).read().unwrap_err());
    assert!(e.contains("edge_index has shape [3, 1], not [2, E]"), "{e}");
    std::fs::write(dir.join("edge_index.npy"), npy("<i8", &[2, 1], &[0; 16])).unwrap();
    std::fs::write(dir.join("train_mask.npy"), npy("|b1", &[2], &[1, 0])).unwrap();
    let e = array_error(NumpyGraph::dir(&dir).read().unwrap_err());
    assert!(e.contains("train_mask has shape [2], not [1]"), "{e}");
    // A negative id with nothing else to count the nodes.
    std::fs::remove_file(dir.join("train_mask.npy")).unwrap();
    std::fs::remove_file(dir.join("x.npy")).unwrap();
    let ids = [0i64, -1].map(i64::to_le_bytes).concat();
    std::fs::write(dir.join("edge_index.npy"), npy("<i8", &[2, 1], &ids)).unwrap();
    let e = array_error(NumpyGraph::dir(&dir).read().unwrap_err());
    assert!(
        e.contains("edge_index[1, 0] = -1 is not a node of 0..1"),
        "{e}"
    );
    let whole = std::fs::read(fixture("graph_compressed.npz")).unwrap();
    std::fs::write(dir.join("cut.npz"), &whole[..whole.len() / 2]).unwrap();
    assert!(NumpyGraph::npz(dir.join("cut.npz")).read().is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Mutated `.npy` bytes give an array or a typed error, never a panic; an array read from
    /// them hands out exactly its shape's number of values.
    #[test]
    fn mutated_npy_never_panics(
        file in prop::sample::select(vec!["a2_f4_le_C.npy", "a2_i8_be_F.npy", "a3_i8_F.npy", "mask_b1.npy", "scalar_i8.npy"]),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = std::fs::read(fixture(file)).unwrap();
        for (at, byte) in flips {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        match NpyArray::from_bytes("m.npy", bytes) {
            Ok(a) => {
                let n = a.len();
                if let Ok(v) = a.to_f32() { prop_assert_eq!(v.len(), n); }
                if let Ok(v) = a.to_i64() { prop_assert_eq!(v.len(), n); }
            }
            Err(DataError::Array { .. }) => {}
            Err(other) => prop_assert!(false, "unexpected error {other}"),
        }
    }
}
