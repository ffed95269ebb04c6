//! The readers of `burn_gnn_data::io` on large files.
//!
//! `cargo bench --bench io` writes (once, under `target/io-bench/`) and reads:
//! - `io/csv_edges/{index,integer}/E=…`: an edge list of `E` edges, two integer columns with a
//!   header (`src,dst`), ids uniform in `0..E/10`, read by [`EdgeTable`] into a `TableGraph`
//!   with ids as rows (`IdKind::Index`) or mapped to rows (`IdKind::Integer`, the default: a
//!   sort of the distinct ids and a lookup per endpoint);
//! - `io/npy_edge_index/{open,copy}/E=…`: an `int64` `edge_index` `[2, E]` in `.npy`, mapped and
//!   handed out in place ([`NpyArray::open`] then `to_i64`), and copied into a `Vec`.
//!
//! - `io/parquet_edges/index/E=…` (feature `parquet`): the same edge list as Parquet, when
//!   `benches/peers/io_csv.py --parquet` has written it beside the CSV file (pyarrow, int64
//!   columns, snappy, row groups of 1 Mi rows), read by `Table::parquet`.
//!
//! `IO_BENCH_EDGES` (default 10000000) sets `E` for the CSV file, `IO_BENCH_NPY_EDGES` (default
//! 50000000, 1e8 entries) for the `.npy`. `benches/peers/io_csv.py FILE` times pyarrow's and
//! pandas' CSV readers on the same file.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use burn_gnn_data::io::{EdgeTable, IdKind, NpyArray};
use burn_gnn_data::synthetic::SplitMix64;
use criterion::{Criterion, criterion_group, criterion_main};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/io-bench");
    std::fs::create_dir_all(&dir).expect("target/io-bench");
    dir
}

/// A seeded stream of ids uniform in `0..bound`, the same on every machine.
fn ids(seed: u64, bound: u64) -> impl FnMut() -> u64 {
    let mut rng = SplitMix64::new(seed);
    move || rng.below(bound)
}

/// The CSV edge list of `edges` edges, written once.
fn csv_file(edges: usize) -> PathBuf {
    let path = dir().join(format!("edges_{edges}.csv"));
    if !path.exists() {
        let part = path.with_extension("part");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&part).expect("writable"));
        let mut next = ids(7, (edges as u64 / 10).max(1));
        writeln!(w, "src,dst").expect("written");
        for _ in 0..edges {
            writeln!(w, "{},{}", next(), next()).expect("written");
        }
        w.into_inner().expect("flushed").sync_all().expect("synced");
        std::fs::rename(&part, &path).expect("renamed");
    }
    path
}

/// An `int64` `[2, edges]` `edge_index` in `.npy` (version 1.0, little-endian, C order).
fn npy_file(edges: usize) -> PathBuf {
    let path = dir().join(format!("edge_index_{edges}.npy"));
    if !path.exists() {
        let part = path.with_extension("part");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&part).expect("writable"));
        let mut header =
            format!("{{'descr': '<i8', 'fortran_order': False, 'shape': (2, {edges}), }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        w.write_all(b"\x93NUMPY\x01\x00").expect("written");
        w.write_all(&(header.len() as u16).to_le_bytes())
            .expect("written");
        w.write_all(header.as_bytes()).expect("written");
        let mut next = ids(11, (edges as u64 / 10).max(1));
        for _ in 0..2 * edges {
            w.write_all(&(next() as i64).to_le_bytes())
                .expect("written");
        }
        w.into_inner().expect("flushed").sync_all().expect("synced");
        std::fs::rename(&part, &path).expect("renamed");
    }
    path
}

/// `1e7`, `5e7`: the mantissa and the exponent of round counts, the digits otherwise.
fn label(n: usize) -> String {
    let digits = n.to_string();
    let mantissa = digits.trim_end_matches('0');
    match mantissa.len() {
        1 => format!("{mantissa}e{}", digits.len() - 1),
        _ => digits,
    }
}

fn io(c: &mut Criterion) {
    let edges = env_usize("IO_BENCH_EDGES", 10_000_000);
    let csv = csv_file(edges);
    let mut group = c.benchmark_group("io");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for (name, kind) in [("index", IdKind::Index), ("integer", IdKind::Integer)] {
        group.bench_function(format!("csv_edges/{name}/E={}", label(edges)), |b| {
            b.iter(|| {
                let g = EdgeTable::csv(&csv)
                    .source("src")
                    .target("dst")
                    .ids(kind)
                    .read();
                black_box(g.expect("a valid table").data.senders.len())
            })
        });
    }
    #[cfg(feature = "parquet")]
    {
        let parquet = csv.with_extension("parquet");
        match parquet.exists() {
            true => {
                group.bench_function(format!("parquet_edges/index/E={}", label(edges)), |b| {
                    b.iter(|| {
                        let g = EdgeTable::new(burn_gnn_data::io::Table::parquet(&parquet))
                            .source("src")
                            .target("dst")
                            .ids(IdKind::Index)
                            .read();
                        black_box(g.expect("a valid table").data.senders.len())
                    })
                });
            }
            false => eprintln!(
                "io/parquet_edges: skipped, no {} (benches/peers/io_csv.py --parquet writes it)",
                parquet.display()
            ),
        }
    }
    let npy_edges = env_usize("IO_BENCH_NPY_EDGES", 50_000_000);
    let npy = npy_file(npy_edges);
    group.bench_function(format!("npy_edge_index/open/E={}", label(npy_edges)), |b| {
        b.iter(|| {
            let a = NpyArray::open(&npy).expect("a .npy file");
            let ids = a.to_i64().expect("int64");
            black_box(ids[ids.len() - 1])
        })
    });
    group.bench_function(format!("npy_edge_index/copy/E={}", label(npy_edges)), |b| {
        b.iter(|| {
            let a = NpyArray::open(&npy).expect("a .npy file");
            black_box(a.to_i64().expect("int64").into_owned().len())
        })
    });
    group.finish();
}

criterion_group!(benches, io);
criterion_main!(benches);
