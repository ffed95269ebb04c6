//! [`HeteroSage`]: GraphSAGE on heterogeneous graphs, one [`SageConv`] per relation.

use burn::config::Config;
use burn::tensor::Device;
use burn_gnn_graph::EdgeType;

use super::HeteroConv;
use crate::{NnError, SageConv, SageConvConfig};

// ANCHOR: heterosage
/// GraphSAGE over a heterogeneous graph: a [`HeteroConv`] of one [`SageConv`] per relation
/// (what PyG's `to_hetero` makes of a SAGE layer).
pub type HeteroSage = HeteroConv<SageConv>;
// ANCHOR_END: heterosage

// ANCHOR: heterosageconfig
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
    #[config(default = "String::from(\"mean\")")]
    pub aggr: String,
    /// How relations into one node type are merged: `sum`, `mean`, `max`, `min` or `cat`.
    #[config(default = "String::from(\"sum\")")]
    pub merge: String,
}
// ANCHOR_END: heterosageconfig

impl HeteroSageConfig {
    /// The layer, each `SageConv` with Burn's default initialisation.
    ///
    /// # Errors
    /// An unknown aggregation or merge.
    pub fn init(&self, device: &Device) -> Result<HeteroSage, NnError> {
        let merge = self.merge.parse()?;
        let convs = self
            .edge_types
            .iter()
            .map(|et| {
                let conv = SageConvConfig::new(self.d_input, self.d_output)
                    .with_aggr(self.aggr.clone())
                    .init(device)?;
                Ok((et.clone(), conv))
            })
            .collect::<Result<Vec<_>, NnError>>()?;
        Ok(HeteroConv::new(convs, merge))
    }
}
