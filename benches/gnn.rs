//! Training-step benchmarks of the layers and models.
//!
//! `cargo bench --bench gnn` runs, in one process:
//! - `cora_epoch/{gat,gcn}/{dense,sparse}`: one full training epoch on Cora as the examples run
//!   it (the papers' models and dropout, forward, cross-entropy on the 140 training nodes plus
//!   weight decay, backward, Adam step), with the 1433 bag-of-words features as a dense
//!   `[2708, 1433]` tensor or as a `SparseMatrix` (1.3 % non-zero) through `forward_sparse`.
//!   Cora comes from `Planetoid::open` (`BURN_GNN_DATA_DIR` if it has the files, else the
//!   copy embedded in `burn-gnn-data`).
//! - `conv/{gcn,gat,sage,gin,graph_conv}/E=…`: one layer's forward + backward (`sum` of the
//!   output) on a directed Erdős–Rényi graph with `E` edges, `N = E / 10` nodes and 64 → 64
//!   features (GAT: 8 heads of 8), receiver-sorted as the examples keep them; throughput in
//!   edges. `gine` (8 edge features) and `edge_conv`, whose messages are `[E, 64]` tensors by
//!   definition, up to 1e6 edges only. Sizes 1e5,
//!   1e6 and 1e7 (`GNN_BENCH_MAX_E` caps them), and the same on a Watts–Strogatz small-world
//!   graph (`conv/{gcn,gat,sage}/small_world_p=0.1/E=…`: `N = E / 10` nodes on a ring, each
//!   joined to its 10 nearest, a tenth of those edges rewired to uniform nodes), whose senders
//!   are mostly near their receivers as in a mesh or a locality-ordered graph.
//!   Two more families show what node order does: `small_world_shuffled` (the same graph, its
//!   nodes relabelled by a seeded random permutation, as a crawl or a hash would number them)
//!   and `small_world_rcm` (that shuffled graph reordered by `GraphsTuple::reorder_rcm`, whose
//!   one-off time the bench prints).
//!   `GNN_BENCH_GRAPHS` picks the families (comma-separated `er`, `small_world`,
//!   `small_world_shuffled`, `small_world_rcm`; all four by default) and
//!   `GNN_BENCH_SMALL_WORLD_P` the rewiring probability. After each size it prints the CPU
//!   output pool's counters (hits = outputs that reused a block, misses = blocks mapped, idle
//!   MiB held). The layers aggregate through the plans their graph builds once (on the first
//!   step, before timing starts).
//!
//! `GNN_BENCH_IDS=i32` makes the device's default Int dtype i32 (graphs keep their ids in it)
//! where the backend's own is wider (NdArray's i64; Flex's is already i32). `GNN_BENCH_BACKEND=ndarray` switches from Flex to NdArray (`wgpu` and `cuda` with their
//! features; each step then waits for the device); `GNN_BENCH_OUTPUT_POOL=0` turns off the CPU output pool, so that
//! every large kernel output is mapped afresh (see `burn_segment::cpu::set_output_pool_capacity`).
//! The bench calls `burn_segment::cpu::retain_freed_memory` first, as a program training on
//! large graphs would, so that the tensors of Burn's own ops reuse freed memory;
//! `GNN_BENCH_RETAIN_FREED=0` leaves glibc's defaults (fresh mappings for blocks over 32 MiB).

use std::hint::black_box;
use std::time::Duration;

use burn::module::Module;
use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::Planetoid;
use burn_gnn_data::synthetic::{SplitMix64, erdos_renyi, watts_strogatz};
use burn_gnn_graph::{GraphsTuple, SparseMatrix};
use burn_gnn_nn::{
    Activation, EdgeConvConfig, Gat, GatConfig, GatConvConfig, Gcn, GcnConfig, GcnConvConfig,
    GcnInput, GinConvConfig, GineConvConfig, GraphConvConfig, SageConvConfig,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

fn base() -> Device {
    if std::env::var("GNN_BENCH_OUTPUT_POOL").as_deref() == Ok("0") {
        burn_segment::cpu::set_output_pool_capacity(0);
    }
    if std::env::var("GNN_BENCH_RETAIN_FREED").as_deref() != Ok("0") {
        burn_segment::cpu::retain_freed_memory();
    }
    let mut device = match std::env::var("GNN_BENCH_BACKEND").as_deref() {
        #[allow(deprecated)]
        Ok("ndarray") => Device::ndarray(),
        #[cfg(feature = "wgpu")]
        Ok("wgpu") => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        #[cfg(feature = "cuda")]
        Ok("cuda") => Device::cuda(0),
        Ok(other) if other != "flex" => {
            panic!(
                "unknown GNN_BENCH_BACKEND {other:?} (flex, ndarray, wgpu, cuda with its feature)"
            )
        }
        _ => Device::flex(),
    };
    // Ids (and every other Int tensor) in i32 instead of the backend's default.
    let i32_ids = burn::tensor::IntDType::I32;
    if std::env::var("GNN_BENCH_IDS").as_deref() == Ok("i32")
        && device.settings().int_dtype != i32_ids
    {
        device
            .configure(i32_ids)
            .expect("GNN_BENCH_IDS=i32: the device's defaults were already set");
    }
    device
}

/// Waits for the device to finish the work queued so far (a no-op on the CPU backends), so that
/// a GPU step is timed to its end rather than to its last launch.
fn settle(device: &Device) {
    device.sync().expect("the device finishes its work");
}

/// `value`, once the device has finished computing it.
fn settled<T>(device: &Device, value: T) -> T {
    settle(device);
    black_box(value)
}

fn cora() -> Result<Planetoid, burn_gnn_data::DataError> {
    Planetoid::open("cora", None, |_| {}).map(|(data, _)| data)
}

/// What one epoch needs: the graph, both feature forms, the training rows and labels.
struct Cora {
    graph: GraphsTuple,
    dense: Tensor<2>,
    sparse: SparseMatrix,
    train: Tensor<1, Int>,
    labels: Tensor<1, Int>,
}

/// A model the epoch can train either way.
trait Model: Module + Clone {
    fn logits(&self, cora: &Cora, sparse: bool) -> Tensor<2>;
    fn decayed(&self) -> Tensor<1>;
}

// Both models have the same entry points (dense or sparse features, the paper's L2 term).
macro_rules! model {
    ($($m:ty),*) => {$(
        impl Model for $m {
            fn logits(&self, c: &Cora, sparse: bool) -> Tensor<2> {
                if sparse {
                    self.forward_sparse(&c.sparse, &c.graph)
                } else {
                    self.forward(c.dense.clone(), &c.graph)
                }
            }
            fn decayed(&self) -> Tensor<1> {
                self.decayed_norm_sq()
            }
        }
    )*};
}
model!(Gat, Gcn);

/// One epoch: forward in training mode, loss + L2, backward, Adam.
fn epoch<M: Model>(
    model: M,
    optim: &mut burn::optim::ModuleOptimizer,
    c: &Cora,
    sparse: bool,
    lr: f64,
) -> M {
    let logits = model.logits(c, sparse).select(0, c.train.clone());
    let loss = CrossEntropyLossConfig::new()
        .init(&logits.device())
        .forward(logits, c.labels.clone())
        + model.decayed() * 2.5e-4;
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    optim.step(lr, model, grads)
}

fn cora_epoch(crit: &mut Criterion) {
    let data = cora().unwrap_or_else(|e| panic!("cora_epoch: cannot load Cora: {e}"));
    let device = base().autodiff();
    let graph = data.graph(&device).expect("valid").sort_by_receiver();
    let dense = graph.node_tensor::<2>().expect("features");
    let sparse = SparseMatrix::from_dense(&dense);
    let train: Vec<i64> = (0..data.train_mask.len() as i64)
        .filter(|&i| data.train_mask[i as usize])
        .collect();
    let train = Tensor::<1, Int>::from_data(TensorData::new(train.clone(), [train.len()]), &device);
    let c = Cora {
        labels: data.labels(&device).select(0, train.clone()),
        graph,
        dense,
        sparse,
        train,
    };
    eprintln!(
        "cora_epoch: {} features per node, {:.2} % non-zero ({} stored)",
        c.sparse.shape()[1],
        100.0 * c.sparse.density(),
        c.sparse.nnz()
    );
    let mut group = crit.benchmark_group("cora_epoch");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    let gat_cfg = GatConfig::new(data.num_features, 64, data.num_classes)
        .with_dropout(0.6)
        .with_activation(Activation::Elu);
    let gcn_cfg = GcnConfig::new(data.num_features, 16, data.num_classes).with_dropout(0.5);
    for sparse in [false, true] {
        let form = if sparse { "sparse" } else { "dense" };
        let mut optim = AdamConfig::new().init();
        let mut gat = gat_cfg.init(&device);
        group.bench_function(BenchmarkId::new("gat", form), |b| {
            b.iter(|| {
                gat = epoch(gat.clone(), &mut optim, &c, sparse, 0.005);
                settle(&device)
            })
        });
        let mut optim = AdamConfig::new().init();
        let mut gcn = gcn_cfg.init(&device);
        group.bench_function(BenchmarkId::new("gcn", form), |b| {
            b.iter(|| {
                gcn = epoch(gcn.clone(), &mut optim, &c, sparse, 0.01);
                settle(&device)
            })
        });
    }
    group.finish();
}

/// A synthetic graph family of the `conv` group.
enum Graph {
    /// Directed `G(n, p)`: senders uniform over all nodes.
    ErdosRenyi,
    /// Watts–Strogatz with `k = 10` and this rewiring probability.
    SmallWorld(f64),
    /// The same graph with its nodes relabelled by a seeded random permutation: a graph with
    /// locality whose ids do not show it (a crawl order, a hash).
    SmallWorldShuffled(f64),
    /// The shuffled graph reordered by reverse Cuthill–McKee (`GraphsTuple::reorder_rcm`).
    SmallWorldRcm(f64),
}

/// The families `GNN_BENCH_GRAPHS` names (comma-separated `er`, `small_world`,
/// `small_world_shuffled`, `small_world_rcm`), by default all four; the small-world
/// rewiring probability is `GNN_BENCH_SMALL_WORLD_P` (default 0.1).
fn graphs() -> Vec<Graph> {
    let p: f64 = std::env::var("GNN_BENCH_SMALL_WORLD_P")
        .map(|v| v.parse().expect("GNN_BENCH_SMALL_WORLD_P: a probability"))
        .unwrap_or(0.1);
    std::env::var("GNN_BENCH_GRAPHS")
        .unwrap_or_else(|_| "er,small_world,small_world_shuffled,small_world_rcm".into())
        .split(',')
        .map(|name| match name.trim() {
            "er" => Graph::ErdosRenyi,
            "small_world" => Graph::SmallWorld(p),
            "small_world_shuffled" => Graph::SmallWorldShuffled(p),
            "small_world_rcm" => Graph::SmallWorldRcm(p),
            other => panic!(
                "unknown GNN_BENCH_GRAPHS entry {other:?} (er, small_world, small_world_shuffled, small_world_rcm)"
            ),
        })
        .collect()
}

fn conv(crit: &mut Criterion) {
    let max_e: usize = std::env::var("GNN_BENCH_MAX_E")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let kinds = graphs();
    let device = base().autodiff();
    let d = 64;
    let mut group = crit.benchmark_group("conv");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for e in [100_000usize, 1_000_000, 10_000_000] {
        if e > max_e {
            continue;
        }
        let n = e / 10;
        for kind in &kinds {
            let (g, prefix) = match kind {
                Graph::ErdosRenyi => (
                    erdos_renyi(n, e as f64 / (n as f64 * (n - 1) as f64), true, 1).expect("valid"),
                    String::new(),
                ),
                Graph::SmallWorld(p) => (
                    watts_strogatz(n, 10, *p, 1).expect("valid"),
                    format!("small_world_p={p}/"),
                ),
                Graph::SmallWorldShuffled(p) => (
                    watts_strogatz(n, 10, *p, 1).expect("valid"),
                    format!("small_world_shuffled_p={p}/"),
                ),
                Graph::SmallWorldRcm(p) => (
                    watts_strogatz(n, 10, *p, 1).expect("valid"),
                    format!("small_world_rcm_p={p}/"),
                ),
            };
            let mut graph = GraphsTuple::from_coo(&g.senders, &g.receivers, n, &device)
                .expect("valid")
                .sort_by_receiver();
            if matches!(kind, Graph::SmallWorldShuffled(_) | Graph::SmallWorldRcm(_)) {
                let mut order: Vec<usize> = (0..n).collect();
                SplitMix64::new(3).shuffle(&mut order);
                graph = graph.permute_nodes(&order).expect("a permutation").graph;
            }
            if matches!(kind, Graph::SmallWorldRcm(_)) {
                // A one-off host computation before training, timed once (not a criterion figure).
                let start = std::time::Instant::now();
                graph = graph.reorder_rcm().graph;
                println!(
                    "conv {prefix}E={}: reorder_rcm took {:.2?}",
                    g.senders.len(),
                    start.elapsed()
                );
            }
            let edges = g.senders.len();
            drop(g);
            // How far apart an edge's ends are numbered: what the node order leaves to the caches.
            let (s, r) = graph.to_coo();
            let gap = s
                .iter()
                .zip(&r)
                .map(|(a, b)| (a - b).unsigned_abs())
                .sum::<u64>() as f64
                / edges as f64;
            println!(
                "conv {prefix}E={edges}: mean |sender - receiver| = {gap:.0} ({n} nodes, {:?} ids)",
                graph.senders().dtype()
            );
            drop((s, r));
            let mut rng = SplitMix64::new(2);
            let x: Vec<f32> = (0..n * d).map(|_| rng.normal() as f32).collect();
            let x = Tensor::<2>::from_data(TensorData::new(x, [n, d]), &device);
            group.throughput(Throughput::Elements(edges as u64));
            let id = |name: &str| BenchmarkId::new(name, format!("{prefix}E={edges}"));
            let gcn = GcnConvConfig::new(d, d).init(&device);
            let norm = gcn.normalization(&graph, None);
            group.bench_function(id("gcn"), |b| {
                b.iter(|| {
                    settled(
                        &device,
                        gcn.forward_with(GcnInput::normalized(x.clone(), &norm))
                            .sum()
                            .backward(),
                    )
                })
            });
            let gat = GatConvConfig::new(d, d / 8).with_heads(8).init(&device);
            group.bench_function(id("gat"), |b| {
                b.iter(|| settled(&device, gat.forward(x.clone(), &graph).sum().backward()))
            });
            let sage = SageConvConfig::new(d, d).init(&device);
            group.bench_function(id("sage"), |b| {
                b.iter(|| settled(&device, sage.forward(x.clone(), &graph).sum().backward()))
            });
            let gin = GinConvConfig::new(d, d, d).init(&device);
            group.bench_function(id("gin"), |b| {
                b.iter(|| settled(&device, gin.forward(x.clone(), &graph).sum().backward()))
            });
            let graph_conv = GraphConvConfig::new(d, d).init(&device);
            group.bench_function(id("graph_conv"), |b| {
                b.iter(|| {
                    settled(
                        &device,
                        graph_conv.forward(x.clone(), &graph).sum().backward(),
                    )
                })
            });
            // The layers whose messages are `[E, D]` tensors by definition: up to 1e6 edges.
            if edges <= 1_000_000 {
                let d_edge = 8;
                let edge_attr: Vec<f32> =
                    (0..edges * d_edge).map(|_| rng.normal() as f32).collect();
                let edge_attr =
                    Tensor::<2>::from_data(TensorData::new(edge_attr, [edges, d_edge]), &device);
                let gine = GineConvConfig::new(d, d, d, d_edge).init(&device);
                group.bench_function(id("gine"), |b| {
                    b.iter(|| {
                        let out = gine.forward(x.clone(), &graph, edge_attr.clone());
                        settled(&device, out.sum().backward())
                    })
                });
                let edge_conv = EdgeConvConfig::new(d, d, d).init(&device);
                group.bench_function(id("edge_conv"), |b| {
                    b.iter(|| {
                        settled(
                            &device,
                            edge_conv.forward(x.clone(), &graph).sum().backward(),
                        )
                    })
                });
            }
            // How many large outputs reused a pooled block (misses = blocks mapped).
            let pool = burn_segment::cpu::output_pool_stats();
            println!(
                "conv {prefix}E={edges}: output pool {} hits, {} misses, {} MiB idle",
                pool.hits,
                pool.misses,
                pool.bytes >> 20
            );
        }
    }
    group.finish();
}

criterion_group!(benches, cora_epoch, conv);
criterion_main!(benches);
