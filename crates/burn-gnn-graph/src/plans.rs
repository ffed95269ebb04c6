//! The segment plans a graph holds for its index lists: each built on first use, shared by the
//! graph's clones and moved by `to_device`; a graph whose edges or nodes change starts without.

use std::sync::{Arc, OnceLock};

use burn::tensor::{Device, Int, Tensor};
use burn_segment::SegmentPlan;

use crate::GraphsTuple;

/// A graph's plans, built lazily. Behind an `Arc` in the graph, so a clone (a layer's copy, a
/// batch handed to the next layer) reuses what the original built.
#[derive(Debug, Default)]
pub(crate) struct GraphPlans {
    senders: OnceLock<SegmentPlan>,
    receivers: OnceLock<SegmentPlan>,
    node_graph: OnceLock<SegmentPlan>,
    edge_graph: OnceLock<SegmentPlan>,
    looped: OnceLock<(SegmentPlan, SegmentPlan)>,
}

impl GraphPlans {
    /// Fresh, empty plans (for a graph whose structure changed).
    pub(crate) fn fresh() -> Arc<Self> {
        Arc::default()
    }

    /// The plans built so far, moved to `device`.
    pub(crate) fn to_device(&self, device: &Device) -> Arc<Self> {
        let one = |p: &SegmentPlan| p.to_device(device);
        Arc::new(Self {
            senders: moved(&self.senders, one),
            receivers: moved(&self.receivers, one),
            node_graph: moved(&self.node_graph, one),
            edge_graph: moved(&self.edge_graph, one),
            looped: moved(&self.looped, |(s, r)| (one(s), one(r))),
        })
    }
}

/// A cell holding `to(value)` if `cell` holds a value, empty otherwise: plans built so far,
/// moved (the rest are built on the new device when first asked for).
pub(crate) fn moved<T>(cell: &OnceLock<T>, to: impl FnOnce(&T) -> T) -> OnceLock<T> {
    cell.get().map(to).map(OnceLock::from).unwrap_or_default()
}

/// The plan in `cell`, built from `ids` over `n` segments on first use.
fn planned<'a>(
    cell: &'a OnceLock<SegmentPlan>,
    ids: impl FnOnce() -> Tensor<1, Int>,
    n: usize,
    what: &str,
) -> &'a SegmentPlan {
    cell.get_or_init(|| plan(ids(), n, what))
}

/// The plan of `ids` over `n` segments; a bad id (only a graph from `build_unchecked` holds
/// one) panics naming it.
pub(crate) fn plan(ids: Tensor<1, Int>, n: usize, what: &str) -> SegmentPlan {
    SegmentPlan::new(ids, n).unwrap_or_else(|e| {
        panic!(
            "burn-gnn-graph: the graph's {what}: {e} (a graph from build_unchecked that \
             validate() would reject)"
        )
    })
}

impl GraphsTuple {
    /// The plan of the receivers over the nodes (`sum_n_node` segments): what every layer
    /// aggregates its messages through. Built on first use (one read of the receivers to the
    /// host and a counting sort), then kept by this graph and its clones, so a training loop on
    /// a fixed graph plans once; an operation that changes the edges gives a graph without one.
    ///
    /// # Panics
    /// If a receiver lies outside `[0, sum_n_node)`, which only a graph from
    /// [`build_unchecked`](crate::GraphsTupleBuilder::build_unchecked) can hold.
    pub fn receiver_plan(&self) -> &SegmentPlan {
        let ids = || self.receivers.clone();
        planned(&self.plans.receivers, ids, self.num_nodes, "receivers")
    }

    /// The plan of the senders over the nodes, for aggregations along the reversed edges (and
    /// the backward pass of a fused gather). As [`receiver_plan`](Self::receiver_plan).
    ///
    /// # Panics
    /// If a sender lies outside `[0, sum_n_node)` (a graph from `build_unchecked`).
    pub fn sender_plan(&self) -> &SegmentPlan {
        let ids = || self.senders.clone();
        planned(&self.plans.senders, ids, self.num_nodes, "senders")
    }

    /// The plan of each node's graph over the graphs (`n_graph` segments, sorted): what graph
    /// pooling reduces through. As [`receiver_plan`](Self::receiver_plan).
    pub fn node_graph_plan(&self) -> &SegmentPlan {
        let ids = || self.node_graph_ids();
        planned(
            &self.plans.node_graph,
            ids,
            self.n_graph(),
            "node graph ids",
        )
    }

    /// The sender and receiver plans of the graph's edges followed by one self loop per node
    /// (`E + N` edges, the loops last, in node order): the edge list of the attention layers
    /// that add self loops (they mask the graph's own loops rather than removing them). As
    /// [`receiver_plan`](Self::receiver_plan).
    pub fn plans_with_self_loops(&self) -> (&SegmentPlan, &SegmentPlan) {
        let (s, r) = self.plans.looped.get_or_init(|| {
            let loops = Tensor::<1, Int>::arange(0..self.num_nodes as i64, &self.device());
            let looped = |ids: &Tensor<1, Int>| {
                let ids = crate::graphs_tuple::default_int(ids.clone(), &self.device());
                Tensor::cat(vec![ids, loops.clone()], 0)
            };
            (
                plan(looped(&self.senders), self.num_nodes, "senders"),
                plan(looped(&self.receivers), self.num_nodes, "receivers"),
            )
        });
        (s, r)
    }

    /// The plan of each edge's graph over the graphs (`n_graph` segments, sorted). As
    /// [`receiver_plan`](Self::receiver_plan).
    pub fn edge_graph_plan(&self) -> &SegmentPlan {
        let ids = || self.edge_graph_ids();
        planned(
            &self.plans.edge_graph,
            ids,
            self.n_graph(),
            "edge graph ids",
        )
    }
}
