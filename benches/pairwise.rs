//! The pairwise layer against dense Burn baselines, with peak memory.
//!
//! `cargo bench --bench pairwise` runs, on Flex, f32:
//! - `pairwise/knn_graph/D=…/N=…`: [`burn_gnn_graph::knn_graph`] with k = 16 over a batch of
//!   graphs of 1,000 points each (uniform in `[0, 1)^D`), and `…/single/N=1e4`, one graph of
//!   all `N` points;
//! - `pairwise/knn_dense/D=…/N=1e4`: the dense baseline, squared distances `|x|² + |y|² - 2 x yᵀ`
//!   on the full `[N, N]` (a matmul) then Burn's `topk_with_indices` per row (where it fits);
//! - `pairwise/attention/N=…`: `softmax(q kᵀ) v` of every node to the nodes of its graph
//!   (`D = 64`, graphs of 1,000 nodes) through [`Pairwise::softmax_matmul`] with a `same_group`
//!   mask over sorted graph ids;
//! - `pairwise/attention_dense/N=1e4`: the dense baseline, `[N, N]` logits, a `-inf` mask
//!   outside each graph, Burn's softmax and a matmul.
//!
//! Before the timings, each case runs once with the process's peak resident memory reset
//! (`/proc/self/clear_refs`, Linux) and prints the peak above the memory held before the call,
//! next to the size of its inputs and outputs. `PAIRWISE_BENCH_MAX_N` (default 100000) caps N;
//! `PAIRWISE_BENCH_BACKEND=wgpu` or `cuda` (with its feature) runs on a GPU, each call waiting
//! for the device (the memory figures are then the host's only).

use std::hint::black_box;
use std::time::Duration;

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use burn_gnn_graph::{Flow, knn_graph};
use burn_segment::pairwise::{PairMask, PairMetric, Pairwise};
use criterion::{Criterion, criterion_group, criterion_main};

const GRAPH: usize = 1000;

fn max_n() -> usize {
    std::env::var("PAIRWISE_BENCH_MAX_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn sizes() -> Vec<usize> {
    [10_000, 100_000]
        .into_iter()
        .filter(|&n| n <= max_n())
        .collect()
}

/// Resident memory now and at its peak since the last reset, in MiB (Linux; 0 elsewhere).
fn rss() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Runs `f` once and prints its peak memory above what was resident before it.
fn report_memory(name: &str, io_mib: f64, f: impl FnOnce()) {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let (before, _) = rss();
    f();
    let (_, peak) = rss();
    println!(
        "memory {name}: peak {:.0} MiB above the {before:.0} MiB resident before (inputs + outputs {io_mib:.1} MiB)",
        peak - before
    );
}

fn points(n: usize, d: usize, device: &Device) -> Tensor<2> {
    device.seed(n as u64 + d as u64);
    Tensor::random([n, d], Distribution::Uniform(0.0, 1.0), device)
}

fn graph_ids(n: usize, device: &Device) -> Tensor<1, Int> {
    let ids: Vec<i64> = (0..n).map(|i| (i / GRAPH) as i64).collect();
    Tensor::from_data(TensorData::new(ids, [n]), device)
}

fn mib(elements: usize) -> f64 {
    elements as f64 * 4.0 / (1 << 20) as f64
}

fn knn_dense(x: Tensor<2>, k: usize) -> Tensor<2, Int> {
    let sq = x.clone().square().sum_dim(1);
    let dist = sq.clone() + sq.transpose() - x.clone().matmul(x.transpose()) * 2.0;
    dist.neg().topk_with_indices(k, 1).1
}

fn attention(q: &Tensor<2>, k: &Tensor<2>, v: &Tensor<2>, ids: &Tensor<1, Int>) -> Tensor<2> {
    Pairwise::new(q.clone(), k.clone(), PairMetric::Dot)
        .and_then(|p| p.sorted_groups(ids.clone(), ids.clone()))
        .and_then(|p| p.mask(PairMask::same_group()))
        .and_then(|p| p.softmax_matmul(v.clone()))
        .expect("valid inputs")
}

fn attention_dense(q: Tensor<2>, k: Tensor<2>, v: Tensor<2>, ids: Tensor<1, Int>) -> Tensor<2> {
    let n = ids.dims()[0];
    let a = ids.clone().reshape([n, 1]).expand([n, n]);
    let b = ids.reshape([1, n]).expand([n, n]);
    let logits = q
        .matmul(k.transpose())
        .mask_fill(a.not_equal(b), f32::NEG_INFINITY);
    softmax(logits, 1).matmul(v)
}

fn device() -> Device {
    match std::env::var("PAIRWISE_BENCH_BACKEND").as_deref() {
        #[cfg(feature = "wgpu")]
        Ok("wgpu") => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(feature = "cuda")]
        Ok("cuda") => Device::cuda(0),
        Ok(other) if other != "flex" => {
            panic!("unknown PAIRWISE_BENCH_BACKEND {other:?} (flex, wgpu, cuda with its feature)")
        }
        _ => Device::flex(),
    }
}

/// `value`, once the device has finished computing it.
fn settled<T>(device: &Device, value: T) -> T {
    device.sync().expect("the device finishes its work");
    black_box(value)
}

fn bench(c: &mut Criterion) {
    let device = device();
    let mut group = c.benchmark_group("pairwise");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    for d in [3, 64] {
        for n in sizes() {
            let (x, ids) = (points(n, d, &device), graph_ids(n, &device));
            let run = || knn_graph(&x, 16, Some(&ids), false, Flow::SourceToTarget).unwrap();
            let name = format!("knn_graph/D={d}/N={n}");
            report_memory(&name, mib(n * d + 2 * n * 16 * 2), || {
                drop(black_box(run()))
            });
            group.bench_function(&name, |b| b.iter(|| settled(&device, run())));
        }
        let n = 10_000;
        let x = points(n, d, &device);
        let single = || knn_graph(&x, 16, None, false, Flow::SourceToTarget).unwrap();
        let name = format!("knn_graph/D={d}/single/N={n}");
        report_memory(&name, mib(n * d + 2 * n * 16 * 2), || {
            drop(black_box(single()))
        });
        group.bench_function(&name, |b| b.iter(|| settled(&device, single())));
        let name = format!("knn_dense/D={d}/N={n}");
        report_memory(&name, mib(n * d + n * 16 * 2), || {
            drop(black_box(knn_dense(x.clone(), 17)))
        });
        group.bench_function(&name, |b| {
            b.iter(|| settled(&device, knn_dense(x.clone(), 17)))
        });
    }
    for n in sizes() {
        let (q, k, v) = (
            points(n, 64, &device),
            points(n, 64, &device),
            points(n, 64, &device),
        );
        let ids = graph_ids(n, &device);
        let name = format!("attention/N={n}");
        report_memory(&name, mib(4 * n * 64), || {
            drop(black_box(attention(&q, &k, &v, &ids)))
        });
        group.bench_function(&name, |b| {
            b.iter(|| settled(&device, attention(&q, &k, &v, &ids)))
        });
        if n <= 10_000 {
            let dense = || attention_dense(q.clone(), k.clone(), v.clone(), ids.clone());
            let name = format!("attention_dense/N={n}");
            report_memory(&name, mib(4 * n * 64), || drop(black_box(dense())));
            group.bench_function(&name, |b| b.iter(|| settled(&device, dense())));
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
