//! Segment-op throughput (GB/s of bytes read + written) against this machine's memory bandwidth.
//!
//! `cargo bench --bench segment` runs, in one process:
//! - `stream_triad`: `a[i] = b[i] + s * c[i]` over 3 x 64 MiB f32 arrays with rayon, the
//!   STREAM-triad baseline (bytes = 3 arrays);
//! - `segment/{sum,max,max_values,softmax}/{sorted,random}/E=…,D=…` on the Flex backend, with N = E / 10,
//!   f32 data and i64 ids (i32 with `SEGMENT_BENCH_IDS=i32`); bytes = data read + ids read +
//!   output written;
//!   `max` is `segment_max_with_indices`, `max_values` `segment_max` (values only, as JAX's
//!   `segment_max`); `segment/softmax_owned/…` is softmax over an input it is handed (no other reference):
//!   the CPU kernel writes over it instead of allocating an output;
//! - `segment/burn_select_assign_add/…` (D = 64, E ≤ 1e6): Burn's built-in scatter-add computing
//!   the same sum, the baseline our kernel replaces.
//!
//! - `spmm/E=…,D=64`: the fused gather-and-sum [`burn_segment::spmm`] with random senders
//!   and sorted receivers (bytes = one gathered row per edge + ids + output);
//! - `spmm_reversed/E=…,D=64`: the same edges reversed with a weight each (a backward pass's
//!   `spmm`: random segments, sorted gathered ids; bytes as `spmm` plus the weights);
//! - `sddmm/E=…,D=64`: the per-edge dot products [`burn_segment::sddmm`] of the same sender and
//!   receiver rows (bytes = two gathered rows per edge + ids + output);
//!
//! - `planned/{sum,softmax,spmm,attention}/{per_call,planned}/E=…`: each op through the free
//!   function (ids checked and grouped for the call) against a `SegmentPlan` built once, and
//!   `planned/new/E=…`, building that plan;
//!
//! - `strided/{sum,max}/{contiguous,column_slice,step_slice}/E=…,D=16`: a column slice of a
//!   wider tensor reduced in place, against a contiguous input and a slice that is copied;
//!
//! - `statistics/{sum,masked_sum,masked_sum_rows,weighted_mean,median,quantile,topk8}/{sorted,random}/E=1e6,D=…`:
//!   masked sum, weighted mean, median, quantile and top-k (k = 8) over a plan, next to the
//!   plain sum of the same run;
//!
//! - `random_rows/{permutation,gather}/E=…,D=64`: rows of 64 f32 read in a random order in
//!   plain Rust, each row of an `[E, 64]` matrix once or `E` rows of an `[E / 10, 64]` one: the
//!   access pattern of the kernels over unsorted ids and of `spmm`'s gather, as a baseline for
//!   them (bytes = rows + 8-byte indices);
//!
//! - `one_segment/{sum,softmax}/threads=T/E=…,D=16`: one segment of all `E` rows (global
//!   pooling of one large graph) on a rayon pool of 1 and of 2 threads: a segment of more than
//!   `CHUNK_ROWS` rows is reduced in chunks in parallel, so the second should take about half
//!   the first's time (same bits either way);
//!
//! - `device_triad`: the same triad with Burn tensor ops on the bench device (on a GPU, the
//!   baseline for the device's memory bandwidth; fused into one kernel by wgpu's Fusion).
//!
//! Divide a segment figure by the triad figure for the fraction of memory bandwidth.
//! `SEGMENT_BENCH_OUTPUT_POOL=0` turns off the CPU output pool
//! ([`burn_segment::cpu::set_output_pool_capacity`]), so that every call's large outputs come
//! from the global allocator. The bench calls [`burn_segment::cpu::retain_freed_memory`] first,
//! as a program training on large graphs would (outputs over the pool's capacity, and the
//! inputs, then reuse freed heap memory); `SEGMENT_BENCH_RETAIN_FREED=0` leaves glibc's
//! defaults (a fresh mapping for each block over 32 MiB).
//! `SEGMENT_BENCH_MAX_E` (default 10000000) caps E; `SEGMENT_BENCH_BACKEND=ndarray` switches the
//! backend, and `SEGMENT_BENCH_BACKEND=wgpu` (build with `--features wgpu`) runs the same sizes
//! on the wgpu kernels with i32 ids (wgpu's default int), waiting for the device after each call:
//!
//! ```text
//! SEGMENT_BENCH_BACKEND=wgpu cargo bench --features wgpu --bench segment
//! ```

use std::hint::black_box;
use std::time::Duration;

use burn::tensor::{DType, Device, Int, Tensor, TensorData, ops::IndexingUpdateOp};
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;

fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 33
}

/// `SEGMENT_BENCH_MAX_E`: the largest `E` benched (default 1e7).
fn max_e() -> usize {
    std::env::var("SEGMENT_BENCH_MAX_E")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000)
}

/// A group of few, short samples: the large sizes take long per call.
fn short_group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    group
}

fn device() -> Device {
    if std::env::var("SEGMENT_BENCH_OUTPUT_POOL").as_deref() == Ok("0") {
        burn_segment::cpu::set_output_pool_capacity(0);
    }
    if std::env::var("SEGMENT_BENCH_RETAIN_FREED").as_deref() != Ok("0") {
        burn_segment::cpu::retain_freed_memory();
    }
    match std::env::var("SEGMENT_BENCH_BACKEND").as_deref() {
        #[allow(deprecated)]
        Ok("ndarray") => Device::ndarray(),
        #[cfg(feature = "wgpu")]
        Ok("wgpu") => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(not(feature = "wgpu"))]
        Ok("wgpu") => panic!("SEGMENT_BENCH_BACKEND=wgpu needs `--features wgpu`"),
        #[cfg(feature = "cuda")]
        Ok("cuda") => Device::cuda(0),
        #[cfg(not(feature = "cuda"))]
        Ok("cuda") => panic!("SEGMENT_BENCH_BACKEND=cuda needs `--features cuda`"),
        Ok(other) if other != "flex" => {
            panic!("unknown SEGMENT_BENCH_BACKEND {other:?} (flex, ndarray, wgpu, cuda)")
        }
        _ => Device::flex(),
    }
}

/// Waits for the device to finish the work queued so far (a no-op on the CPU backends).
fn sync(device: &Device) {
    device.sync().expect("the device finishes its work");
}

fn device_triad(c: &mut Criterion) {
    let device = device();
    let len = 16 << 20;
    let b = Tensor::<1>::ones([len], (&device, DType::F32));
    let cc = Tensor::<1>::ones([len], (&device, DType::F32)) * 2.0;
    sync(&device);
    let mut group = c.benchmark_group("device_triad");
    group.throughput(Throughput::Bytes((3 * len * 4) as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    group.bench_function("f32", |bench| {
        bench.iter(|| {
            let a = black_box(b.clone() + cc.clone() * 3.0);
            sync(&device);
            a
        })
    });
    group.finish();
}

fn stream_triad(c: &mut Criterion) {
    let len = 16 << 20; // 16 Mi f32 = 64 MiB per array, far above the caches
    let b = vec![1.0f32; len];
    let cc = vec![2.0f32; len];
    let mut a = vec![0.0f32; len];
    let mut group = c.benchmark_group("stream_triad");
    group.throughput(Throughput::Bytes((3 * len * 4) as u64));
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
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
    let max_e = max_e();
    let device = device();
    let wgpu = std::env::var("SEGMENT_BENCH_BACKEND").as_deref() == Ok("wgpu");
    // i32 ids on wgpu, or where SEGMENT_BENCH_IDS=i32 asks for them (the index-width check).
    let i32_ids = std::env::var("SEGMENT_BENCH_IDS").as_deref() == Ok("i32");
    let (id_dtype, id_bytes) = if wgpu || i32_ids {
        (DType::I32, 4)
    } else {
        (DType::I64, 8)
    };
    let mut group = short_group(c, "segment");
    for e in [10_000usize, 100_000, 1_000_000, 10_000_000]
        .into_iter()
        .filter(|&e| e <= max_e)
    {
        let n = e / 10;
        let mut state = 42;
        let random: Vec<i64> = (0..e)
            .map(|_| (lcg(&mut state) % n as u64) as i64)
            .collect();
        let mut sorted = random.clone();
        sorted.sort_unstable();
        for d in [1usize, 16, 64] {
            let values: Vec<f32> = (0..e * d)
                .map(|_| (lcg(&mut state) % 1000) as f32 / 100.0)
                .collect();
            let data =
                Tensor::<2>::from_data(TensorData::new(values, [e, d]), (&device, DType::F32));
            for (order, ids) in [("sorted", &sorted), ("random", &random)] {
                let ids = Tensor::<1, Int>::from_data(
                    TensorData::new(ids.clone(), [e]),
                    (&device, DType::I64),
                )
                .cast(id_dtype);
                let read = (e * d * 4 + e * id_bytes) as u64;
                let id =
                    |op: &str| BenchmarkId::new(format!("{op}/{order}"), format!("E={e},D={d}"));
                group.throughput(Throughput::Bytes(read + (n * d * 4) as u64));
                group.bench_function(id("sum"), |b| {
                    b.iter(|| {
                        let out =
                            black_box(burn_segment::segment_sum(data.clone(), ids.clone(), n));
                        sync(&device);
                        out
                    })
                });
                if d == 64 && e <= 1_000_000 {
                    // Baseline: Burn's own scatter-add (`select_assign(Add)`), same bytes.
                    let zeros = Tensor::<2>::zeros([n, d], (&device, DType::F32));
                    group.bench_function(id("burn_select_assign_add"), |b| {
                        b.iter(|| {
                            let out = zeros.clone().select_assign(
                                0,
                                ids.clone(),
                                data.clone(),
                                IndexingUpdateOp::Add,
                            );
                            sync(&device);
                            black_box(out)
                        })
                    });
                }
                group.throughput(Throughput::Bytes(read + (n * d * (4 + id_bytes)) as u64)); // values + args
                group.bench_function(id("max"), |b| {
                    b.iter(|| {
                        let out = black_box(burn_segment::segment_max_with_indices(
                            data.clone(),
                            ids.clone(),
                            n,
                        ));
                        sync(&device);
                        out
                    })
                });
                // Values only, as `jax.ops.segment_max` returns.
                group.throughput(Throughput::Bytes(read + (n * d * 4) as u64));
                group.bench_function(id("max_values"), |b| {
                    b.iter(|| {
                        let out =
                            black_box(burn_segment::segment_max(data.clone(), ids.clone(), n));
                        sync(&device);
                        out
                    })
                });
                group.throughput(Throughput::Bytes(read + (e * d * 4) as u64));
                group.bench_function(id("softmax"), |b| {
                    b.iter(|| {
                        let out =
                            black_box(burn_segment::segment_softmax(data.clone(), ids.clone(), n));
                        sync(&device);
                        out
                    })
                });
                // The input handed over (as a layer's logits are): the CPU kernel writes the
                // result over it. A fresh copy per call, made outside the timing.
                group.bench_function(id("softmax_owned"), |b| {
                    b.iter_batched(
                        || {
                            let x = Tensor::<2>::from_data(data.to_data(), (&device, DType::F32));
                            sync(&device);
                            x
                        },
                        |x| {
                            let out = black_box(burn_segment::segment_softmax(x, ids.clone(), n));
                            sync(&device);
                            out
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
        }
    }
    group.finish();
}

/// The inputs of the fused-op groups at `E` edges: `N = E / 10` nodes of `D = 64` f32
/// features, uniformly random senders, sorted receivers, and the bytes of one id array.
struct FusedInputs {
    n: usize,
    x: Tensor<2>,
    senders: Tensor<1, Int>,
    receivers: Tensor<1, Int>,
    id_bytes: usize,
}

/// `FusedInputs` for each benched `E` (1e5, 1e6, 1e7, capped by `SEGMENT_BENCH_MAX_E`).
fn fused_inputs(device: &Device) -> Vec<(usize, FusedInputs)> {
    let max_e = max_e();
    let wgpu = std::env::var("SEGMENT_BENCH_BACKEND").as_deref() == Ok("wgpu");
    let (id_dtype, id_bytes) = if wgpu {
        (DType::I32, 4)
    } else {
        (DType::I64, 8)
    };
    let d = FUSED_D;
    let sizes = [100_000usize, 1_000_000, 10_000_000]
        .into_iter()
        .filter(|&e| e <= max_e);
    sizes
        .map(|e| {
            let n = e / 10;
            let mut state = 7;
            let senders: Vec<i64> = (0..e)
                .map(|_| (lcg(&mut state) % n as u64) as i64)
                .collect();
            let mut receivers: Vec<i64> = (0..e)
                .map(|_| (lcg(&mut state) % n as u64) as i64)
                .collect();
            receivers.sort_unstable();
            let values: Vec<f32> = (0..n * d)
                .map(|_| (lcg(&mut state) % 1000) as f32 / 100.0)
                .collect();
            let x = Tensor::<2>::from_data(TensorData::new(values, [n, d]), (device, DType::F32));
            let ids = |v: Vec<i64>| {
                Tensor::<1, Int>::from_data(TensorData::new(v, [e]), (device, DType::I64))
                    .cast(id_dtype)
            };
            let (senders, receivers) = (ids(senders), ids(receivers));
            (
                e,
                FusedInputs {
                    n,
                    x,
                    senders,
                    receivers,
                    id_bytes,
                },
            )
        })
        .collect()
}

/// Feature width of the fused-op groups.
const FUSED_D: usize = 64;

/// `spmm/E=…,D=64`: the fused gather-and-sum `out[r] = Σ x[senders[e]]` over receiver-sorted
/// edges with uniformly random senders (N = E / 10 rows). Bytes = one `x` row gathered per
/// edge + both id arrays + the output: the traffic of the kernel when no gathered row is
/// found in cache, so at large N the figure is the speed of random 256-byte row reads.
///
/// `spmm_reversed/E=…,D=64`: the same edges reversed, with a weight per edge, as a layer's
/// backward pass runs them (`d x[s] = Σ w_e · grad[r_e]`): the segments are the random
/// senders, so the kernel walks the edges through the CSR plan's permutation, and each edge's
/// gathered id and weight are reads at random positions too. Bytes = as `spmm`, plus the
/// weights.
///
/// `sddmm/E=…,D=64`: the per-edge dot products `x[senders[e]] · x[receivers[e]]` (one head) on
/// the same inputs. Bytes = two gathered rows per edge + both id arrays + the `[E, 1]` output.
fn fused(c: &mut Criterion) {
    let device = device();
    let d = FUSED_D;
    let inputs = fused_inputs(&device);
    let mut group = short_group(c, "spmm");
    for (e, f) in &inputs {
        let (e, n) = (*e, f.n);
        group.throughput(Throughput::Bytes(
            (e * d * 4 + 2 * e * f.id_bytes + n * d * 4) as u64,
        ));
        group.bench_function(BenchmarkId::from_parameter(format!("E={e},D={d}")), |b| {
            b.iter(|| {
                let out = black_box(burn_segment::spmm(
                    f.x.clone(),
                    f.senders.clone(),
                    f.receivers.clone(),
                    None,
                    n,
                ));
                sync(&device);
                out
            })
        });
    }
    group.finish();
    let mut group = short_group(c, "spmm_reversed");
    for (e, f) in &inputs {
        let (e, n) = (*e, f.n);
        let weights = Tensor::<2>::ones([e, 1], (&device, DType::F32));
        group.throughput(Throughput::Bytes(
            (e * d * 4 + e * 4 + 2 * e * f.id_bytes + n * d * 4) as u64,
        ));
        group.bench_function(BenchmarkId::from_parameter(format!("E={e},D={d}")), |b| {
            b.iter(|| {
                let out = burn_segment::spmm(
                    f.x.clone(),
                    f.receivers.clone(),
                    f.senders.clone(),
                    Some(weights.clone()),
                    n,
                );
                let out = black_box(out);
                sync(&device);
                out
            })
        });
    }
    group.finish();
    let mut group = short_group(c, "sddmm");
    for (e, f) in &inputs {
        let e = *e;
        group.throughput(Throughput::Bytes(
            (2 * e * d * 4 + 2 * e * f.id_bytes + e * 4) as u64,
        ));
        group.bench_function(BenchmarkId::from_parameter(format!("E={e},D={d}")), |b| {
            b.iter(|| {
                let out = burn_segment::sddmm(
                    f.x.clone(),
                    f.x.clone(),
                    f.senders.clone(),
                    f.receivers.clone(),
                    1,
                );
                let out = black_box(out);
                sync(&device);
                out
            })
        });
    }
    group.finish();
}

/// `planned/{op}/{per_call,planned}/E=…`: the same op on the same unsorted ids (`N = E / 10`,
/// i64, Flex), once through the free function — the ids checked and grouped for the call — and
/// once through a `SegmentPlan` built beforehand. Ops: `sum` and `softmax` of `[E, 16]` rows, `spmm` of 64-wide
/// rows (random senders and receivers, the receivers planned), GAT's `attention_softmax` with
/// 8 heads. `planned/new/E=…` is the plan itself (`SegmentPlan::new`: the ids read, checked
/// and counting-sorted, the tensors made).
fn planned(c: &mut Criterion) {
    use burn_segment::{SegmentPlan, Segments};
    if std::env::var("SEGMENT_BENCH_BACKEND").is_ok_and(|b| b != "flex") {
        return; // the CPU kernels' plans
    }
    let max_e = max_e();
    let device = device();
    let mut group = short_group(c, "planned");
    for e in [13_264usize, 100_000, 1_000_000, 10_000_000]
        .into_iter()
        .filter(|&e| e <= max_e)
    {
        let n = (e / 10).max(1);
        let mut state = 5;
        let mut ids = |len: usize, n: usize| -> Tensor<1, Int> {
            let v: Vec<i64> = (0..len)
                .map(|_| (lcg(&mut state) % n as u64) as i64)
                .collect();
            Tensor::from_data(TensorData::new(v, [len]), (&device, DType::I64))
        };
        let (senders, receivers) = (ids(e, n), ids(e, n));
        let floats = |rows: usize, d: usize| {
            Tensor::<2>::random(
                [rows, d],
                burn::tensor::Distribution::Uniform(-1.0, 1.0),
                &device,
            )
        };
        let (rows16, x64, scores) = (floats(e, 16), floats(n, 64), floats(n, 8));
        let id = |op: &str, how: &str| BenchmarkId::new(format!("{op}/{how}"), format!("E={e}"));
        group.throughput(Throughput::Elements(e as u64));
        group.bench_function(BenchmarkId::new("new", format!("E={e}")), |b| {
            b.iter(|| black_box(SegmentPlan::new(receivers.clone(), n).unwrap()))
        });
        let (s_plan, r_plan) = (
            SegmentPlan::new(senders.clone(), n).unwrap(),
            SegmentPlan::new(receivers.clone(), n).unwrap(),
        );
        group.bench_function(id("sum", "per_call"), |b| {
            b.iter(|| {
                black_box(burn_segment::segment_sum(
                    rows16.clone(),
                    receivers.clone(),
                    n,
                ))
            })
        });
        group.bench_function(id("sum", "planned"), |b| {
            b.iter(|| black_box(r_plan.sum(rows16.clone())))
        });
        group.bench_function(id("softmax", "per_call"), |b| {
            b.iter(|| {
                black_box(burn_segment::segment_softmax(
                    rows16.clone(),
                    receivers.clone(),
                    n,
                ))
            })
        });
        group.bench_function(id("softmax", "planned"), |b| {
            b.iter(|| black_box(r_plan.softmax(rows16.clone())))
        });
        group.bench_function(id("spmm", "per_call"), |b| {
            b.iter(|| {
                let (s, r) = (senders.clone(), receivers.clone());
                black_box(burn_segment::spmm(x64.clone(), s, r, None, n))
            })
        });
        group.bench_function(id("spmm", "planned"), |b| {
            b.iter(|| black_box(SegmentPlan::spmm(x64.clone(), &s_plan, &r_plan, None)))
        });
        group.bench_function(id("attention", "per_call"), |b| {
            b.iter(|| {
                let (s, r) = (senders.clone(), receivers.clone());
                let (src, dst) = (scores.clone(), scores.clone());
                black_box(burn_segment::attention_softmax(src, dst, s, r, None, 0.2))
            })
        });
        group.bench_function(id("attention", "planned"), |b| {
            b.iter(|| {
                let (src, dst) = (scores.clone(), scores.clone());
                black_box(SegmentPlan::attention_softmax(
                    src, dst, &s_plan, &r_plan, None, 0.2,
                ))
            })
        });
    }
    group.finish();
}

/// `strided/{sum,max}/{contiguous,column_slice,step_slice}/E=…,D=16`: the same reduction over
/// unsorted ids of an `[E, 16]` input held three ways: contiguous; columns `16..32` of an
/// `[E, 64]` tensor, which the CPU kernels read in place at the parent's row stride; every
/// other column of `16..48`, which is not contiguous within a row and is copied first (the cost
/// the column slice avoids). Bytes as `segment/` (the 16 columns read, ids, output).
fn strided(c: &mut Criterion) {
    use burn::tensor::s;
    use burn_segment::{SegmentPlan, Segments};
    if std::env::var("SEGMENT_BENCH_BACKEND").is_ok_and(|b| b != "flex") {
        return; // the CPU kernels' strided reads
    }
    let max_e = max_e();
    let device = device();
    let mut group = short_group(c, "strided");
    for e in [100_000usize, 1_000_000]
        .into_iter()
        .filter(|&e| e <= max_e)
    {
        let (n, d) = ((e / 10).max(1), 16);
        let mut state = 11;
        let ids: Vec<i64> = (0..e)
            .map(|_| (lcg(&mut state) % n as u64) as i64)
            .collect();
        let plan = SegmentPlan::new(
            Tensor::<1, Int>::from_data(TensorData::new(ids, [e]), (&device, DType::I64)),
            n,
        )
        .expect("ids in range");
        let wide = Tensor::<2>::random(
            [e, 64],
            burn::tensor::Distribution::Uniform(-1.0, 1.0),
            &device,
        );
        let inputs = [
            (
                "contiguous",
                Tensor::<2>::random([e, d], burn::tensor::Distribution::Default, &device),
            ),
            ("column_slice", wide.clone().slice(s![.., 16..32])),
            ("step_slice", wide.slice(s![.., 16..48;2])),
        ];
        group.throughput(Throughput::Bytes((e * d * 4 + e * 8 + n * d * 4) as u64));
        for (how, x) in &inputs {
            let id = |op: &str| BenchmarkId::new(format!("{op}/{how}"), format!("E={e},D={d}"));
            group.bench_function(id("sum"), |b| b.iter(|| black_box(plan.sum(x.clone()))));
            group.bench_function(id("max"), |b| b.iter(|| black_box(plan.max(x.clone()))));
        }
    }
    group.finish();
}

/// `statistics/{sum,masked_sum,masked_sum_rows,weighted_mean,median,quantile,topk8}/{sorted,random}/E=1e6,D=…`:
/// the
/// statistics of the statistics issue over a plan, next to the plain sum of the same data and
/// ids: a masked sum (a full mask, two entries in three eligible; `_rows`: one flag per row,
/// two rows in three eligible), a weighted mean, the median,
/// the 0.3-quantile (linear) and a top-k
/// with `k = 8` (values and rows). Bytes as `segment/` (the data and ids read, the sum's output).
fn statistics(c: &mut Criterion) {
    use burn::tensor::Bool;
    use burn_segment::{SegmentPlan, SegmentStatistics, SegmentWeights, Segments};
    let device = device();
    let mut group = short_group(c, "statistics");
    let e = 1_000_000usize.min(max_e());
    let n = (e / 10).max(1);
    let mut state = 13;
    let random: Vec<i64> = (0..e)
        .map(|_| (lcg(&mut state) % n as u64) as i64)
        .collect();
    let mut sorted = random.clone();
    sorted.sort_unstable();
    let weights: Vec<f32> = (0..e).map(|_| (lcg(&mut state) % 4) as f32).collect();
    let weights = SegmentWeights::new(Tensor::<1>::from_data(
        TensorData::new(weights, [e]),
        (&device, DType::F32),
    ))
    .expect("nonnegative weights");
    for d in [16usize, 64] {
        let data = Tensor::<2>::random([e, d], burn::tensor::Distribution::Default, &device);
        let keep: Vec<bool> = (0..e * d)
            .map(|_| !lcg(&mut state).is_multiple_of(3))
            .collect();
        let mask = Tensor::<2, Bool>::from_data(TensorData::new(keep, [e, d]), &device);
        let keep_rows: Vec<bool> = (0..e).map(|_| !lcg(&mut state).is_multiple_of(3)).collect();
        let row_mask = Tensor::<1, Bool>::from_data(TensorData::new(keep_rows, [e]), &device);
        for (order, ids) in [("sorted", &sorted), ("random", &random)] {
            let ids = Tensor::<1, Int>::from_data(
                TensorData::new(ids.clone(), [e]),
                (&device, DType::I64),
            );
            let plan = SegmentPlan::new(ids, n).expect("ids in range");
            let id = |op: &str| BenchmarkId::new(format!("{op}/{order}"), format!("E={e},D={d}"));
            group.throughput(Throughput::Bytes((e * d * 4 + e * 8 + n * d * 4) as u64));
            let run = |b: &mut criterion::Bencher, f: &dyn Fn() -> Tensor<2>| {
                b.iter(|| {
                    let out = black_box(f());
                    sync(&device);
                    out
                })
            };
            group.bench_function(id("sum"), |b| run(b, &|| plan.sum(data.clone())));
            group.bench_function(id("masked_sum"), |b| {
                run(b, &|| plan.masked(mask.clone()).sum(data.clone()))
            });
            group.bench_function(id("masked_sum_rows"), |b| {
                run(b, &|| plan.masked(row_mask.clone()).sum(data.clone()))
            });
            group.bench_function(id("weighted_mean"), |b| {
                run(b, &|| plan.weighted_mean(data.clone(), &weights))
            });
            group.bench_function(id("median"), |b| run(b, &|| plan.median(data.clone())));
            group.bench_function(id("quantile"), |b| {
                run(b, &|| {
                    let linear = burn_segment::QuantileInterpolation::Linear;
                    plan.quantile(data.clone(), 0.3, linear)
                        .expect("q in range")
                })
            });
            group.bench_function(id("topk8"), |b| {
                run(b, &|| {
                    plan.topk(data.clone(), 8, true).0.reshape([n * 8, d])
                })
            });
        }
    }
    group.finish();
}

/// `random_rows/{permutation,gather}/E=…,D=64`: the machine's rate for the access pattern of
/// the kernels over unsorted ids and of the gathers, in plain Rust with rayon and nothing else:
/// `E` rows of 64 f32 summed into one accumulator per task, in a random order. `permutation`
/// reads each row of an `[E, 64]` matrix once (the pattern of a reduction over unsorted ids);
/// `gather` reads `E` rows drawn at random from an `[E / 10, 64]` matrix (`spmm`'s gather of
/// sender rows). Each prefetches the row 16 positions ahead. Bytes = the rows read + the
/// 8-byte indices. One simple implementation of the pattern, a baseline measured in the same
/// run, not a proven ceiling: compare the segment figures with it as with `stream_triad`.
fn random_rows(c: &mut Criterion) {
    if std::env::var("SEGMENT_BENCH_BACKEND").as_deref() == Ok("wgpu") {
        return; // a CPU baseline
    }
    let max_e = max_e();
    const D: usize = 64;
    let mut group = short_group(c, "random_rows");
    for e in [100_000usize, 1_000_000, 10_000_000]
        .into_iter()
        .filter(|&e| e <= max_e)
    {
        let mut state = 5;
        let mut permutation: Vec<usize> = (0..e).collect();
        for i in (1..e).rev() {
            permutation.swap(i, lcg(&mut state) as usize % (i + 1));
        }
        let gather: Vec<usize> = (0..e)
            .map(|_| lcg(&mut state) as usize % (e / 10))
            .collect();
        for (pattern, index, rows) in [
            ("permutation", &permutation, e),
            ("gather", &gather, e / 10),
        ] {
            let x: Vec<[f32; D]> = (0..rows).map(|r| [r as f32; D]).collect();
            group.throughput(Throughput::Bytes((e * (D * 4 + 8)) as u64));
            let id = BenchmarkId::new(pattern, format!("E={e},D={D}"));
            group.bench_function(id, |b| {
                b.iter(|| {
                    let sums: Vec<[f32; D]> = index
                        .par_chunks(1 << 12)
                        .enumerate()
                        .map(|(c, chunk)| {
                            let mut acc = [0.0f32; D];
                            for (k, &r) in chunk.iter().enumerate() {
                                if let Some(&ahead) = index.get(c * (1 << 12) + k + 16) {
                                    prefetch(&x[ahead]);
                                }
                                acc.iter_mut().zip(&x[r]).for_each(|(a, &v)| *a += v);
                            }
                            acc
                        })
                        .collect();
                    black_box(sums)
                })
            });
        }
    }
    group.finish();
}

/// Hints the CPU to load `row` into every cache level (a no-op off x86-64).
fn prefetch<T>(row: &T) {
    #[cfg(target_arch = "x86_64")]
    for offset in (0..core::mem::size_of::<T>()).step_by(64) {
        // SAFETY: a prefetch never faults; the address lies inside `row`.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                (row as *const T as *const i8).add(offset),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = row;
}

fn one_segment(c: &mut Criterion) {
    let e = max_e();
    let d = 16;
    let device = device();
    let mut state = 7;
    let values: Vec<f32> = (0..e * d)
        .map(|_| (lcg(&mut state) % 1000) as f32 / 100.0)
        .collect();
    let data = Tensor::<2>::from_data(TensorData::new(values, [e, d]), (&device, DType::F32));
    let ids = Tensor::<1, Int>::zeros([e], &device);
    let mut group = c.benchmark_group("one_segment");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Bytes((e * d * 4 + e * 8) as u64));
    for threads in [1usize, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let id =
            |op: &str| BenchmarkId::new(format!("{op}/threads={threads}"), format!("E={e},D={d}"));
        group.bench_function(id("sum"), |b| {
            b.iter(|| {
                let out = pool.install(|| burn_segment::segment_sum(data.clone(), ids.clone(), 1));
                sync(&device);
                black_box(out)
            })
        });
        group.bench_function(id("softmax"), |b| {
            b.iter(|| {
                let out =
                    pool.install(|| burn_segment::segment_softmax(data.clone(), ids.clone(), 1));
                sync(&device);
                black_box(out)
            })
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    one_segment,
    stream_triad,
    device_triad,
    segment_ops,
    fused,
    planned,
    strided,
    statistics,
    random_rows
);
criterion_main!(benches);
