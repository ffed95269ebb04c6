//! The typed error every fallible graph operation returns.

use thiserror::Error;

/// Which feature set a feature belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureSetKind {
    /// Per-node features (`[sum_n_node, ...]`).
    Nodes,
    /// Per-edge features (`[sum_n_edge, ...]`).
    Edges,
    /// Per-graph features (`[n_graph, ...]`).
    Globals,
}

impl std::fmt::Display for FeatureSetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FeatureSetKind::Nodes => "node",
            FeatureSetKind::Edges => "edge",
            FeatureSetKind::Globals => "global",
        })
    }
}

/// Why a graph could not be built, transformed, converted, saved or loaded.
///
/// Every message names the offending field, position and value, so that the user can find the
/// bad entry in their data.
#[derive(Debug, Error)]
pub enum GraphError {
    /// `senders` and `receivers` have different lengths.
    #[error(
        "senders has {senders} entries but receivers has {receivers}; both list one node per edge"
    )]
    EdgeIndexLength {
        /// Length of `senders`.
        senders: usize,
        /// Length of `receivers`.
        receivers: usize,
    },
    /// `n_node` and `n_edge` have different lengths.
    #[error("n_node has {n_node} entries but n_edge has {n_edge}; both list one count per graph")]
    GraphCountMismatch {
        /// Length of `n_node`.
        n_node: usize,
        /// Length of `n_edge`.
        n_edge: usize,
    },
    /// A feature's leading dimension does not match the number of nodes, edges or graphs.
    #[error("{set} feature `{name}` has {rows} rows (dim 0) but the graph has {expected} {set}s")]
    FeatureRows {
        /// The feature set.
        set: FeatureSetKind,
        /// The feature's name (`main` for the unnamed `nodes` / `edges` / `globals`).
        name: String,
        /// Its leading dimension.
        rows: usize,
        /// The number of nodes, edges or graphs.
        expected: usize,
    },
    /// A count in `n_node` or `n_edge` is negative.
    #[error("{field}[{graph}] = {value} is negative")]
    NegativeCount {
        /// `n_node` or `n_edge`.
        field: &'static str,
        /// The graph.
        graph: usize,
        /// The count.
        value: i64,
    },
    /// `n_node` or `n_edge` does not add up to the number of nodes or edges.
    #[error("{field} sums to {sum} but there are {expected} {what} (from the tensor shapes)")]
    CountSum {
        /// `n_node` or `n_edge`.
        field: &'static str,
        /// Their sum.
        sum: i64,
        /// The number of nodes or edges.
        expected: usize,
        /// `nodes` or `edges`.
        what: &'static str,
    },
    /// A sender or receiver lies outside `[0, sum_n_node)`.
    #[error("{field}[{edge}] = {value} is out of range: the graph has {num_nodes} nodes")]
    NodeIndexOutOfRange {
        /// `senders` or `receivers`.
        field: &'static str,
        /// The edge.
        edge: usize,
        /// The node index.
        value: i64,
        /// The number of nodes.
        num_nodes: usize,
    },
    /// An edge of graph `graph` points at a node of another graph of the batch.
    #[error(
        "edge {edge} belongs to graph {graph} (nodes {first_node}..{end_node}) but its {field} is node {value}"
    )]
    EdgeCrossesGraphs {
        /// The edge.
        edge: usize,
        /// The graph the edge belongs to (from `n_edge`).
        graph: usize,
        /// `senders` or `receivers`.
        field: &'static str,
        /// The node index.
        value: i64,
        /// First node of the graph.
        first_node: usize,
        /// One past its last node.
        end_node: usize,
    },
    /// The graphs of a batch do not carry the same features.
    #[error("cannot batch: {0}")]
    SchemaMismatch(String),
    /// `batch` was given no graphs.
    #[error("cannot batch an empty list of graphs (there is no device to put the result on)")]
    EmptyBatch,
    /// A padding target is smaller than the graph, or leaves padding edges no node to point at.
    #[error("cannot pad: {0}")]
    Padding(String),
    /// A feature does not have the type or rank that was asked for.
    #[error("{set} feature `{name}`: {message}")]
    FeatureType {
        /// The feature set.
        set: FeatureSetKind,
        /// The feature's name.
        name: String,
        /// What was wrong.
        message: String,
    },
    /// A tensor type Burn holds that a feature cannot (rank above the supported ones, bool, ...).
    #[error("unsupported feature tensor: {0}")]
    UnsupportedFeature(String),
    /// An edge type or count names a node type the heterogeneous graph does not have.
    #[error("unknown node type `{0}`")]
    UnknownNodeType(String),
    /// A problem found in one set of a heterogeneous graph.
    #[error("{set}: {error}")]
    InSet {
        /// The set: `node set `paper``, `edge set (author, writes, paper)` or `context`.
        set: String,
        /// What is wrong with it.
        error: Box<GraphError>,
    },
    /// Heterogeneous graphs with different node types, edge types or feature schemas.
    #[error("heterogeneous graphs differ: {0}")]
    HeteroMismatch(String),
    /// An argument outside the documented range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// JSON cannot represent NaN or infinity; `serde_json` would silently write `null`.
    #[error(
        "{0} holds a non-finite value (NaN or ±inf), which JSON cannot represent; use the binary format"
    )]
    NonFiniteJson(String),
    /// Saved bytes that are not a graph in the expected format.
    #[error("corrupt graph data: {0}")]
    Decode(String),
    /// An I/O error while saving or loading.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A [`Transform`](crate::Transform) defined in another crate failed with its own error
    /// type (e.g. `burn-gnn-data`'s `DataError`); `source` holds it, for `downcast_ref`.
    #[error("{step}: {source}")]
    Step {
        /// The transform: its type's name.
        step: &'static str,
        /// Its error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
