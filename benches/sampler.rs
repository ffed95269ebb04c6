//! Neighbour-sampling throughput (sampled edges per second) of `NeighborLoader`.
//!
//! `cargo bench --bench sampler` samples GraphSAGE mini-batches (fan-outs 15, 10; 1024 seeds
//! per batch) from a seeded directed G(n, p) graph with n = 1e5 and 1e6 nodes and about 10 edges
//! per node (`SAMPLER_BENCH_MAX_N` caps n, default 1000000). Throughput counts sampled edges;
//! the figure to compare is a training step's time per batch of the same size.

use std::hint::black_box;
use std::time::Duration;

use burn_gnn_data::synthetic::erdos_renyi;
use burn_gnn_data::{InNeighbors, NeighborLoader};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn sampling(c: &mut Criterion) {
    let max_n: usize = std::env::var("SAMPLER_BENCH_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut group = c.benchmark_group("neighbor_sampling");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    for n in [100_000usize, 1_000_000]
        .into_iter()
        .filter(|&n| n <= max_n)
    {
        let g = erdos_renyi(n, 10.0 / n as f64, true, 1).expect("a valid graph");
        let lists = InNeighbors::new(&g.senders, &g.receivers, n).expect("valid lists");
        let seeds: Vec<i64> = (0..n as i64).collect();
        let loader = NeighborLoader::new(lists, seeds, vec![15, 10], 1024)
            .expect("valid loader")
            .with_seed(0);
        let batch: Vec<i64> = (0..1024).map(|i| (i * 7919 % n) as i64).collect();
        let edges = loader.sample(&batch, 0, 0).num_edges();
        group.throughput(Throughput::Elements(edges as u64));
        group.bench_function(
            BenchmarkId::new(
                "fanout_15_10_batch_1024",
                format!("n={n},E={}", g.senders.len()),
            ),
            |b| {
                let mut k = 0u64;
                b.iter(|| {
                    k += 1;
                    black_box(loader.sample(&batch, 0, k))
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, sampling);
criterion_main!(benches);
