//! The Planetoid side of the node runner (`gat_cora`, `gcn_cora`): the dataset loaded
//! (embedded or downloaded), its graph and features as the models' input, and the run.

use burn::tensor::{Device, Tensor};
use burn_gnn_data::Planetoid;
use burn_gnn_graph::{GraphsTuple, SparseMatrix};
use burn_gnn_nn::{Gat, Gcn};

use super::node::{NodeClassifier, Prepared, RunSpec, evaluate_checkpoint, train_seeds};
use super::node_args::NodeArgs;
use super::planetoid::planetoid;
use super::record::Setup;

/// A Planetoid graph, edges sorted by receiver, and its features (also as a sparse matrix,
/// unless `--dense`).
pub struct PlanetoidInput {
    pub graph: GraphsTuple,
    pub x: Tensor<2>,
    pub sparse: Option<SparseMatrix>,
}

impl PlanetoidInput {
    /// `data` prepared for training and evaluation on `base`.
    pub fn prepared(data: &Planetoid, base: &Device, dense: bool) -> Prepared<PlanetoidInput> {
        let input = |device: &Device| {
            let graph = data
                .graph(device)
                .expect("a loaded dataset is valid")
                .sort_by_receiver();
            let x = graph.node_tensor::<2>().expect("node features");
            PlanetoidInput {
                sparse: (!dense).then(|| SparseMatrix::from_dense(&x)),
                x,
                graph,
            }
        };
        let masks = [&data.train_mask, &data.val_mask, &data.test_mask];
        Prepared::new(input, |d| data.labels(d), masks.map(|m| m.as_slice()), base)
    }
}

// ANCHOR: impls
// The library's GAT and GCN: sparse first layers (unless `--dense`), and the L2 term of their
// papers.
macro_rules! node_classifier {
    ($($model:ty),*) => {$(
        impl NodeClassifier<PlanetoidInput> for $model {
            fn logits(&self, input: &PlanetoidInput) -> Tensor<2> {
                match &input.sparse {
                    Some(x) => self.forward_sparse(x, &input.graph),
                    None => self.forward(input.x.clone(), &input.graph),
                }
            }
            fn decayed(&self) -> Tensor<1> {
                self.decayed_norm_sq()
            }
        }
    )*};
}
node_classifier!(Gat, Gcn);
// ANCHOR_END: impls

/// Runs a Planetoid node-classification example (`gat_cora`, `gcn_cora`): either
/// `--eval-only` on a checkpoint, or training over seeds with a progress bar each, a final
/// table, metrics, plot and checkpoints. `make` builds the model for a dataset on a device.
pub fn run_node_classification<M: NodeClassifier<PlanetoidInput>>(
    example: &str,
    paper: &str,
    args: &NodeArgs,
    setup: Setup,
    make: impl Fn(&Planetoid, &Device) -> M,
) {
    let base = args.backend.device_or_exit();
    let mut data = planetoid(args.dataset, args.data_dir.as_deref());
    data.row_normalize();
    println!(
        "{}: {} nodes, {} edges, {} features, {} classes; train/val/test {}/{}/{}",
        data.name,
        data.num_nodes,
        data.senders.len(),
        data.num_features,
        data.num_classes,
        data.train_mask.iter().filter(|&&m| m).count(),
        data.val_mask.iter().filter(|&&m| m).count(),
        data.test_mask.iter().filter(|&&m| m).count()
    );
    let p = PlanetoidInput::prepared(&data, &base, args.dense);
    let spec = RunSpec {
        example,
        paper,
        dataset: data.name.clone(),
        backend: args.backend,
        seeds: args.seeds,
        dense: args.dense,
        out: args.out_dir(example),
        resume: args.resume.clone(),
    };
    match &args.run.checkpoint {
        Some(path) => evaluate_checkpoint(make(&data, &base), &p, path, args.backend),
        None => train_seeds(&spec, setup, &p, |d| make(&data, d)),
    }
}
