//! Training under burn-train's [`Learner`](burn::train::Learner): batches, and the wrappers
//! that give burn-train a loss and classification outputs.

use burn::module::{Module, ModuleDisplay};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::tensor::{Int, Tensor};
use burn::train::{ClassificationOutput, InferenceStep, TrainOutput, TrainStep};
use burn_gnn_graph::GraphsTuple;
use burn_gnn_nn::{InnerProductDecoder, NodeModel, bce_with_logits};

/// A mini-batch for node classification: a graph, its node features, the node rows that carry
/// a loss, and their labels.
///
/// # Shapes
/// `x: [N, d_input]` (the graph's nodes), `rows: [B]` (indices into `0..N`), `targets: [B]`.
#[derive(Clone, Debug)]
pub struct NodeBatch {
    /// The graph messages flow over.
    pub graph: GraphsTuple,
    /// Node features.
    pub x: Tensor<2>,
    /// The rows whose predictions are scored (a sampled batch's seeds, a split's nodes).
    pub rows: Tensor<1, Int>,
    /// The class of each scored row.
    pub targets: Tensor<1, Int>,
}

/// A mini-batch for graph classification: several graphs joined into one `GraphsTuple`
/// (as [`burn_gnn_graph::batch`] does) and one label per graph.
///
/// # Shapes
/// `x: [N, d_input]` (all nodes of the batch), `targets: [num_graphs]`.
#[derive(Clone, Debug)]
pub struct GraphBatch {
    /// The batched graphs.
    pub graph: GraphsTuple,
    /// Node features.
    pub x: Tensor<2>,
    /// The class of each graph.
    pub targets: Tensor<1, Int>,
}

/// A mini-batch for link prediction: a graph messages pass along, its node features, and the
/// node pairs to score with their labels (1 for an edge, 0 for a negative).
///
/// # Shapes
/// `x: [N, d_input]`, `senders`, `receivers`, `targets: [B]`.
#[derive(Clone, Debug)]
pub struct LinkBatch {
    /// The graph messages flow over (without the pairs held out for supervision).
    pub graph: GraphsTuple,
    /// Node features.
    pub x: Tensor<2>,
    /// The first node of each scored pair.
    pub senders: Tensor<1, Int>,
    /// The second node of each scored pair.
    pub receivers: Tensor<1, Int>,
    /// 1 where the pair is an edge, 0 where it is a negative.
    pub targets: Tensor<1, Int>,
}

/// A model giving one row of class logits per graph of a batch.
pub trait GraphModel: Module + ModuleDisplay + 'static {
    /// Logits `[num_graphs, classes]` for the graphs of `graph`, from features
    /// `x: [N, d_input]`.
    fn graph_logits(&self, x: Tensor<2>, graph: &GraphsTuple) -> Tensor<2>;
}

/// Node classification under burn-train: wraps a [`NodeModel`] so that the `Learner` can
/// train it. The loss is the mean cross-entropy over the batch's `rows`; the output holds
/// those rows' logits and labels, so burn-train's classification metrics apply.
#[derive(Module, Debug)]
pub struct NodeClassification<M: Module> {
    /// The wrapped model.
    pub model: M,
}

impl<M: NodeModel> NodeClassification<M> {
    /// Wraps `model`.
    pub fn new(model: M) -> Self {
        NodeClassification { model }
    }

    /// Loss, logits and labels of `batch`'s scored rows.
    pub fn forward_classification(&self, batch: NodeBatch) -> ClassificationOutput {
        let logits = self
            .model
            .forward_nodes(batch.x, &batch.graph)
            .select(0, batch.rows);
        classification(logits, batch.targets)
    }
}

/// Graph classification under burn-train: wraps a [`GraphModel`]; the loss is the mean
/// cross-entropy over the graphs of the batch.
#[derive(Module, Debug)]
pub struct GraphClassification<M: Module> {
    /// The wrapped model.
    pub model: M,
}

impl<M: GraphModel> GraphClassification<M> {
    /// Wraps `model`.
    pub fn new(model: M) -> Self {
        GraphClassification { model }
    }

    /// Loss, logits and labels of `batch`'s graphs.
    pub fn forward_classification(&self, batch: GraphBatch) -> ClassificationOutput {
        let logits = self.model.graph_logits(batch.x, &batch.graph);
        classification(logits, batch.targets)
    }
}

/// Link prediction under burn-train: wraps a [`NodeModel`] as the encoder of a graph
/// autoencoder; each pair is scored by the inner product of its nodes' embeddings
/// ([`InnerProductDecoder`]) and the loss is the mean binary cross-entropy of the logits
/// against the targets. The output holds the logits as one column and the targets, so
/// burn-train's `AurocMetric::binary()` and `AucPrMetric::binary()` score it.
#[derive(Module, Debug)]
pub struct LinkPrediction<M: Module> {
    /// The encoder.
    pub model: M,
}

impl<M: NodeModel> LinkPrediction<M> {
    /// Wraps `model`.
    pub fn new(model: M) -> Self {
        LinkPrediction { model }
    }

    /// Loss, logits `[B, 1]` and targets of `batch`'s pairs.
    pub fn forward_classification(&self, batch: LinkBatch) -> ClassificationOutput {
        let z = self.model.forward_nodes(batch.x, &batch.graph);
        let logits = InnerProductDecoder.forward(z, batch.senders, batch.receivers);
        let loss = bce_with_logits(logits.clone(), batch.targets.clone().float());
        ClassificationOutput {
            loss,
            output: logits.unsqueeze_dim(1),
            targets: batch.targets,
        }
    }
}

fn classification(output: Tensor<2>, targets: Tensor<1, Int>) -> ClassificationOutput {
    let loss = CrossEntropyLossConfig::new()
        .init(&output.device())
        .forward(output.clone(), targets.clone());
    ClassificationOutput {
        loss,
        output,
        targets,
    }
}

macro_rules! steps {
    ($wrapper:ident, $bound:ident, $batch:ty) => {
        impl<M: $bound> TrainStep for $wrapper<M> {
            type Input = $batch;
            type Output = ClassificationOutput;

            fn step(&self, batch: $batch) -> TrainOutput<ClassificationOutput> {
                let item = self.forward_classification(batch);
                TrainOutput::new(self, item.loss.backward(), item)
            }
        }

        impl<M: $bound> InferenceStep for $wrapper<M> {
            type Input = $batch;
            type Output = ClassificationOutput;

            fn step(&self, batch: $batch) -> ClassificationOutput {
                self.forward_classification(batch)
            }
        }
    };
}
steps!(NodeClassification, NodeModel, NodeBatch);
steps!(GraphClassification, GraphModel, GraphBatch);
steps!(LinkPrediction, NodeModel, LinkBatch);
