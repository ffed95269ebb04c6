//! Segment-op throughput (GB/s of bytes read + written) against this machine's memory bandwidth.
//!
//! `cargo bench --bench segment` runs, in one process:
//! - `stream_triad`: `a[i] = b[i] + s * c[i]` over 3 x 64 MiB f32 arrays with rayon, the
//!   STREAM-triad baseline (bytes = 3 arrays);
//! - `segment/{sum,max,softmax}/{sorted,random}/E=…,D=…` on the Flex backend, with N = E / 10,
//!   f32 data and i64 ids; bytes = data read + ids read + output written;
//! - `segment/burn_select_assign_add/…` (D = 64, E ≤ 1e6): Burn's built-in scatter-add computing
//!   the same sum, the baseline our kernel replaces.
//!
//! Divide a segment figure by the triad figure for the fraction of memory bandwidth.
//! `SEGMENT_BENCH_MAX_E` (default 10000000) caps E; `SEGMENT_BENCH_BACKEND=ndarray` switches the
//! backend.

use std::hint::black_box;
use std::time::Duration;

use burn::tensor::{DType, Device, Int, Tensor, TensorData, ops::IndexingUpdateOp};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;

fn lcg(state: &mut u64) -> u64 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *state >> 33
}

fn device() -> Device {
    match std::env::var("SEGMENT_BENCH_BACKEND").as_deref() {
        #[allow(deprecated)]
        Ok("ndarray") => Device::ndarray(),
        _ => Device::flex(),
    }
}

fn stream_triad(c: &mut Criterion) {
    let len = 16 << 20; // 16 Mi f32 = 64 MiB per array, far above the caches
    let b = vec![1.0f32; len];
    let cc = vec![2.0f32; len];
    let mut a = vec![0.0f32; len];
    let mut group = c.benchmark_group("stream_triad");
    group.throughput(Throughput::Bytes((3 * len * 4) as u64));
    group.sample_size(20).measurement_time(Duration::from_secs(3));
    group.bench_function("f32", |bench| {
        bench.iter(|| {
            a.par_chunks_mut(1 << 16)
                .zip(b.par_chunks(1 << 16))
                .zip(cc.par_chunks(1 << 16))
                .for_each(|((a, b), c)| {
                    for i in 0..a.len() {
                        a[i] = b[i] + 3.0 * c[i];
                    }
                });
            black_box(&a);
        })
    });
    group.finish();
}

fn segment_ops(c: &mut Criterion) {
    let max_e: usize = std::env::var("SEGMENT_BENCH_MAX_E").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let device = device();
    let mut group = c.benchmark_group("segment");
    group.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for e in [10_000usize, 100_000, 1_000_000, 10_000_000].into_iter().filter(|&e| e <= max_e) {
        let n = e / 10;
        let mut state = 42;
        let random: Vec<i64> = (0..e).map(|_| (lcg(&mut state) % n as u64) as i64).collect();
        let mut sorted = random.clone();
        sorted.sort_unstable();
        for d in [1usize, 16, 64] {
            let values: Vec<f32> = (0..e * d).map(|_| (lcg(&mut state) % 1000) as f32 / 100.0).collect();
            let data = Tensor::<2>::from_data(TensorData::new(values, [e, d]), (&device, DType::F32));
            for (order, ids) in [("sorted", &sorted), ("random", &random)] {
                let ids = Tensor::<1, Int>::from_data(TensorData::new(ids.clone(), [e]), (&device, DType::I64));
                let read = (e * d * 4 + e * 8) as u64;
                let id = |op: &str| BenchmarkId::new(format!("{op}/{order}"), format!("E={e},D={d}"));
                group.throughput(Throughput::Bytes(read + (n * d * 4) as u64));
                group.bench_function(id("sum"), |b| {
                    b.iter(|| black_box(burn_segment::segment_sum(data.clone(), ids.clone(), n)))
                });
                if d == 64 && e <= 1_000_000 {
                    // Baseline: Burn's own scatter-add (`select_assign(Add)`), same bytes.
                    let zeros = Tensor::<2>::zeros([n, d], (&device, DType::F32));
                    group.bench_function(id("burn_select_assign_add"), |b| {
                        b.iter(|| {
                            black_box(zeros.clone().select_assign(0, ids.clone(), data.clone(), IndexingUpdateOp::Add))
                        })
                    });
                }
                group.throughput(Throughput::Bytes(read + (n * d * 12) as u64)); // values + i64 args
                group.bench_function(id("max"), |b| {
                    b.iter(|| black_box(burn_segment::segment_max_with_indices(data.clone(), ids.clone(), n)))
                });
                group.throughput(Throughput::Bytes(read + (e * d * 4) as u64));
                group.bench_function(id("softmax"), |b| {
                    b.iter(|| black_box(burn_segment::segment_softmax(data.clone(), ids.clone(), n)))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, stream_triad, segment_ops);
criterion_main!(benches);
