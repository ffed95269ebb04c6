//! Link prediction with the graph autoencoders of Kipf & Welling (2016), GAE and VGAE, on a
//! Planetoid dataset with PyG's autoencoder setup, over several seeds; test ROC AUC and average
//! precision as mean ± std.
//!
//! ```sh
//! cargo run --release --example link_pred_cora                          # GAE on Cora, 10 seeds
//! cargo run --release --example link_pred_cora -- --model vgae --dataset citeseer
//! cargo run --release --example link_pred_cora -- --eval-only --checkpoint runs/link_pred_cora-cora-gae/seed-0.bpk
//! ```
//!
//! Setup (PyG's `examples/autoencoder.py`): row-normalised features; each seed splits the
//! undirected edges 85/5/10 with [`RandomLinkSplit`] (its own split per seed), with as many
//! validation and test negatives as positives and fresh training negatives every epoch;
//! encoder GCN 32 → 16 (VGAE: 32 → 2 × 16 = `[μ | log σ]`, the paper's two heads as one
//! layer); inner-product decoder; Adam with lr 0.01, 400 epochs, no dropout or weight decay.
//! Messages pass along the training edges when training and validating, along the training
//! and validation edges when testing. The model of the best validation AUC is kept.
//! `--objective full` trains on the paper code's objective instead: every pair of nodes, the
//! training edges and self loops positive, weighted by the ratio of negatives to positives;
//! `--features raw` feeds the binary feature rows as loaded, as the paper's code does.
//!
//! Outputs under `--out` (default `runs/link_pred_cora-<dataset>-<model>`): `metrics.csv`,
//! `summary.json`, `curves.svg` and `seed-<N>.bpk`, which `--eval-only` reloads and checks
//! against the summary.

mod common {
    pub mod cli;
    pub mod download;
    pub mod output;
    pub mod planetoid;
    pub mod plot;
    pub mod progress;
}

use std::path::{Path, PathBuf};
use std::time::Instant;

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::softplus;
use burn::tensor::{Device, Distribution, Int, Tensor, TensorData};
use burn_gnn::train::mean_std;
use burn_gnn_data::{LinkSet, LinkSplit, Planetoid, RandomLinkSplit};
use burn_gnn_graph::{GraphsTuple, SparseMatrix};
use burn_gnn_nn::{
    Gae, Gcn, GcnConfig, InnerProductDecoder, Vgae, average_precision, kl_loss, roc_auc,
};
use clap::{Parser, ValueEnum};
use common::cli::{Backend, RunArgs, at_least, exit_with};
use common::output::{Outputs, cannot_check, load_checkpoint, read_summary, write_csv};
use common::planetoid::{Dataset, planetoid};
use common::plot::{Row, Series, panels_svg};
use common::progress::Progress;
use plotters::style::RGBColor;
use serde::{Deserialize, Serialize};

/// The autoencoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Model {
    /// Graph autoencoder.
    Gae,
    /// Variational graph autoencoder.
    Vgae,
}

/// The reconstruction objective.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Objective {
    /// PyG's: the training edges against as many fresh negatives each epoch.
    Sampled,
    /// The paper's code: every pair of nodes, the training edges and self loops positive,
    /// weighted by the ratio of negatives to positives.
    Full,
}

/// The node features the encoder reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Features {
    /// Each row divided by its sum (PyG's `NormalizeFeatures`).
    #[default]
    Normalized,
    /// The binary bag-of-words rows as loaded (the paper's code).
    Raw,
}

/// Train GAE or VGAE (Kipf & Welling, 2016) for link prediction on a Planetoid dataset
#[derive(Debug, Parser)]
#[command(name = "link_pred_cora")]
struct Args {
    /// The Planetoid dataset.
    #[arg(long, value_enum, default_value_t = Dataset::Cora)]
    dataset: Dataset,
    /// The autoencoder.
    #[arg(long, value_enum, default_value_t = Model::Gae)]
    model: Model,
    /// The reconstruction objective.
    #[arg(long, value_enum, default_value_t = Objective::Sampled)]
    objective: Objective,
    /// The node features: row-normalised (PyG's example) or raw (the paper's code).
    #[arg(long, value_enum, default_value_t = Features::Normalized)]
    features: Features,
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    backend: Backend,
    /// Epochs per seed.
    #[arg(long, default_value_t = 400, value_parser = at_least::<1>)]
    epochs: usize,
    /// Seeds to train, 0..N (seed N also draws split N).
    #[arg(long, default_value_t = 10, value_parser = at_least::<1>)]
    seeds: usize,
    /// A directory holding the raw Planetoid files (Cora and CiteSeer are embedded).
    #[arg(long, env = burn_gnn_data::DATA_DIR_ENV)]
    data_dir: Option<PathBuf>,
    /// Where the run writes (default runs/link_pred_cora-<dataset>-<model>); a checkpoint to
    /// evaluate.
    #[command(flatten)]
    run: RunArgs,
}

/// The learning rate and the latent width of PyG's example.
const LR: f64 = 0.01;
const LATENT: usize = 16;

/// One epoch of one seed: a row of `metrics.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct LinkRow {
    seed: u64,
    epoch: usize,
    train_loss: f64,
    val_auc: f64,
    val_ap: f64,
    test_auc: f64,
    test_ap: f64,
}

impl Row for LinkRow {
    fn seed(&self) -> u64 {
        self.seed
    }
    fn epoch(&self) -> usize {
        self.epoch
    }
}

/// One seed's kept model and its figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeedResult {
    seed: u64,
    kept_epoch: usize,
    val_auc: f64,
    val_ap: f64,
    test_auc: f64,
    test_ap: f64,
    seconds: f64,
    checkpoint: PathBuf,
}

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    example: String,
    dataset: String,
    model: Model,
    objective: Objective,
    /// Absent in summaries written before the option existed, which normalised.
    #[serde(default)]
    features: Features,
    backend: Backend,
    epochs: usize,
    lr: f64,
    test_auc_mean: f64,
    test_auc_std: f64,
    test_ap_mean: f64,
    test_ap_std: f64,
    seconds: f64,
    seeds: Vec<SeedResult>,
}

// ANCHOR: encoder
/// The encoder of either model: GCN 32 → 16 (GAE) or 32 → 2 × 16 (VGAE's `[μ | log σ]`).
fn encoder(model: Model, d_input: usize, device: &Device) -> Gcn {
    let d_output = if model == Model::Vgae {
        2 * LATENT
    } else {
        LATENT
    };
    let mut gcn = GcnConfig::new(d_input, 2 * LATENT, d_output).init(device);
    if model == Model::Vgae {
        // Each head initialised as its own 32 -> 16 layer (PyG's conv_mu and conv_logstd):
        // Glorot's bound with fan-out 16, not 32.
        let bound = (6.0 / (3 * LATENT) as f64).sqrt();
        let weight = gcn.convs[1].weight.clone();
        gcn.convs[1].weight = weight.map(|w| {
            let w = Tensor::random(w.dims(), Distribution::Uniform(-bound, bound), device);
            if device.is_autodiff() {
                w.require_grad()
            } else {
                w
            }
        });
    }
    gcn
}
// ANCHOR_END: encoder

/// A split's pairs on a device, positives then negatives, with their labels on the host.
struct Pairs {
    senders: Tensor<1, Int>,
    receivers: Tensor<1, Int>,
    labels: Vec<bool>,
}

impl Pairs {
    fn new(set: &LinkSet, device: &Device) -> Pairs {
        let (s, r, y) = set.labelled_pairs();
        Pairs {
            senders: ints(s, device),
            receivers: ints(r, device),
            labels: y.iter().map(|&l| l == 1.0).collect(),
        }
    }
}

fn ints(values: Vec<i64>, device: &Device) -> Tensor<1, Int> {
    let n = values.len();
    Tensor::from_data(TensorData::new(values, [n]), device)
}

/// Everything one seed needs on the devices.
struct Prepared {
    split: LinkSplit,
    /// Training graph and features on the autodiff device.
    train: (GraphsTuple, SparseMatrix),
    train_pos: (Tensor<1, Int>, Tensor<1, Int>),
    /// Validation and test graphs, features and pairs on the evaluation device.
    val: (GraphsTuple, Pairs),
    test: (GraphsTuple, Pairs),
    x: SparseMatrix,
    /// With the full objective: the training adjacency plus self loops, `[N, N]`.
    target: Option<Tensor<2>>,
}

impl Prepared {
    fn new(data: &Planetoid, seed: u64, base: &Device, objective: Objective) -> Prepared {
        let split = RandomLinkSplit::new(0.05, 0.1)
            .with_undirected(true)
            .with_seed(seed)
            .split(&data.senders, &data.receivers, data.num_nodes)
            .unwrap_or_else(|e| exit_with(1, format!("cannot split {}: {e}", data.name)));
        let graph = |set: &LinkSet, device: &Device| {
            let full = data.graph(device).expect("a loaded dataset is valid");
            set.message_graph(&full)
                .expect("the split's own graph")
                .sort_by_receiver()
        };
        let train_dev = base.clone().autodiff();
        let full = data.graph(base).expect("a loaded dataset is valid");
        let x = SparseMatrix::from_dense(&full.node_tensor::<2>().expect("node features"));
        let train_pos = (
            ints(split.train.pos_senders.clone(), &train_dev),
            ints(split.train.pos_receivers.clone(), &train_dev),
        );
        let n = data.num_nodes;
        let target = (objective == Objective::Full).then(|| {
            let mut dense = vec![0f32; n * n];
            for &e in &split.train.message_edges {
                dense[data.senders[e] as usize * n + data.receivers[e] as usize] = 1.0;
            }
            (0..n).for_each(|v| dense[v * n + v] = 1.0);
            Tensor::<2>::from_data(TensorData::new(dense, [n, n]), &train_dev)
        });
        Prepared {
            target,
            train: (graph(&split.train, &train_dev), x.to_device(&train_dev)),
            train_pos,
            val: (graph(&split.val, base), Pairs::new(&split.val, base)),
            test: (graph(&split.test, base), Pairs::new(&split.test, base)),
            x,
            split,
        }
    }
}

/// Kipf's objective: the binary cross-entropy of every pair's logit `z_i · z_j` against the
/// dense `target`, positives weighted by `#negatives / #positives`, the mean scaled by
/// `N² / (2 · #negatives)` (`gae/optimizer.py`).
fn full_loss(z: Tensor<2>, target: &Tensor<2>) -> Tensor<1> {
    let [n, _] = target.dims();
    let pairs = (n * n) as f64;
    let positives = target.clone().sum().into_scalar::<f64>();
    let (pos_weight, norm) = (
        (pairs - positives) / positives,
        pairs / (2.0 * (pairs - positives)),
    );
    let logits = InnerProductDecoder.forward_all(z).reshape([n * n]);
    let y = target.clone().reshape([n * n]);
    let bce = y.clone() * softplus(logits.clone().neg(), 1.0).mul_scalar(pos_weight)
        + (y.neg().add_scalar(1.0)) * softplus(logits, 1.0);
    bce.mean().mul_scalar(norm)
}

/// Either autoencoder around the same encoder.
#[derive(Module, Debug)]
enum Autoencoder {
    Gae(Gae<Gcn>),
    Vgae(Vgae<Gcn>),
}

impl Autoencoder {
    fn new(model: Model, d_input: usize, device: &Device) -> Autoencoder {
        let gcn = encoder(model, d_input, device);
        match model {
            Model::Gae => Autoencoder::Gae(Gae::new(gcn)),
            Model::Vgae => Autoencoder::Vgae(Vgae::new(gcn)),
        }
    }

    // ANCHOR: loss
    /// The training loss on `pos` and `neg` pairs (VGAE: plus the KL term over N), or with a
    /// dense `target`, on every pair (the paper's objective).
    fn loss(
        &self,
        x: &SparseMatrix,
        graph: &GraphsTuple,
        pos: (Tensor<1, Int>, Tensor<1, Int>),
        neg: (Tensor<1, Int>, Tensor<1, Int>),
        target: Option<&Tensor<2>>,
    ) -> Tensor<1> {
        match (self, target) {
            (Autoencoder::Gae(gae), None) => {
                let z = gae.encoder.forward_sparse(x, graph);
                gae.recon_loss(z, pos, neg)
            }
            (Autoencoder::Vgae(vgae), None) => {
                let embedding = vgae.embedding(vgae.encoder.forward_sparse(x, graph));
                vgae.loss(&embedding, pos, neg)
            }
            (Autoencoder::Gae(gae), Some(t)) => full_loss(gae.encoder.forward_sparse(x, graph), t),
            (Autoencoder::Vgae(vgae), Some(t)) => {
                let e = vgae.embedding(vgae.encoder.forward_sparse(x, graph));
                let n = e.mu.dims()[0] as f64;
                full_loss(e.z, t) + kl_loss(e.mu, e.logstd).div_scalar(n)
            }
        }
    }
    // ANCHOR_END: loss

    /// ROC AUC and average precision of `pairs`, messages passing along `graph`.
    fn score(&self, x: &SparseMatrix, graph: &GraphsTuple, pairs: &Pairs) -> (f64, f64) {
        let (s, r) = (pairs.senders.clone(), pairs.receivers.clone());
        let logits = match self {
            Autoencoder::Gae(gae) => gae.decode(gae.encoder.forward_sparse(x, graph), s, r),
            Autoencoder::Vgae(vgae) => {
                let embedding = vgae.embedding(vgae.encoder.forward_sparse(x, graph));
                InnerProductDecoder.forward(embedding.z, s, r)
            }
        };
        let scores: Vec<f64> = logits.into_data().iter::<f64>().collect();
        let auc = roc_auc(&scores, &pairs.labels).expect("both classes, finite scores");
        let ap = average_precision(&scores, &pairs.labels).expect("both classes, finite scores");
        (auc, ap)
    }
}

/// Trains seed `seed` for `epochs`, keeping the model of the best validation AUC.
fn train_seed(
    args: &Args,
    data: &Planetoid,
    seed: u64,
    base: &Device,
    bar: &mut Progress,
) -> (Autoencoder, SeedResult, Vec<LinkRow>) {
    let start = Instant::now();
    let p = Prepared::new(data, seed, base, args.objective);
    let train_dev = base.clone().autodiff();
    train_dev.seed(seed);
    let mut model = Autoencoder::new(args.model, data.num_features, &train_dev);
    // PyTorch's ε: Burn's default (1e-5) damps the small gradients of rare sparse features.
    let mut optim = AdamConfig::new().with_epsilon(1e-8).init();
    let (mut kept, mut best, mut rows) = (model.valid(), None::<LinkRow>, Vec::new());
    for epoch in 1..=args.epochs {
        // VGAE's noise: a stream per epoch.
        train_dev.seed(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ epoch as u64);
        let (ns, nr) = p
            .split
            .train_negatives(epoch as u64)
            .expect("Planetoid graphs are sparse");
        let neg = (ints(ns, &train_dev), ints(nr, &train_dev));
        let target = p.target.as_ref();
        let loss = model.loss(&p.train.1, &p.train.0, p.train_pos.clone(), neg, target);
        let train_loss = loss.clone().into_scalar::<f64>();
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(LR, model, grads);

        let eval = model.valid();
        let (val_auc, val_ap) = eval.score(&p.x, &p.val.0, &p.val.1);
        let (test_auc, test_ap) = eval.score(&p.x, &p.test.0, &p.test.1);
        let row = LinkRow {
            seed,
            epoch,
            train_loss,
            val_auc,
            val_ap,
            test_auc,
            test_ap,
        };
        bar.set(
            epoch as u64,
            format!("loss {train_loss:.3}  val AUC {val_auc:.3}  AP {val_ap:.3}"),
        );
        if best.as_ref().is_none_or(|b| val_auc > b.val_auc) {
            (kept, best) = (eval, Some(row.clone()));
        }
        rows.push(row);
    }
    let b = best.expect("at least one epoch");
    let result = SeedResult {
        seed,
        kept_epoch: b.epoch,
        val_auc: b.val_auc,
        val_ap: b.val_ap,
        test_auc: b.test_auc,
        test_ap: b.test_ap,
        seconds: start.elapsed().as_secs_f64(),
        checkpoint: PathBuf::new(),
    };
    (kept, result, rows)
}

const LOSSES: [Series<LinkRow>; 1] = [("train loss", RGBColor(31, 119, 180), |r| r.train_loss)];
const SCORES: [Series<LinkRow>; 4] = [
    ("val AUC", RGBColor(44, 160, 44), |r| r.val_auc),
    ("val AP", RGBColor(148, 103, 189), |r| r.val_ap),
    ("test AUC", RGBColor(214, 39, 40), |r| r.test_auc),
    ("test AP", RGBColor(255, 127, 14), |r| r.test_ap),
];

/// Reloads `path`, scores it on its seed's split, and compares with the summary beside it.
fn eval_only(args: &Args, data: Planetoid, path: &Path, base: &Device) {
    let fail = |why: String| -> ! { cannot_check(path, why) };
    let summary: Summary = read_summary(path, "link_pred_cora");
    if summary.dataset != data.name {
        fail(format!(
            "it was trained on {}: pass --dataset {}",
            summary.dataset, summary.dataset
        ))
    }
    let data = &with_features(data, summary.features);
    let name = path.file_name();
    let Some(entry) = summary
        .seeds
        .iter()
        .find(|s| s.checkpoint.file_name() == name)
    else {
        fail("it records no such checkpoint".into())
    };
    let p = Prepared::new(data, entry.seed, base, Objective::Sampled);
    let model = load_checkpoint(
        Autoencoder::new(summary.model, data.num_features, base),
        path,
    );
    let (val_auc, val_ap) = model.score(&p.x, &p.val.0, &p.val.1);
    let (test_auc, test_ap) = model.score(&p.x, &p.test.0, &p.test.1);
    println!(
        "{}: val AUC {val_auc:.4} AP {val_ap:.4}  test AUC {test_auc:.4} AP {test_ap:.4}",
        path.display()
    );
    let recorded = (entry.val_auc, entry.val_ap, entry.test_auc, entry.test_ap);
    if recorded == (val_auc, val_ap, test_auc, test_ap) {
        println!("matches the figures recorded when it was trained");
    } else if summary.backend == args.backend {
        exit_with(
            1,
            format!("the reloaded model differs from the training run: recorded {recorded:?}"),
        );
    } else {
        println!("trained on another backend; recorded val/test AUC and AP {recorded:?}");
    }
}

/// `data` with the node features the encoder reads.
fn with_features(mut data: Planetoid, features: Features) -> Planetoid {
    if features == Features::Normalized {
        data.row_normalize();
    }
    data
}

fn main() {
    let args = Args::parse();
    let base = args.backend.device_or_exit();
    let data = planetoid(args.dataset, args.data_dir.as_deref());
    let model_name = format!("{:?}", args.model).to_uppercase();
    println!(
        "{} {model_name}: {} nodes, {} undirected edges, {} features; 85/5/10 split per seed",
        data.name,
        data.num_nodes,
        data.senders.len() / 2,
        data.num_features
    );
    if let Some(path) = &args.run.checkpoint {
        return eval_only(&args, data, path, &base);
    }
    let data = with_features(data, args.features);
    let out = args.run.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!(
            "runs/link_pred_cora-{}-{}",
            args.dataset.name(),
            model_name.to_lowercase()
        ))
    });
    let outputs = Outputs::create(out);
    let start = Instant::now();
    let (mut results, mut rows) = (Vec::new(), Vec::new());
    for seed in 0..args.seeds as u64 {
        let mut bar = Progress::new(
            args.epochs as u64,
            format!("seed {}/{}", seed + 1, args.seeds),
        );
        let (kept, mut r, seed_rows) = train_seed(&args, &data, seed, &base, &mut bar);
        bar.finish(format!(
            "kept epoch {}: val AUC {:.3}, test AUC {:.3} AP {:.3}",
            r.kept_epoch, r.val_auc, r.test_auc, r.test_ap
        ));
        r.checkpoint = outputs.save_model(kept, seed);
        results.push(r);
        rows.extend(seed_rows);
    }
    let (aucs, aps): (Vec<f64>, Vec<f64>) = results.iter().map(|r| (r.test_auc, r.test_ap)).unzip();
    let ((auc_mean, auc_std), (ap_mean, ap_std)) = (mean_std(&aucs), mean_std(&aps));
    println!("\n seed | kept epoch | val AUC | val AP | test AUC | test AP | seconds");
    for r in &results {
        println!(
            " {:>4} | {:>10} | {:>7.3} | {:>6.3} | {:>8.3} | {:>7.3} | {:>7.1}",
            r.seed, r.kept_epoch, r.val_auc, r.val_ap, r.test_auc, r.test_ap, r.seconds
        );
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "\n{} {model_name} over {} seed(s): test AUC {:.1} ± {:.1} %, AP {:.1} ± {:.1} %  \
         (paper: Cora GAE 91.0 / 92.0, VGAE 91.4 / 92.6; CiteSeer GAE 89.5 / 89.9, VGAE 90.8 / 92.0); {seconds:.0} s in all",
        data.name,
        results.len(),
        100.0 * auc_mean,
        100.0 * auc_std,
        100.0 * ap_mean,
        100.0 * ap_std
    );
    let summary = Summary {
        example: "link_pred_cora".into(),
        dataset: data.name.clone(),
        model: args.model,
        objective: args.objective,
        features: args.features,
        backend: args.backend,
        epochs: args.epochs,
        lr: LR,
        test_auc_mean: auc_mean,
        test_auc_std: auc_std,
        test_ap_mean: ap_mean,
        test_ap_std: ap_std,
        seconds,
        seeds: results,
    };
    let dir = &outputs.dir;
    let title = format!("link_pred_cora: {model_name} on {}", data.name);
    let written = write_csv(&dir.join("metrics.csv"), &rows)
        .map_err(|e| e.to_string())
        .and_then(|_| {
            let text = serde_json::to_string_pretty(&summary).expect("a summary serialises");
            std::fs::write(dir.join("summary.json"), text + "\n").map_err(|e| e.to_string())
        })
        .and_then(|_| {
            let svg = panels_svg(&title, &rows, [("loss", &LOSSES), ("AUC and AP", &SCORES)]);
            std::fs::write(dir.join("curves.svg"), svg).map_err(|e| e.to_string())
        });
    if let Err(e) = written {
        exit_with(1, format!("cannot write to {}: {e}", dir.display()));
    }
    println!(
        "wrote metrics.csv, summary.json, curves.svg and seed-<N>.bpk in {}",
        dir.display()
    );
}
