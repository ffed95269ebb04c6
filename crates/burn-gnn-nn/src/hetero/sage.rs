//! [`HeteroSage`]: GraphSAGE on heterogeneous graphs, one [`SageConv`] per relation.

use burn::config::Config;
use burn::tensor::Device;
use burn_gnn_graph::EdgeType;

use super::{HeteroConv, HeteroMerge};
use crate::{Aggregation, SageConv, SageConvConfig};

/// GraphSAGE over a heterogeneous graph: a [`HeteroConv`] of one [`SageConv`] per relation
/// (what PyG's `to_hetero` makes of a SAGE layer).
pub type HeteroSage = HeteroConv<SageConv>;

/// Configuration of a [`HeteroSage`] layer.
#[derive(Config, Debug)]
pub struct HeteroSageConfig {
    /// Input features per node (every node type).
    pub d_input: usize,
    /// Output features per node.
    pub d_output: usize,
    /// The relations, each with its own `SageConv`.
    pub edge_types: Vec<EdgeType>,
    /// The neighbour aggregation within a relation (see [`SageConvConfig::aggr`]).
    #[config(default = "Aggregation::Mean")]
    pub aggr: Aggregation,
    /// How relations into one node type are merged.
    #[config(default = "HeteroMerge::Sum")]
    pub merge: HeteroMerge,
}

impl HeteroSageConfig {
    /// The layer, each `SageConv` with Burn's default initialisation.
    pub fn init(&self, device: &Device) -> HeteroSage {
        let convs = self
            .edge_types
            .iter()
            .map(|et| {
                let conv = SageConvConfig::new(self.d_input, self.d_output)
                    .with_aggr(self.aggr.clone())
                    .init(device);
                (et.clone(), conv)
            })
            .collect();
        HeteroConv::new(convs, self.merge)
    }
}
