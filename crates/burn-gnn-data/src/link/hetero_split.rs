//! [`RandomLinkSplit`] on one relation of a heterogeneous graph, with its reverse relation.

use std::collections::HashMap;

use burn_gnn_graph::{EdgeType, HeteroGraph};

use super::host_ints;
use super::split::{Relation, edge_ids};
use crate::{DataError, LinkSet, LinkSplit, NegativeSampler, NegativeSampling, RandomLinkSplit};

fn invalid(message: String) -> DataError {
    DataError::InvalidArgument(format!("RandomLinkSplit: {message}"))
}

impl RandomLinkSplit {
    /// Splits the edges of `edge_type` of a heterogeneous graph (one graph, not a batch) as
    /// [`split`](Self::split) does a homogeneous one, PyG's `edge_types` / `rev_edge_types`:
    /// the supervised pairs are the relation's edges (source, target); negatives are
    /// (source, target) pairs that are not edges; with `rev_edge_type`, every message set also
    /// keeps the reverse relation's edge `target -> source` of each of its edges, and only
    /// those. Other relations are left whole. `undirected` does not apply (an error if set).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a batch, an unknown relation, a reverse relation of
    /// other node types, an edge without its reverse, a duplicate edge, `undirected`, or options
    /// out of range; [`DataError::TooDense`] for too few non-edges.
    pub fn split_hetero(
        &self,
        graph: &HeteroGraph,
        edge_type: &EdgeType,
        rev_edge_type: Option<&EdgeType>,
    ) -> Result<LinkSplit, DataError> {
        self.check()?;
        if self.undirected {
            return Err(invalid("a relation between node types is directed".into()));
        }
        if graph.n_graph() != 1 {
            return Err(invalid(format!(
                "splits one graph, not a batch of {}",
                graph.n_graph()
            )));
        }
        let set = graph
            .edge_set(edge_type)
            .ok_or_else(|| invalid(format!("the graph has no relation {edge_type}")))?;
        let (senders, receivers) = (host_ints(set.senders()), host_ints(set.receivers()));
        let (num_src, num_dst) = (
            graph.num_nodes(&edge_type.src),
            graph.num_nodes(&edge_type.dst),
        );
        let opts = NegativeSampling::default();
        let full = NegativeSampler::bipartite(&senders, &receivers, num_src, num_dst, opts)?;
        edge_ids(&senders, &receivers, &format!(" of {edge_type}"))?;
        let rev_type = match rev_edge_type {
            None => None,
            Some(rev) => Some(reverse_ids(graph, edge_type, rev, &senders, &receivers)?),
        };
        let relation = Relation {
            senders: &senders,
            receivers: &receivers,
            reverse: None,
            rev_type,
        };
        let sampler =
            |s: &[i64], r: &[i64]| NegativeSampler::bipartite(s, r, num_src, num_dst, opts);
        let mut split = self.assemble(relation, (0..senders.len()).collect(), full, sampler)?;
        split.relation = Some((edge_type.clone(), rev_edge_type.cloned()));
        Ok(split)
    }
}

/// For each edge `s -> r` of `edge_type`, the id of `r -> s` in `rev`.
fn reverse_ids(
    graph: &HeteroGraph,
    edge_type: &EdgeType,
    rev: &EdgeType,
    senders: &[i64],
    receivers: &[i64],
) -> Result<Vec<usize>, DataError> {
    if (rev.src.as_str(), rev.dst.as_str()) != (edge_type.dst.as_str(), edge_type.src.as_str()) {
        return Err(invalid(format!(
            "{rev} does not run opposite to {edge_type}"
        )));
    }
    let set = graph
        .edge_set(rev)
        .ok_or_else(|| invalid(format!("the graph has no relation {rev}")))?;
    let (rs, rr) = (host_ints(set.senders()), host_ints(set.receivers()));
    let back: HashMap<(i64, i64), usize> = rs
        .iter()
        .zip(&rr)
        .enumerate()
        .map(|(e, (&s, &r))| ((s, r), e))
        .collect();
    senders
        .iter()
        .zip(receivers)
        .enumerate()
        .map(|(e, (&s, &r))| {
            back.get(&(r, s)).copied().ok_or_else(|| {
                invalid(format!(
                    "edge {e} ({s} -> {r}) of {edge_type} has no reverse in {rev}"
                ))
            })
        })
        .collect()
}

impl LinkSplit {
    /// `graph` (the heterogeneous graph that was split) with only `set`'s message-passing
    /// edges of the split relation and of its reverse, each with its features.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a split of a homogeneous graph, or if `graph` is not
    /// the graph that was split.
    pub fn message_hetero_graph(
        &self,
        set: &LinkSet,
        graph: &HeteroGraph,
    ) -> Result<HeteroGraph, DataError> {
        let Some((edge_type, rev)) = &self.relation else {
            return Err(invalid(
                "a homogeneous split: use LinkSet::message_graph".into(),
            ));
        };
        let mut g = graph.edge_subgraph(edge_type, &set.message_edges)?;
        if let Some(rev) = rev {
            g = g.edge_subgraph(rev, &set.rev_message_edges)?;
        }
        Ok(g)
    }
}
