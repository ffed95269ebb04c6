//! GraphSAGE on your own graph: an edge list and a node table in CSV (see the book's "Your own
//! data"), trained full-batch, with the predictions written back under your node ids.
//!
//! ```sh
//! # Your tables: node ids in `id`, features in every other column but the label.
//! cargo run --release --example own_data -- --edges follows.csv --nodes users.csv \
//!     --source follower --target followee --id user --label team --text-ids --out runs/own
//! # No tables: the embedded Cora written as CSV, read back, trained, and checked against the
//! # same training on the embedded graph (the same losses and accuracy, bit for bit).
//! cargo run --release --example own_data
//! ```
//!
//! Labelled nodes are split at random (seeded) into training and test nodes; with no tables,
//! Cora's public split is used. Prints the loss every 10 epochs and the test accuracy; writes
//! `predictions.csv` (node id, predicted class, by name for text labels) into `--out`.

use std::path::PathBuf;

use burn::nn::loss::CrossEntropyLossConfig;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::Planetoid;
use burn_gnn_data::io::{EdgeTable, Features, IdKind, LabelKind, NodeTable, TableGraph};
use burn_gnn_data::synthetic::SplitMix64;
use burn_gnn_graph::GraphsTuple;
use burn_gnn_nn::GraphSageConfig;
use clap::Parser;

/// GraphSAGE on your own CSV edge list and node table.
#[derive(Parser)]
#[command(name = "own_data")]
struct Args {
    /// The edge list (CSV with a header). Without it, Cora is written as CSV and read back.
    #[arg(long, requires = "nodes")]
    edges: Option<PathBuf>,
    /// The node table (CSV with a header): id, features, label.
    #[arg(long, requires = "edges")]
    nodes: Option<PathBuf>,
    /// The edge list's source column.
    #[arg(long, default_value = "src")]
    source: String,
    /// The edge list's target column.
    #[arg(long, default_value = "dst")]
    target: String,
    /// The node table's id column.
    #[arg(long, default_value = "id")]
    id: String,
    /// The node table's label column (class numbers, or names with --label-names); every other
    /// column is a feature.
    #[arg(long, default_value = "label")]
    label: String,
    /// The labels are class names, not numbers.
    #[arg(long)]
    label_names: bool,
    /// The node ids are text, not integers.
    #[arg(long)]
    text_ids: bool,
    /// The share of labelled nodes to train on (the rest are the test nodes).
    #[arg(long, default_value_t = 0.5)]
    train_fraction: f64,
    /// Epochs.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    /// The seed (parameters and split).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to write predictions.csv (and, without tables, Cora's CSV files).
    #[arg(long, default_value = "runs/own_data")]
    out: PathBuf,
}

/// Trains on `graph` and returns each logged loss and the test accuracy.
fn train(
    graph: &GraphsTuple,
    labels: &[i64],
    num_classes: usize,
    split: (&[i64], &[i64]),
    args: &Args,
) -> (Vec<f64>, f64, Vec<i64>) {
    let device = graph.device();
    device.seed(args.seed);
    let x = graph.node_tensor::<2>().expect("node features");
    let config = GraphSageConfig::new(x.dims()[1], 64, num_classes).with_num_layers(2);
    let mut model = config.init(&device);
    let mut optim = AdamConfig::new().init();
    let loss_fn = CrossEntropyLossConfig::new().init(&device);
    let ints =
        |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &device);
    let (train_idx, test_idx) = (ints(split.0), ints(split.1));
    let y = ints(labels);
    let train_y = y.clone().select(0, train_idx.clone());
    let mut losses = Vec::new();
    for epoch in 0..args.epochs {
        let logits = model.forward(x.clone(), graph).select(0, train_idx.clone());
        let loss = loss_fn.forward(logits, train_y.clone());
        if epoch % 10 == 0 || epoch + 1 == args.epochs {
            let value = loss.clone().into_scalar::<f64>();
            println!("  epoch {epoch:>4}: training loss {value:.6}");
            losses.push(value);
        }
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(0.01, model, grads);
    }
    let pred = model.forward(x, graph).argmax(1).squeeze_dim::<1>(1);
    let right = pred
        .clone()
        .select(0, test_idx.clone())
        .equal(y.select(0, test_idx))
        .int()
        .sum()
        .into_scalar::<i64>();
    let pred = pred.into_data().iter::<i64>().collect();
    (losses, right as f64 / split.1.len().max(1) as f64, pred)
}

/// Writes Cora's embedded files as an edge list and a node table (ids 1000 + row, so the map is
/// not the identity; rows in the same order), and returns their paths.
fn write_cora(cora: &Planetoid, dir: &std::path::Path) -> std::io::Result<(PathBuf, PathBuf)> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let (edges, nodes) = (dir.join("cora_edges.csv"), dir.join("cora_nodes.csv"));
    let mut w = std::io::BufWriter::new(std::fs::File::create(&edges)?);
    writeln!(w, "src,dst")?;
    for (s, r) in cora.senders.iter().zip(&cora.receivers) {
        writeln!(w, "{},{}", 1000 + s, 1000 + r)?;
    }
    w.flush()?;
    let mut w = std::io::BufWriter::new(std::fs::File::create(&nodes)?);
    let names: Vec<String> = (0..cora.num_features).map(|f| format!("w{f}")).collect();
    writeln!(w, "id,label,{}", names.join(","))?;
    for (row, features) in cora.features.chunks(cora.num_features).enumerate() {
        let values: Vec<String> = features.iter().map(f32::to_string).collect();
        writeln!(
            w,
            "{},{},{}",
            1000 + row,
            cora.labels[row],
            values.join(",")
        )?;
    }
    w.flush()?;
    Ok((edges, nodes))
}

/// A seeded shuffle of the labelled rows, split at `fraction`.
fn random_split(labels: &[i64], fraction: f64, seed: u64) -> (Vec<i64>, Vec<i64>) {
    let mut rows: Vec<i64> = (0..labels.len() as i64)
        .filter(|&r| labels[r as usize] >= 0)
        .collect();
    SplitMix64::new(seed).shuffle(&mut rows);
    let cut = ((rows.len() as f64) * fraction).round() as usize;
    let (train, test) = rows.split_at(cut.min(rows.len()));
    (train.to_vec(), test.to_vec())
}

fn main() {
    let args = Args::parse();
    if !(0.0..=1.0).contains(&args.train_fraction) {
        eprintln!("--train-fraction must lie in [0, 1]");
        std::process::exit(2);
    }
    let cora = args
        .edges
        .is_none()
        .then(|| Planetoid::embedded("cora").expect("embedded Cora"));
    let (edges, nodes, ids) = match (&args.edges, &args.nodes, &cora) {
        (Some(e), Some(n), _) => (
            e.clone(),
            n.clone(),
            if args.text_ids {
                IdKind::Text
            } else {
                IdKind::Integer
            },
        ),
        (_, _, Some(cora)) => {
            let (e, n) = write_cora(cora, &args.out).unwrap_or_else(|e| {
                eprintln!(
                    "cannot write Cora's CSV files into {}: {e}",
                    args.out.display()
                );
                std::process::exit(1)
            });
            println!("wrote Cora as {} and {}", e.display(), n.display());
            (e, n, IdKind::Integer)
        }
        _ => unreachable!("clap requires --edges and --nodes together"),
    };
    let kind = if args.label_names {
        LabelKind::Text
    } else {
        LabelKind::Integer
    };
    let read: TableGraph = EdgeTable::csv(&edges)
        .source(args.source.as_str())
        .target(args.target.as_str())
        .ids(ids)
        .nodes(
            NodeTable::csv(&nodes)
                .id(args.id.as_str())
                .features(Features::Rest)
                .label(args.label.as_str(), kind),
        )
        .read()
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    let labels = read.labels().expect("a label column").to_vec();
    let num_classes = read.num_classes().unwrap_or(0).max(1);
    println!(
        "{} nodes, {} edges, {} features, {num_classes} classes",
        read.data.num_nodes,
        read.data.senders.len(),
        read.data.nodes.main.as_ref().map_or(0, |x| x.shape[1])
    );
    let device = Device::flex().autodiff();
    let graph = read
        .graph(&device)
        .expect("a valid graph")
        .sort_by_receiver();
    let mask_rows = |m: &[bool]| {
        (0..m.len() as i64)
            .filter(|&r| m[r as usize])
            .collect::<Vec<i64>>()
    };
    let (train_rows, test_rows) = match &cora {
        Some(cora) => (mask_rows(&cora.train_mask), mask_rows(&cora.test_mask)),
        None => random_split(&labels, args.train_fraction, args.seed),
    };
    println!(
        "training on {} nodes, testing on {}",
        train_rows.len(),
        test_rows.len()
    );
    let (losses, acc, pred) = train(
        &graph,
        &labels,
        num_classes,
        (&train_rows, &test_rows),
        &args,
    );
    println!("test accuracy {:.1} %", 100.0 * acc);
    let named: Vec<String> = pred
        .iter()
        .map(|&c| match &read.classes {
            Some(names) => names[c as usize].clone(),
            None => c.to_string(),
        })
        .collect();
    let out = args.out.join("predictions.csv");
    std::fs::create_dir_all(&args.out).ok();
    if let Err(e) = read.index.write_csv(&out, &args.id, "predicted", &named) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    println!("wrote {}", out.display());
    if let Some(cora) = &cora {
        // The same training on the embedded graph: the read graph must be the same graph.
        println!("the same training on the embedded Cora:");
        let embedded = cora
            .graph(&device)
            .expect("the embedded graph")
            .sort_by_receiver();
        let (want_losses, want_acc, _) = train(
            &embedded,
            &cora.labels,
            cora.num_classes,
            (&train_rows, &test_rows),
            &args,
        );
        if (&losses, acc) != (&want_losses, want_acc) {
            eprintln!(
                "the CSV round trip trained differently: losses {losses:?} against {want_losses:?}, accuracy {acc} against {want_acc}"
            );
            std::process::exit(1);
        }
        println!(
            "the CSV round trip trains as the embedded graph does: the same losses and accuracy"
        );
    }
}
