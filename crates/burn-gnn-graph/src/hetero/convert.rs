//! [`HeteroGraph`] ⇄ [`GraphsTuple`] with type ids (PyG's `to_homogeneous` and back).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use burn::tensor::{Int, Tensor};

use super::{EdgeSet, EdgeType, HeteroGraph, NodeSet, prefix};
use crate::graphs_tuple::{host_ints, index_tensor};
use crate::{Feature, FeatureSet, GraphError, GraphsTuple};

/// Name of the Int node feature `[N]` that [`HeteroGraph::to_homogeneous`] adds: the index of
/// each node's type in [`HeteroGraph::node_types`].
pub const NODE_TYPE: &str = "node_type";
/// Name of the Int edge feature `[E]` that [`HeteroGraph::to_homogeneous`] adds: the index of
/// each edge's type in [`HeteroGraph::edge_types`].
pub const EDGE_TYPE: &str = "edge_type";

/// The main features of `sets` concatenated in order and then gathered at `order`, if every
/// set has main features of one kind, trailing shape and dtype.
fn merged_main<'a>(
    sets: impl Iterator<Item = &'a FeatureSet>,
    order: &[i64],
    device: &burn::tensor::Device,
) -> Option<Feature> {
    let mains: Option<Vec<Feature>> = sets.map(|s| s.main.clone()).collect();
    let cat = Feature::cat(mains?).ok()?;
    Some(cat.select_rows(index_tensor(order.to_vec(), device)))
}

fn host_counts(t: &Tensor<1, Int>) -> Vec<usize> {
    host_ints(t).into_iter().map(|c| c as usize).collect()
}

impl HeteroGraph {
    /// For each node of [`to_homogeneous`](Self::to_homogeneous)'s graph, its row in the node
    /// types' rows concatenated in type order (one host read of the counts).
    fn homogeneous_order(&self) -> Vec<i64> {
        let node_first: Vec<Vec<usize>> = self
            .node_sets
            .values()
            .map(|s| prefix(&host_counts(&s.n_node)))
            .collect();
        let type_start = prefix(
            &self
                .node_sets
                .values()
                .map(|s| s.num_nodes)
                .collect::<Vec<_>>(),
        );
        let mut order = Vec::with_capacity(*type_start.last().unwrap_or(&0));
        for g in 0..self.n_graph {
            for t in 0..self.node_sets.len() {
                order.extend(
                    (node_first[t][g]..node_first[t][g + 1])
                        .map(|local| (type_start[t] + local) as i64),
                );
            }
        }
        order
    }

    /// `[order, inverse]`: the type-major row of each homogeneous node and back, read from the
    /// counts on first use and kept.
    fn homogeneous_index(&self) -> &[Tensor<1, Int>; 2] {
        self.homogeneous.get_or_init(|| {
            let order = self.homogeneous_order();
            let mut inverse = vec![0i64; order.len()];
            for (new, &old) in order.iter().enumerate() {
                inverse[old as usize] = new as i64;
            }
            [
                index_tensor(order, &self.device),
                index_tensor(inverse, &self.device),
            ]
        })
    }

    /// Node features by type as the rows of [`to_homogeneous`](Self::to_homogeneous)'s graph:
    /// how to feed a heterogeneous graph's features to a layer that runs on its homogeneous
    /// form (such as `RgcnConv`).
    ///
    /// # Shapes
    /// `x[t]: [num_nodes(t), D]` for every node type -> `[Σ_t num_nodes(t), D]`.
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] if a node type is missing from `x` or has the wrong
    /// number of rows, or the widths differ.
    pub fn nodes_to_homogeneous(
        &self,
        x: &BTreeMap<String, Tensor<2>>,
    ) -> Result<Tensor<2>, GraphError> {
        let mut parts = Vec::with_capacity(self.node_sets.len());
        for (t, s) in &self.node_sets {
            let xt = x.get(t).ok_or_else(|| {
                GraphError::InvalidArgument(format!("no features for node type `{t}`"))
            })?;
            if xt.dims()[0] != s.num_nodes {
                return Err(GraphError::InvalidArgument(format!(
                    "node type `{t}`: {} feature rows for {} nodes",
                    xt.dims()[0],
                    s.num_nodes
                )));
            }
            parts.push(xt.clone());
        }
        let widths: Vec<usize> = parts.iter().map(|p| p.dims()[1]).collect();
        if widths.windows(2).any(|w| w[0] != w[1]) {
            return Err(GraphError::InvalidArgument(format!(
                "node types have different widths {widths:?}"
            )));
        }
        let Some(width) = widths.first().copied() else {
            return Ok(Tensor::empty([0, 0], &self.device));
        };
        let [order, _] = self.homogeneous_index();
        if order.dims()[0] == 0 {
            return Ok(Tensor::empty([0, width], &self.device));
        }
        Ok(Tensor::cat(parts, 0).select(0, order.clone()))
    }

    /// The inverse of [`nodes_to_homogeneous`](Self::nodes_to_homogeneous): rows of the
    /// homogeneous graph split back into features by node type.
    ///
    /// # Shapes
    /// `x: [Σ_t num_nodes(t), D]` -> `[num_nodes(t), D]` per node type.
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] if `x` does not have one row per node.
    pub fn nodes_from_homogeneous(
        &self,
        x: Tensor<2>,
    ) -> Result<BTreeMap<String, Tensor<2>>, GraphError> {
        let [_, inverse] = self.homogeneous_index();
        let [rows, width] = x.dims();
        if rows != inverse.dims()[0] {
            return Err(GraphError::InvalidArgument(format!(
                "{rows} rows for {} nodes",
                inverse.dims()[0]
            )));
        }
        let type_major = if rows == 0 {
            x
        } else {
            x.select(0, inverse.clone())
        };
        let mut out = BTreeMap::new();
        let mut start = 0;
        for (t, s) in &self.node_sets {
            let part = if s.num_nodes == 0 {
                Tensor::empty([0, width], (&self.device, type_major.dtype()))
            } else {
                type_major.clone().slice(start..start + s.num_nodes)
            };
            out.insert(t.clone(), part);
            start += s.num_nodes;
        }
        Ok(out)
    }

    /// One homogeneous graph with the same nodes and edges: in each graph, the nodes of every
    /// type in [`node_types`](Self::node_types) order, then the next graph's; edges likewise by
    /// edge type. Adds the Int features [`NODE_TYPE`] (index into `node_types()`) and
    /// [`EDGE_TYPE`] (index into `edge_types()`). The main node (edge) features are kept when
    /// every node (edge) type has main features of the same kind and trailing shape, as PyG
    /// does; named features of the sets are not carried over. The context becomes the globals.
    /// Reads counts and indices to the host.
    ///
    /// # Errors
    /// Only if the result fails validation, which a valid `HeteroGraph` never does.
    pub fn to_homogeneous(&self) -> Result<GraphsTuple, GraphError> {
        let device = &self.device;
        let g_count = self.n_graph;
        // The homogeneous node order (shared with `nodes_to_homogeneous`), and back: each node's
        // new index by type and local index, and its type.
        let node_order = self.homogeneous_order();
        let type_start = prefix(
            &self
                .node_sets
                .values()
                .map(|s| s.num_nodes)
                .collect::<Vec<_>>(),
        );
        let mut new_index: Vec<Vec<i64>> = self
            .node_sets
            .values()
            .map(|s| vec![0; s.num_nodes])
            .collect();
        let mut node_type = Vec::with_capacity(node_order.len());
        for (new, &row) in node_order.iter().enumerate() {
            let t = type_start.partition_point(|&start| start <= row as usize) - 1;
            new_index[t][row as usize - type_start[t]] = new as i64;
            node_type.push(t as i64);
        }
        let mut n_node = vec![0i64; g_count];
        for s in self.node_sets.values() {
            for (g, c) in host_counts(&s.n_node).into_iter().enumerate() {
                n_node[g] += c as i64;
            }
        }
        let types: Vec<&String> = self.node_sets.keys().collect();
        let pos = |name: &str| {
            types
                .iter()
                .position(|t| *t == name)
                .expect("validated edge type")
        };
        let edge_counts: Vec<Vec<usize>> = self
            .edge_sets
            .values()
            .map(|s| host_counts(&s.n_edge))
            .collect();
        let edge_first: Vec<Vec<usize>> = edge_counts.iter().map(|c| prefix(c)).collect();
        let edge_start = prefix(
            &self
                .edge_sets
                .values()
                .map(EdgeSet::num_edges)
                .collect::<Vec<_>>(),
        );
        let hosts: Vec<(Vec<i64>, Vec<i64>)> = self
            .edge_sets
            .values()
            .map(|s| (host_ints(&s.senders), host_ints(&s.receivers)))
            .collect();
        let (mut senders, mut receivers, mut edge_order, mut edge_type) =
            (vec![], vec![], vec![], vec![]);
        let mut n_edge = vec![0i64; g_count];
        for g in 0..g_count {
            for (k, et) in self.edge_sets.keys().enumerate() {
                let (src, dst) = (pos(&et.src), pos(&et.dst));
                for e in edge_first[k][g]..edge_first[k][g + 1] {
                    senders.push(new_index[src][hosts[k].0[e] as usize]);
                    receivers.push(new_index[dst][hosts[k].1[e] as usize]);
                    edge_order.push((edge_start[k] + e) as i64);
                    edge_type.push(k as i64);
                    n_edge[g] += 1;
                }
            }
        }
        let num_nodes = node_order.len();
        let mut b = GraphsTuple::builder(
            index_tensor(senders, device),
            index_tensor(receivers, device),
        )
        .n_node(index_tensor(n_node, device))
        .n_edge(index_tensor(n_edge, device))
        .num_nodes(num_nodes)
        .node_feature(NODE_TYPE, index_tensor(node_type, device))
        .edge_feature(EDGE_TYPE, index_tensor(edge_type, device));
        if let Some(f) = merged_main(
            self.node_sets.values().map(|s| &s.features),
            &node_order,
            device,
        ) {
            b = b.nodes(f);
        }
        if let Some(f) = merged_main(
            self.edge_sets.values().map(|s| &s.features),
            &edge_order,
            device,
        ) {
            b = b.edges(f);
        }
        if let Some(f) = &self.context.main {
            b = b.globals(f.clone());
        }
        for (k, f) in &self.context.named {
            b = b.global_feature(k.clone(), f.clone());
        }
        let mut out = b.build()?;
        if self.has_padding() {
            out.padding = self.padding.clone();
        }
        Ok(out)
    }

    /// The inverse of [`to_homogeneous`](Self::to_homogeneous): splits `graph` by its
    /// [`NODE_TYPE`] and [`EDGE_TYPE`] features into the given types (each type's nodes and
    /// edges in their order in `graph`). Main node and edge features are split by type; globals
    /// become the context.
    ///
    /// # Errors
    /// [`GraphError::InvalidArgument`] if a type feature is missing or names a type outside the
    /// lists, or an edge's endpoints do not have its edge type's node types.
    pub fn from_homogeneous(
        graph: &GraphsTuple,
        node_types: &[String],
        edge_types: &[EdgeType],
    ) -> Result<HeteroGraph, GraphError> {
        let bad = |m: String| GraphError::InvalidArgument(format!("from_homogeneous: {m}"));
        let ids = |f: Option<&Feature>, name: &str| -> Result<Vec<i64>, GraphError> {
            let t = f
                .and_then(Feature::int::<1>)
                .ok_or_else(|| bad(format!("no Int feature `{name}` [rows]")))?;
            Ok(host_ints(&t))
        };
        let node_type = ids(
            graph.feature(crate::FeatureSetKind::Nodes, NODE_TYPE),
            NODE_TYPE,
        )?;
        let edge_type = ids(
            graph.feature(crate::FeatureSetKind::Edges, EDGE_TYPE),
            EDGE_TYPE,
        )?;
        if let Some(&t) = node_type
            .iter()
            .find(|&&t| t < 0 || t as usize >= node_types.len())
        {
            return Err(bad(format!(
                "node type {t} for {} node types",
                node_types.len()
            )));
        }
        if let Some(&t) = edge_type
            .iter()
            .find(|&&t| t < 0 || t as usize >= edge_types.len())
        {
            return Err(bad(format!(
                "edge type {t} for {} edge types",
                edge_types.len()
            )));
        }
        let device = graph.device();
        let n_graph = graph.n_graph();
        let (n_node, n_edge) = (host_counts(graph.n_node()), host_counts(graph.n_edge()));
        let (senders, receivers) = (host_ints(graph.senders()), host_ints(graph.receivers()));
        // Per type: its nodes' rows in `graph` and their count per graph; each node's local index.
        let nt = node_types.len();
        let (mut rows, mut counts, mut local) = (
            vec![vec![]; nt],
            vec![vec![0i64; n_graph]; nt],
            vec![0i64; node_type.len()],
        );
        let mut node = 0;
        for (g, &c) in n_node.iter().enumerate() {
            for v in node..node + c {
                let t = node_type[v] as usize;
                local[v] = rows[t].len() as i64;
                rows[t].push(v as i64);
                counts[t][g] += 1;
            }
            node += c;
        }
        let et_count = edge_types.len();
        let (mut e_rows, mut e_counts) =
            (vec![vec![]; et_count], vec![vec![0i64; n_graph]; et_count]);
        let (mut e_send, mut e_recv) = (vec![vec![]; et_count], vec![vec![]; et_count]);
        let mut edge = 0;
        for (g, &c) in n_edge.iter().enumerate() {
            for e in edge..edge + c {
                let k = edge_type[e] as usize;
                let et = &edge_types[k];
                let (s, r) = (senders[e] as usize, receivers[e] as usize);
                let (ts, tr) = (
                    &node_types[node_type[s] as usize],
                    &node_types[node_type[r] as usize],
                );
                if *ts != et.src || *tr != et.dst {
                    return Err(bad(format!(
                        "edge {e} of type {et} goes from a `{ts}` node to a `{tr}` node"
                    )));
                }
                e_send[k].push(local[s]);
                e_recv[k].push(local[r]);
                e_rows[k].push(e as i64);
                e_counts[k][g] += 1;
            }
            edge += c;
        }
        let split = |main: Option<&Feature>, rows: &[i64]| -> FeatureSet {
            FeatureSet {
                main: main.map(|f| f.clone().select_rows(index_tensor(rows.to_vec(), &device))),
                named: BTreeMap::new(),
            }
        };
        let node_main = graph
            .feature_set(crate::FeatureSetKind::Nodes)
            .main
            .as_ref();
        let edge_main = graph
            .feature_set(crate::FeatureSetKind::Edges)
            .main
            .as_ref();
        let node_sets = node_types
            .iter()
            .enumerate()
            .map(|(t, name)| {
                let set = NodeSet {
                    features: split(node_main, &rows[t]),
                    n_node: index_tensor(counts[t].clone(), &device),
                    num_nodes: rows[t].len(),
                };
                (name.clone(), set)
            })
            .collect();
        let edge_sets = edge_types
            .iter()
            .enumerate()
            .map(|(k, et)| {
                let set = EdgeSet {
                    features: split(edge_main, &e_rows[k]),
                    senders: index_tensor(e_send[k].clone(), &device),
                    receivers: index_tensor(e_recv[k].clone(), &device),
                    n_edge: index_tensor(e_counts[k].clone(), &device),
                    plans: Default::default(),
                };
                (et.clone(), set)
            })
            .collect();
        let hetero = HeteroGraph {
            node_sets,
            edge_sets,
            context: graph.feature_set(crate::FeatureSetKind::Globals).clone(),
            n_graph,
            padding: graph.has_padding().then(|| graph.padding_flags()),
            device: device.clone(),
            homogeneous: OnceLock::new(),
        };
        hetero.validate()?;
        Ok(hetero)
    }
}
