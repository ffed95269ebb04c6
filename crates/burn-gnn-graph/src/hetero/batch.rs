//! Batching, unbatching and padding of [`HeteroGraph`]s, and their masks.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use burn::tensor::{Bool, Int, Tensor, TensorData};

use super::{EdgeSet, EdgeType, HeteroGraph, NodeSet, prefix};
use crate::compat::unless_empty;
use crate::graphs_tuple::{host_ints, index_tensor};
use crate::{FeatureSet, GraphError};

/// Concatenates the sets of `sets` (same schema checked by the caller).
fn cat_sets(sets: &[&FeatureSet]) -> Result<FeatureSet, GraphError> {
    FeatureSet::cat(sets).map_err(GraphError::HeteroMismatch)
}

fn shift(t: &Tensor<1, Int>, by: usize) -> Tensor<1, Int> {
    unless_empty(
        t.clone(),
        |t| if by == 0 { t } else { t.add_scalar(by as i64) },
    )
}

impl HeteroGraph {
    /// Concatenates graphs of the same types into one batch: every set's rows joined, counts
    /// joined, and each graph's indices offset by the nodes of their type before it (from
    /// shapes, no host read). Padding flags are kept.
    ///
    /// # Errors
    /// [`GraphError::EmptyBatch`] for no graphs; [`GraphError::HeteroMismatch`] if the graphs
    /// differ in node types, edge types or feature schemas.
    pub fn batch(graphs: &[HeteroGraph]) -> Result<HeteroGraph, GraphError> {
        let first = graphs.first().ok_or(GraphError::EmptyBatch)?;
        for (i, g) in graphs.iter().enumerate().skip(1) {
            if g.metadata() != first.metadata() {
                return Err(GraphError::HeteroMismatch(format!(
                    "graph {i} has types {:?} but graph 0 has {:?}",
                    g.metadata(),
                    first.metadata()
                )));
            }
            let schemas = |h: &HeteroGraph| {
                let nodes = h.node_sets.values().map(|s| s.features.schema());
                let edges = h.edge_sets.values().map(|s| s.features.schema());
                nodes
                    .chain(edges)
                    .chain([h.context.schema()])
                    .collect::<Vec<_>>()
            };
            if schemas(g) != schemas(first) {
                return Err(GraphError::HeteroMismatch(format!(
                    "graph {i} carries other features than graph 0"
                )));
            }
        }
        let mut node_sets = BTreeMap::new();
        for t in first.node_sets.keys() {
            let sets: Vec<&NodeSet> = graphs.iter().map(|g| &g.node_sets[t]).collect();
            let features = cat_sets(&sets.iter().map(|s| &s.features).collect::<Vec<_>>())?;
            let n_node = Tensor::cat(sets.iter().map(|s| s.n_node.clone()).collect(), 0);
            let num_nodes = sets.iter().map(|s| s.num_nodes).sum();
            node_sets.insert(
                t.clone(),
                NodeSet {
                    features,
                    n_node,
                    num_nodes,
                },
            );
        }
        let mut edge_sets = BTreeMap::new();
        for et in first.edge_sets.keys() {
            let (mut senders, mut receivers) = (vec![], vec![]);
            let (mut src_offset, mut dst_offset) = (0, 0);
            for g in graphs {
                let s = &g.edge_sets[et];
                senders.push(shift(&s.senders, src_offset));
                receivers.push(shift(&s.receivers, dst_offset));
                src_offset += g.num_nodes(&et.src);
                dst_offset += g.num_nodes(&et.dst);
            }
            let sets: Vec<&EdgeSet> = graphs.iter().map(|g| &g.edge_sets[et]).collect();
            let set = EdgeSet {
                features: cat_sets(&sets.iter().map(|s| &s.features).collect::<Vec<_>>())?,
                senders: Tensor::cat(senders, 0),
                receivers: Tensor::cat(receivers, 0),
                n_edge: Tensor::cat(sets.iter().map(|s| s.n_edge.clone()).collect(), 0),
                plans: Default::default(),
            };
            edge_sets.insert(et.clone(), set);
        }
        let any_padding = graphs.iter().any(|g| g.padding.is_some());
        Ok(HeteroGraph {
            node_sets,
            edge_sets,
            context: cat_sets(&graphs.iter().map(|g| &g.context).collect::<Vec<_>>())?,
            n_graph: graphs.iter().map(|g| g.n_graph).sum(),
            padding: any_padding
                .then(|| graphs.iter().flat_map(HeteroGraph::padding_flags).collect()),
            device: first.device.clone(),
            homogeneous: OnceLock::new(),
        })
    }

    /// Splits a batch into its graphs (the inverse of [`batch`](Self::batch)), indices made
    /// local again. Reads every count to the host.
    pub fn unbatch(&self) -> Vec<HeteroGraph> {
        let node_first: BTreeMap<&String, Vec<usize>> = self
            .node_sets
            .iter()
            .map(|(t, s)| (t, prefix(&counts(&s.n_node))))
            .collect();
        let edge_first: BTreeMap<&EdgeType, Vec<usize>> = self
            .edge_sets
            .iter()
            .map(|(t, s)| (t, prefix(&counts(&s.n_edge))))
            .collect();
        let flags = self.padding_flags();
        (0..self.n_graph)
            .map(|g| {
                let node_sets = self
                    .node_sets
                    .iter()
                    .map(|(t, s)| {
                        let (lo, hi) = (node_first[t][g], node_first[t][g + 1]);
                        let set = NodeSet {
                            features: s.features.clone().map(|f| f.slice_rows(lo, hi)),
                            n_node: s.n_node.clone().slice(g..g + 1),
                            num_nodes: hi - lo,
                        };
                        (t.clone(), set)
                    })
                    .collect();
                let edge_sets = self
                    .edge_sets
                    .iter()
                    .map(|(et, s)| {
                        let (lo, hi) = (edge_first[et][g], edge_first[et][g + 1]);
                        let local = |t: &Tensor<1, Int>, firsts: &[usize]| {
                            unless_empty(t.clone().slice(lo..hi), |t| {
                                t.sub_scalar(firsts[g] as i64)
                            })
                        };
                        let set = EdgeSet {
                            features: s.features.clone().map(|f| f.slice_rows(lo, hi)),
                            senders: local(&s.senders, &node_first[&et.src]),
                            receivers: local(&s.receivers, &node_first[&et.dst]),
                            n_edge: s.n_edge.clone().slice(g..g + 1),
                            plans: Default::default(),
                        };
                        (et.clone(), set)
                    })
                    .collect();
                HeteroGraph {
                    node_sets,
                    edge_sets,
                    context: self.context.clone().map(|f| f.slice_rows(g, g + 1)),
                    n_graph: 1,
                    padding: flags[g].then(|| vec![true]),
                    device: self.device.clone(),
                    homogeneous: OnceLock::new(),
                }
            })
            .collect()
    }

    /// Pads to fixed sizes as jraph does for homogeneous graphs: one padding graph takes every
    /// padding node of every type and every padding edge (each pointing from the first padding
    /// node of its source type to the first of its target type), then empty padding graphs
    /// fill up `n_graph`. Types missing from `n_node` / `n_edge` are not padded. Features of
    /// padding rows are zeros.
    ///
    /// # Errors
    /// [`GraphError::Padding`] for a target below the current size or an unknown type,
    /// padding that needs a padding graph when `n_graph` leaves none, or padding edges without
    /// a padding node of their source or target type.
    pub fn pad_with_graphs(
        &self,
        n_node: &BTreeMap<String, usize>,
        n_edge: &BTreeMap<EdgeType, usize>,
        n_graph: usize,
    ) -> Result<HeteroGraph, GraphError> {
        let pad_err = |m: String| Err(GraphError::Padding(m));
        if let Some(t) = n_node.keys().find(|t| !self.node_sets.contains_key(*t)) {
            return pad_err(format!("unknown node type `{t}`"));
        }
        if let Some(t) = n_edge.keys().find(|t| !self.edge_sets.contains_key(*t)) {
            return pad_err(format!("unknown edge type {t}"));
        }
        if n_graph < self.n_graph {
            return pad_err(format!(
                "n_graph = {n_graph} is below the graph's {}",
                self.n_graph
            ));
        }
        let mut pad_nodes = BTreeMap::new();
        for (t, s) in &self.node_sets {
            let target = n_node.get(t).copied().unwrap_or(s.num_nodes);
            if target < s.num_nodes {
                return pad_err(format!(
                    "n_node[{t}] = {target} is below the graph's {}",
                    s.num_nodes
                ));
            }
            pad_nodes.insert(t.clone(), target - s.num_nodes);
        }
        let mut pad_edges = BTreeMap::new();
        for (et, s) in &self.edge_sets {
            let target = n_edge.get(et).copied().unwrap_or(s.num_edges());
            if target < s.num_edges() {
                return pad_err(format!(
                    "n_edge[{et}] = {target} is below the graph's {}",
                    s.num_edges()
                ));
            }
            let pad = target - s.num_edges();
            if pad > 0 && (pad_nodes[&et.src] == 0 || pad_nodes[&et.dst] == 0) {
                return pad_err(format!(
                    "{pad} padding edges of {et} need a padding node of types `{}` and `{}` to point at",
                    et.src, et.dst
                ));
            }
            pad_edges.insert(et.clone(), pad);
        }
        let pad_graphs = n_graph - self.n_graph;
        let needed = pad_nodes.values().chain(pad_edges.values()).any(|&p| p > 0);
        if needed && pad_graphs == 0 {
            return pad_err(format!(
                "padding needs a padding graph: n_graph must be at least {}",
                self.n_graph + 1
            ));
        }
        if pad_graphs == 0 {
            return Ok(self.clone());
        }
        let device = &self.device;
        let counts = |first: usize| {
            let mut c = vec![0i64; pad_graphs];
            c[0] = first as i64;
            c
        };
        let node_sets = self
            .node_sets
            .iter()
            .map(|(t, s)| {
                let pad = pad_nodes[t];
                let set = NodeSet {
                    features: s.features.clone().map(|f| f.pad_rows(pad)),
                    n_node: Tensor::cat(
                        vec![s.n_node.clone(), index_tensor(counts(pad), device)],
                        0,
                    ),
                    num_nodes: s.num_nodes + pad,
                };
                (t.clone(), set)
            })
            .collect();
        let edge_sets = self
            .edge_sets
            .iter()
            .map(|(et, s)| {
                let pad = pad_edges[et];
                let to = |t: &str| index_tensor(vec![self.num_nodes(t) as i64; pad], device);
                let set = EdgeSet {
                    features: s.features.clone().map(|f| f.pad_rows(pad)),
                    senders: Tensor::cat(vec![s.senders.clone(), to(&et.src)], 0),
                    receivers: Tensor::cat(vec![s.receivers.clone(), to(&et.dst)], 0),
                    n_edge: Tensor::cat(
                        vec![s.n_edge.clone(), index_tensor(counts(pad), device)],
                        0,
                    ),
                    plans: Default::default(),
                };
                (et.clone(), set)
            })
            .collect();
        let mut padding = self.padding_flags();
        padding.extend(std::iter::repeat_n(true, pad_graphs));
        Ok(HeteroGraph {
            node_sets,
            edge_sets,
            context: self.context.clone().map(|f| f.pad_rows(pad_graphs)),
            n_graph,
            padding: Some(padding),
            device: self.device.clone(),
            homogeneous: OnceLock::new(),
        })
    }

    /// Removes every padding graph with its nodes and edges (the inverse of
    /// [`pad_with_graphs`](Self::pad_with_graphs)).
    pub fn unpad_with_graphs(&self) -> HeteroGraph {
        if !self.has_padding() {
            return HeteroGraph {
                padding: None,
                ..self.clone()
            };
        }
        let flags = self.padding_flags();
        let kept: Vec<HeteroGraph> = self
            .unbatch()
            .into_iter()
            .zip(flags)
            .filter(|(_, pad)| !pad)
            .map(|(g, _)| g)
            .collect();
        match HeteroGraph::batch(&kept) {
            Ok(g) => g,
            // Only padding graphs: the first of them, emptied, stands for "no graphs".
            Err(_) => self.without_graphs(),
        }
    }

    /// The graph with zero graphs (every set empty), same types and features.
    fn without_graphs(&self) -> HeteroGraph {
        let empty = index_tensor(vec![], &self.device);
        HeteroGraph {
            node_sets: self
                .node_sets
                .iter()
                .map(|(t, s)| {
                    let set = NodeSet {
                        features: s.features.clone().map(|f| f.slice_rows(0, 0)),
                        n_node: empty.clone(),
                        num_nodes: 0,
                    };
                    (t.clone(), set)
                })
                .collect(),
            edge_sets: self
                .edge_sets
                .iter()
                .map(|(t, s)| {
                    let set = EdgeSet {
                        features: s.features.clone().map(|f| f.slice_rows(0, 0)),
                        senders: empty.clone(),
                        receivers: empty.clone(),
                        n_edge: empty.clone(),
                        plans: Default::default(),
                    };
                    (t.clone(), set)
                })
                .collect(),
            context: self.context.clone().map(|f| f.slice_rows(0, 0)),
            n_graph: 0,
            padding: None,
            device: self.device.clone(),
            homogeneous: OnceLock::new(),
        }
    }

    /// Whether any graph is a padding graph.
    pub fn has_padding(&self) -> bool {
        self.padding.as_ref().is_some_and(|p| p.iter().any(|&x| x))
    }

    /// Per graph: whether it is a padding graph.
    pub fn padding_flags(&self) -> Vec<bool> {
        self.padding
            .clone()
            .unwrap_or_else(|| vec![false; self.n_graph])
    }

    fn mask(&self, per_graph: Option<Vec<usize>>) -> Tensor<1, Bool> {
        let flags = self.padding_flags();
        let values: Vec<bool> = match per_graph {
            None => flags.iter().map(|p| !p).collect(),
            Some(c) => c
                .iter()
                .zip(&flags)
                .flat_map(|(&n, &p)| std::iter::repeat_n(!p, n))
                .collect(),
        };
        let n = values.len();
        Tensor::from_data(TensorData::new(values, [n]), &self.device)
    }

    /// Per graph: `true` for real graphs, `false` for padding graphs, `[n_graph]`.
    pub fn graph_mask(&self) -> Tensor<1, Bool> {
        self.mask(None)
    }

    /// Per node of `node_type`: `true` unless it belongs to a padding graph (one host read).
    pub fn node_mask(&self, node_type: &str) -> Option<Tensor<1, Bool>> {
        self.node_sets
            .get(node_type)
            .map(|s| self.mask(Some(counts(&s.n_node))))
    }

    /// Per edge of `edge_type`: `true` unless it belongs to a padding graph (one host read).
    pub fn edge_mask(&self, edge_type: &EdgeType) -> Option<Tensor<1, Bool>> {
        self.edge_sets
            .get(edge_type)
            .map(|s| self.mask(Some(counts(&s.n_edge))))
    }
}

fn counts(t: &Tensor<1, Int>) -> Vec<usize> {
    host_ints(t)
        .into_iter()
        .map(|c| c.max(0) as usize)
        .collect()
}
