//! The segment plans a graph holds for its index lists: each built on first use, shared by the
//! graph's clones and moved by `to_device`; a graph whose edges or nodes change starts without.
//! Knows nothing of `GraphsTuple`: the graph hands in its ids (see `graphs_tuple.rs`).

use std::sync::{Arc, OnceLock};

use burn::tensor::{Device, Int, Tensor};
use burn_segment::SegmentPlan;

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

impl GraphPlans {
    /// The receivers' plan over `n` nodes, built from `ids` on first use.
    pub(crate) fn receivers(&self, ids: impl FnOnce() -> Tensor<1, Int>, n: usize) -> &SegmentPlan {
        planned(&self.receivers, ids, n, "receivers")
    }

    /// The senders' plan over `n` nodes, built from `ids` on first use.
    pub(crate) fn senders(&self, ids: impl FnOnce() -> Tensor<1, Int>, n: usize) -> &SegmentPlan {
        planned(&self.senders, ids, n, "senders")
    }

    /// Each node's graph over `n` graphs, built from `ids` on first use.
    pub(crate) fn node_graph(
        &self,
        ids: impl FnOnce() -> Tensor<1, Int>,
        n: usize,
    ) -> &SegmentPlan {
        planned(&self.node_graph, ids, n, "node graph ids")
    }

    /// Each edge's graph over `n` graphs, built from `ids` on first use.
    pub(crate) fn edge_graph(
        &self,
        ids: impl FnOnce() -> Tensor<1, Int>,
        n: usize,
    ) -> &SegmentPlan {
        planned(&self.edge_graph, ids, n, "edge graph ids")
    }

    /// The sender and receiver plans over `n` nodes of the edges followed by one self loop per
    /// node, built from `ids() = (senders, receivers)` (in the device's default int dtype) on
    /// first use.
    pub(crate) fn looped(
        &self,
        ids: impl FnOnce() -> (Tensor<1, Int>, Tensor<1, Int>),
        n: usize,
    ) -> (&SegmentPlan, &SegmentPlan) {
        let (s, r) = self.looped.get_or_init(|| {
            let (senders, receivers) = ids();
            let loops = Tensor::<1, Int>::arange(0..n as i64, &senders.device());
            let looped = |ids: Tensor<1, Int>| Tensor::cat(vec![ids, loops.clone()], 0);
            (
                plan(looped(senders), n, "senders"),
                plan(looped(receivers), n, "receivers"),
            )
        });
        (s, r)
    }
}
