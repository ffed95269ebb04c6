//! Where one `SageConv` training step goes: the layer against its parts, in one run.
//!
//! `cargo bench --bench layer_parts` times, on the directed Erdős–Rényi graph of the `gnn`
//! bench's `conv/sage/E=100000` cell (`E = 1e5`, `N = 1e4`, 64 → 64 features, Flex):
//! - `sage/step`: forward + backward of the layer (as `conv/sage`), and `sage/forward`;
//! - `aggregate/{mean,sum}`: the fused neighbour aggregation alone (planned `spmm`);
//! - `product/forward`: `[N, 64] · [64, 64]`, one of the layer's two forward products;
//! - `product/weight_grad`: `xᵀ · g` with `xᵀ` a transposed view, as autodiff computes each
//!   weight's gradient, and `product/weight_grad_contiguous` the same product from a
//!   contiguous copy of `xᵀ`;
//! - `product/step_{matmul,linear}`: one product's forward and weight gradient under autodiff,
//!   through Burn's matmul and through `burn_segment::linear`;
//! - `product/{forward,weight_grad}_stacked`: the same with `K = 128`, what one product of
//!   `[aggregated | x]` with both weights stacked would run instead of two.

use std::hint::black_box;
use std::time::Duration;

use burn::tensor::{Device, Tensor, TensorData};
use burn_gnn_data::synthetic::{SplitMix64, erdos_renyi};
use burn_gnn_graph::GraphsTuple;
use burn_gnn_nn::{Aggregation, SageConvConfig};
use criterion::{Criterion, criterion_group, criterion_main};

/// `[rows, cols]` standard normal values, seeded.
fn normal(rows: usize, cols: usize, seed: u64, device: &Device) -> Tensor<2> {
    let mut rng = SplitMix64::new(seed);
    let v: Vec<f32> = (0..rows * cols).map(|_| rng.normal() as f32).collect();
    Tensor::from_data(TensorData::new(v, [rows, cols]), device)
}

/// `t` reduced to a host scalar, so that lazy work is done inside the timing.
fn done(t: Tensor<2>) -> f32 {
    black_box(t.sum().into_scalar::<f32>())
}

fn parts(crit: &mut Criterion) {
    burn_segment::cpu::retain_freed_memory();
    let (train, plain) = (Device::flex().autodiff(), Device::flex());
    let (e, d) = (100_000usize, 64);
    let n = e / 10;
    let g = erdos_renyi(n, e as f64 / (n as f64 * (n - 1) as f64), true, 1).expect("valid");
    let graph = |device: &Device| {
        GraphsTuple::from_coo(&g.senders, &g.receivers, n, device)
            .expect("valid")
            .sort_by_receiver()
    };
    let (train_graph, plain_graph) = (graph(&train), graph(&plain));
    let (x, x_plain) = (normal(n, d, 2, &train), normal(n, d, 2, &plain));
    let mut group = crit.benchmark_group("layer_parts");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));

    let sage = SageConvConfig::new(d, d).init(&train);
    group.bench_function("sage/step", |b| {
        b.iter(|| black_box(sage.forward(x.clone(), &train_graph).sum().backward()))
    });
    let sage_plain = SageConvConfig::new(d, d).init(&plain);
    group.bench_function("sage/forward", |b| {
        b.iter(|| done(sage_plain.forward(x_plain.clone(), &plain_graph)))
    });
    let (s, r) = (plain_graph.sender_plan(), plain_graph.receiver_plan());
    for (name, aggr) in [("mean", Aggregation::Mean), ("sum", Aggregation::Sum)] {
        group.bench_function(format!("aggregate/{name}"), |b| {
            b.iter(|| done(aggr.aggregate_gathered_with(x_plain.clone(), s, r)))
        });
    }
    for (suffix, k) in [("", d), ("_stacked", 2 * d)] {
        let a = normal(n, k, 3, &plain);
        let w = normal(k, d, 4, &plain);
        let grad = normal(n, d, 5, &plain);
        let a_t = Tensor::<2>::from_data(a.clone().transpose().into_data(), &plain);
        group.bench_function(format!("product/forward{suffix}"), |b| {
            b.iter(|| done(a.clone().matmul(w.clone())))
        });
        group.bench_function(format!("product/weight_grad{suffix}"), |b| {
            b.iter(|| done(a.clone().transpose().matmul(grad.clone())))
        });
        if k == d {
            group.bench_function("product/weight_grad_contiguous", |b| {
                b.iter(|| done(a_t.clone().matmul(grad.clone())))
            });
            // Forward and weight gradient through Burn's matmul and through
            // `burn_segment::linear` (split by shape), `x` untracked as in `conv/sage`.
            let (a, grad) = (normal(n, k, 3, &train), normal(n, d, 5, &train));
            let w = normal(k, d, 4, &train).require_grad();
            group.bench_function("product/step_matmul", |b| {
                b.iter(|| {
                    let grads = (a.clone().matmul(w.clone()) * grad.clone())
                        .sum()
                        .backward();
                    done(w.grad(&grads).expect("tracked"))
                })
            });
            group.bench_function("product/step_linear", |b| {
                b.iter(|| {
                    let y = burn_segment::linear(a.clone(), w.clone(), None);
                    let grads = (y * grad.clone()).sum().backward();
                    done(w.grad(&grads).expect("tracked"))
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, parts);
criterion_main!(benches);
