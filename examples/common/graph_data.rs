//! The graph-classification datasets of `graph_classification`: the TU datasets through
//! `TuDataset::open`, or seeded synthetic graphs; each graph on the evaluation device and on
//! its autodiff device, ready to batch.

use std::path::Path;

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_data::synthetic::{self, SplitMix64, SyntheticGraph};
use burn_gnn_data::{TuDataset, TuFeatures};
use burn_gnn_graph::{GraphsTuple, batch};
use clap::ValueEnum;

use super::cli::exit_with;
use super::download::downloads;

/// A graph-classification dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Dataset {
    /// MUTAG: 188 molecules, mutagenic or not (embedded).
    Mutag,
    /// PROTEINS: 1113 proteins, enzyme or not.
    Proteins,
    /// ENZYMES: 600 enzymes in 6 classes.
    Enzymes,
    /// NCI1: 4110 molecules, active against lung cancer or not.
    Nci1,
    /// IMDB-BINARY: 1000 actor ego-networks, action or romance.
    ImdbBinary,
    /// 600 generated graphs of three random-graph families (a control).
    Synthetic,
}

impl Dataset {
    /// The name in the files and in `TuDataset::open`, or `synthetic`.
    pub fn tu_name(self) -> &'static str {
        match self {
            Dataset::Mutag => "MUTAG",
            Dataset::Proteins => "PROTEINS",
            Dataset::Enzymes => "ENZYMES",
            Dataset::Nci1 => "NCI1",
            Dataset::ImdbBinary => "IMDB-BINARY",
            Dataset::Synthetic => "synthetic",
        }
    }

    /// The lowercase name for file names.
    pub fn slug(self) -> String {
        self.tu_name().to_lowercase()
    }

    /// The published GIN-0 figure: Xu et al.'s (`xu`) or Errica et al.'s fair protocol.
    pub fn published(self, xu: bool) -> &'static str {
        match (self, xu) {
            (Dataset::Mutag, true) => "Xu et al.: 89.4 ± 5.6 %",
            (Dataset::Proteins, true) => "Xu et al.: 76.2 ± 2.8 %",
            (Dataset::Nci1, true) => "Xu et al.: 82.7 ± 1.7 %",
            (Dataset::ImdbBinary, true) => "Xu et al.: 75.1 ± 5.1 %",
            (Dataset::Proteins, false) => "Errica et al.: 73.3 ± 4.0 %",
            (Dataset::Enzymes, false) => "Errica et al.: 59.6 ± 4.5 %",
            (Dataset::Nci1, false) => "Errica et al.: 80.0 ± 1.4 %",
            (Dataset::ImdbBinary, false) => "Errica et al.: 71.2 ± 3.9 %",
            (Dataset::Synthetic, _) => "no published figure; 1-WL limits GIN to about 2/3",
            _ => "no published figure for this protocol",
        }
    }
}

/// Labelled graphs on an evaluation device and on its autodiff device.
pub struct Graphs {
    /// The dataset's name.
    pub name: String,
    /// The class of each graph.
    pub labels: Vec<usize>,
    pub num_classes: usize,
    /// Node features per node.
    pub d_input: usize,
    /// A social network (wider hidden layers in Xu et al.).
    pub social: bool,
    eval: Vec<GraphsTuple>,
    train: Vec<GraphsTuple>,
}

impl Graphs {
    /// Loads `dataset` (exits with status 1 and the reason when it cannot) onto `base` and
    /// `base.autodiff()`. Node features: one-hot node labels (after the node attributes with
    /// `node_attributes`), or for IMDB-BINARY the one-hot
    /// degree up to the dataset's largest (PyG's `OneHotDegree(135)`), or a constant 1 for the
    /// synthetic graphs.
    pub fn load(
        dataset: Dataset,
        data_dir: Option<&Path>,
        node_attributes: bool,
        base: &Device,
    ) -> Graphs {
        let (name, social, eval, labels, num_classes) = if dataset == Dataset::Synthetic {
            let (graphs, labels) = synthetic_graphs(base);
            ("synthetic".to_string(), false, graphs, labels, 3)
        } else {
            let (tu, source) = TuDataset::open(dataset.tu_name(), data_dir, downloads())
                .unwrap_or_else(|e| {
                    exit_with(1, format!("cannot load {}: {e}", dataset.tu_name()))
                });
            println!("{} from {source}", tu.name);
            let social = tu.node_label_width == 0;
            let features = TuFeatures {
                node_attributes,
                one_hot_degree: social.then(|| tu.max_degree()),
            };
            let graphs = (0..tu.graphs.len())
                .map(|i| {
                    let data = tu
                        .graph_data(i, features)
                        .unwrap_or_else(|e| exit_with(1, e));
                    GraphsTuple::from_graph_data(&data, base).unwrap_or_else(|e| exit_with(1, e))
                })
                .collect();
            (
                tu.name.clone(),
                social,
                graphs,
                tu.labels(),
                tu.num_classes(),
            )
        };
        let d_input = eval[0].node_tensor::<2>().expect("node features").dims()[1];
        let train_dev = base.clone().autodiff();
        let train = eval.iter().map(|g| g.to_device(&train_dev)).collect();
        Graphs {
            name,
            labels,
            num_classes,
            d_input,
            social,
            eval,
            train,
        }
    }

    /// The graphs `idx` joined into one, on `device` (`base` or its autodiff device), and their
    /// classes.
    /// Nodes in each graph.
    pub fn node_counts(&self) -> Vec<usize> {
        self.eval.iter().map(GraphsTuple::sum_n_node).collect()
    }

    pub fn batch(&self, idx: &[usize], device: &Device) -> (GraphsTuple, Tensor<1, Int>) {
        let all = if device.is_autodiff() {
            &self.train
        } else {
            &self.eval
        };
        let parts: Vec<GraphsTuple> = idx.iter().map(|&i| all[i].clone()).collect();
        let graph = batch(&parts).expect("graphs with the same feature layout batch");
        let y: Vec<i64> = idx.iter().map(|&i| self.labels[i] as i64).collect();
        (
            graph,
            Tensor::from_data(TensorData::new(y, [idx.len()]), device),
        )
    }
}

/// 600 graphs of 20–40 nodes and mean degree about 4, 200 per family (Erdős–Rényi, a
/// two-community block model, Barabási–Albert), every node with the feature 1.
fn synthetic_graphs(device: &Device) -> (Vec<GraphsTuple>, Vec<usize>) {
    let mut rng = SplitMix64::new(42);
    (0..600)
        .map(|i| {
            let class = i % 3;
            let n = 20 + rng.below(21) as usize;
            let g = sample(class, n, rng.next_u64());
            let x = Tensor::<2>::ones([n, 1], device);
            let graph = g
                .graph(Some(x), device)
                .expect("a generated graph is valid");
            (graph, class)
        })
        .unzip()
}

/// One random graph of family `class` with `n` nodes and mean degree about 4.
fn sample(class: usize, n: usize, seed: u64) -> SyntheticGraph {
    let degree = 4.0;
    match class {
        0 => synthetic::erdos_renyi(n, degree / (n - 1) as f64, false, seed),
        1 => {
            let half = n / 2;
            let (p_in, p_out) = (3.4 / (half - 1) as f64, 0.6 / (n - half) as f64);
            synthetic::stochastic_block_model(
                &[half, n - half],
                &[vec![p_in, p_out], vec![p_out, p_in]],
                false,
                seed,
            )
        }
        _ => synthetic::barabasi_albert(n, 2, seed),
    }
    .expect("valid generator arguments")
}
