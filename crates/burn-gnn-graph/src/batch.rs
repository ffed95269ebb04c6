//! Batching: many graphs as one disjoint union, and back.

use burn::tensor::{Int, Tensor};

use crate::compat::{gather_rows, unless_empty};
use crate::graphs_tuple::{Cache, host_ints, index_tensor};
use crate::{FeatureSet, FeatureSetKind, GraphError, GraphsTuple};

/// Concatenates graphs into one [`GraphsTuple`]: features along dim 0, `n_node`/`n_edge`
/// joined, and each graph's `senders`/`receivers` offset by the nodes before it. No host read:
/// the offsets come from shapes. Padding flags are kept, so padded graphs can be batched.
///
/// # Errors
/// [`GraphError::EmptyBatch`] for no graphs; [`GraphError::SchemaMismatch`] if the graphs do not
/// carry the same features (names, kinds, dtypes and trailing shapes).
pub fn batch(graphs: &[GraphsTuple]) -> Result<GraphsTuple, GraphError> {
    let first = graphs.first().ok_or(GraphError::EmptyBatch)?;
    if graphs.len() == 1 {
        return Ok(first.clone());
    }
    for (i, g) in graphs.iter().enumerate().skip(1) {
        for set in [
            FeatureSetKind::Nodes,
            FeatureSetKind::Edges,
            FeatureSetKind::Globals,
        ] {
            let (a, b) = (first.feature_set(set).schema(), g.feature_set(set).schema());
            if a != b {
                return Err(GraphError::SchemaMismatch(format!(
                    "graph {i} has {set} features {b:?} but graph 0 has {a:?} (name, float, trailing shape, dtype)"
                )));
            }
        }
    }
    let mut offset = 0usize;
    let (mut senders, mut receivers) = (Vec::new(), Vec::new());
    for g in graphs {
        let shift = |t: &Tensor<1, Int>| {
            unless_empty(t.clone(), |t| {
                if offset == 0 {
                    t
                } else {
                    t.add_scalar(offset as i64)
                }
            })
        };
        senders.push(shift(&g.senders));
        receivers.push(shift(&g.receivers));
        offset += g.num_nodes;
    }
    let cat_set = |set: FeatureSetKind| -> Result<FeatureSet, GraphError> {
        let sets: Vec<&FeatureSet> = graphs.iter().map(|g| g.feature_set(set)).collect();
        FeatureSet::cat(&sets).map_err(GraphError::SchemaMismatch)
    };
    let any_padding = graphs.iter().any(GraphsTuple::has_padding);
    Ok(GraphsTuple {
        nodes: cat_set(FeatureSetKind::Nodes)?,
        edges: cat_set(FeatureSetKind::Edges)?,
        globals: cat_set(FeatureSetKind::Globals)?,
        senders: Tensor::cat(senders, 0),
        receivers: Tensor::cat(receivers, 0),
        n_node: Tensor::cat(graphs.iter().map(|g| g.n_node.clone()).collect(), 0),
        n_edge: Tensor::cat(graphs.iter().map(|g| g.n_edge.clone()).collect(), 0),
        num_nodes: offset,
        padding: any_padding.then(|| graphs.iter().flat_map(GraphsTuple::padding_flags).collect()),
        cache: Cache::fresh(),
    })
}

impl GraphsTuple {
    /// Splits a batch back into its graphs (the inverse of [`batch`]): each graph's features,
    /// its edges with indices made local again, and its padding flag. Reads `n_node` and
    /// `n_edge` to the host.
    pub fn unbatch(&self) -> Vec<GraphsTuple> {
        let (n_node, n_edge) = (host_ints(&self.n_node), host_ints(&self.n_edge));
        let flags = self.padding_flags();
        let (mut node, mut edge) = (0usize, 0usize);
        let mut out = Vec::with_capacity(n_node.len());
        for (g, (&nn, &ne)) in n_node.iter().zip(&n_edge).enumerate() {
            let (nn, ne) = (nn as usize, ne as usize);
            let rows = |set: &FeatureSet, start: usize, end: usize| {
                set.clone().map(|f| f.slice_rows(start, end))
            };
            let local = |t: &Tensor<1, Int>| {
                unless_empty(t.clone().slice(edge..edge + ne), |t| {
                    t.sub_scalar(node as i64)
                })
            };
            out.push(GraphsTuple {
                nodes: rows(&self.nodes, node, node + nn),
                edges: rows(&self.edges, edge, edge + ne),
                globals: rows(&self.globals, g, g + 1),
                senders: local(&self.senders),
                receivers: local(&self.receivers),
                n_node: self.n_node.clone().slice(g..g + 1),
                n_edge: self.n_edge.clone().slice(g..g + 1),
                num_nodes: nn,
                padding: flags[g].then(|| vec![true]),
                cache: Cache::fresh(),
            });
            node += nn;
            edge += ne;
        }
        out
    }

    /// Keeps the graphs where `keep[g]` is true, in order (one host read of `n_node`/`n_edge`).
    ///
    /// # Errors
    /// If `keep` does not have one entry per graph.
    pub fn select_graphs(&self, keep: &[bool]) -> Result<GraphsTuple, GraphError> {
        if keep.len() != self.n_graph() {
            return Err(GraphError::InvalidArgument(format!(
                "select_graphs: {} flags for {} graphs",
                keep.len(),
                self.n_graph()
            )));
        }
        if keep.iter().all(|&k| k) {
            return Ok(self.clone());
        }
        let (n_node, n_edge) = (host_ints(&self.n_node), host_ints(&self.n_edge));
        let (mut node_ids, mut edge_ids, mut shifts, mut graph_ids) =
            (vec![], vec![], vec![], vec![]);
        let (mut node, mut edge, mut removed) = (0i64, 0i64, 0i64);
        for (g, (&nn, &ne)) in n_node.iter().zip(&n_edge).enumerate() {
            if keep[g] {
                graph_ids.push(g as i64);
                node_ids.extend(node..node + nn);
                edge_ids.extend(edge..edge + ne);
                shifts.extend(std::iter::repeat_n(removed, ne as usize));
            } else {
                removed += nn;
            }
            node += nn;
            edge += ne;
        }
        let device = self.device();
        let num_nodes = node_ids.len();
        let (nodes, edges, graphs) = (
            index_tensor(node_ids, &device),
            index_tensor(edge_ids, &device),
            index_tensor(graph_ids, &device),
        );
        let shifts = index_tensor(shifts, &device);
        let padding = self.padding.as_ref().map(|p| {
            p.iter()
                .zip(keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| *p)
                .collect()
        });
        Ok(GraphsTuple {
            nodes: self.nodes.clone().map(|f| f.select_rows(nodes.clone())),
            edges: self.edges.clone().map(|f| f.select_rows(edges.clone())),
            globals: self.globals.clone().map(|f| f.select_rows(graphs.clone())),
            senders: unless_empty(gather_rows(self.senders.clone(), edges.clone()), |t| {
                t.sub(shifts.clone())
            }),
            receivers: unless_empty(gather_rows(self.receivers.clone(), edges), |t| {
                t.sub(shifts)
            }),
            n_node: gather_rows(self.n_node.clone(), graphs.clone()),
            n_edge: gather_rows(self.n_edge.clone(), graphs),
            num_nodes,
            padding,
            cache: Cache::fresh(),
        })
    }
}
