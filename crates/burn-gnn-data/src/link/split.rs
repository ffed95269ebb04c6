//! [`RandomLinkSplit`]: train / validation / test edges for link prediction, as PyG's
//! `RandomLinkSplit`.

use std::collections::HashMap;

use burn_gnn_graph::{EdgeType, GraphsTuple};

use crate::synthetic::SplitMix64;
use crate::{DataError, NegativeSampler, NegativeSampling};

/// Splits one graph's edges into training, validation and test edges for link prediction, with
/// PyG's `RandomLinkSplit` semantics:
///
/// - The supervised pairs are the edges, or with [`undirected`](Self::undirected) each pair
///   `{u, v}` once (as its edge with `u <= v`; the input must list both directions). They are
///   shuffled with `seed`; the last `⌊num_val · P⌋ + ⌊num_test · P⌋` of `P` pairs go to
///   validation, then test; the rest are training pairs.
/// - Messages pass along the training edges when training and validating, along the training
///   and validation edges when testing (both directions of each undirected pair, with their
///   original edge ids, so edge features follow their edges). With `disjoint_train_ratio = r`,
///   the first `⌊r · T⌋` training pairs are supervision only and removed from training's
///   message passing (validation still passes messages along them, as PyG).
/// - Negatives: `⌊neg_sampling_ratio · positives⌋` per split, never an edge of the input graph,
///   never a self loop, unordered pairs (each once) with `undirected`. Validation and test
///   negatives are drawn once, distinct from each other; training draws fresh ones per epoch
///   ([`LinkSplit::train_negatives`]), avoiding only the training edges, which are all the
///   model may know (so a training negative can be a validation or test edge, as in PyG's
///   `GAE.recon_loss`).
///
/// Unlike PyG, an undirected graph missing a reverse edge is an error rather than losing the
/// pair, and duplicate edges are an error (coalesce first).
#[derive(Clone, Debug, PartialEq)]
pub struct RandomLinkSplit {
    /// Fraction of the pairs for validation.
    pub num_val: f64,
    /// Fraction of the pairs for testing.
    pub num_test: f64,
    /// Whether the graph is undirected (both directions listed; each pair supervised once).
    pub undirected: bool,
    /// Fraction of the training pairs used for supervision only.
    pub disjoint_train_ratio: f64,
    /// Negatives per positive in every split.
    pub neg_sampling_ratio: f64,
    /// The random seed.
    pub seed: u64,
}

/// The edges of one split (ids into the input edge list) and its supervision pairs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSet {
    /// The edges messages pass along, ascending.
    pub message_edges: Vec<usize>,
    /// Heterogeneous splits: the reverse relation's edges messages pass along (the reverses
    /// of `message_edges`), ascending; empty otherwise.
    pub rev_message_edges: Vec<usize>,
    /// The supervised edges (one direction per undirected pair), in split order.
    pub pos_edges: Vec<usize>,
    /// Senders of the supervised edges.
    pub pos_senders: Vec<i64>,
    /// Receivers of the supervised edges.
    pub pos_receivers: Vec<i64>,
    /// Senders of the fixed negatives (empty for training, which draws them per epoch).
    pub neg_senders: Vec<i64>,
    /// Receivers of the fixed negatives.
    pub neg_receivers: Vec<i64>,
}

/// The result of [`RandomLinkSplit::split`].
#[derive(Clone, Debug)]
pub struct LinkSplit {
    /// Training edges and positives.
    pub train: LinkSet,
    /// Validation edges, positives and negatives.
    pub val: LinkSet,
    /// Test edges, positives and negatives.
    pub test: LinkSet,
    train_sampler: NegativeSampler,
    num_train_neg: usize,
    seed: u64,
    /// Heterogeneous splits: the split relation and its reverse.
    pub(super) relation: Option<(EdgeType, Option<EdgeType>)>,
}

/// The edges being split and how a message set grows from them.
pub(super) struct Relation<'a> {
    pub(super) senders: &'a [i64],
    pub(super) receivers: &'a [i64],
    /// Undirected: the id of each supervised edge's reverse in the same list.
    pub(super) reverse: Option<Vec<usize>>,
    /// Heterogeneous: the id of each edge's reverse in the reverse relation.
    pub(super) rev_type: Option<Vec<usize>>,
}

/// Each edge's id by its `(sender, receiver)`, or an error naming a duplicate (`relation`
/// says which edge set, for a message).
pub(super) fn edge_ids<'a>(
    senders: &'a [i64],
    receivers: &'a [i64],
    relation: &str,
) -> Result<HashMap<(&'a i64, &'a i64), usize>, DataError> {
    let mut id_of = HashMap::with_capacity(senders.len());
    for (e, pair) in senders.iter().zip(receivers).enumerate() {
        if let Some(first) = id_of.insert(pair, e) {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit: edges {first} and {e}{relation} are both {} -> {}; coalesce first",
                pair.0, pair.1
            )));
        }
    }
    Ok(id_of)
}

fn no_reverse(e: usize, s: i64, r: i64) -> DataError {
    DataError::InvalidArgument(format!(
        "RandomLinkSplit: the graph is said to be undirected but edge {e} ({s} -> {r}) has no reverse"
    ))
}

impl LinkSet {
    /// The supervision pairs with their labels, positives first: PyG's `edge_label_index` and
    /// `edge_label`.
    pub fn labelled_pairs(&self) -> (Vec<i64>, Vec<i64>, Vec<f32>) {
        let senders = [self.pos_senders.as_slice(), &self.neg_senders].concat();
        let receivers = [self.pos_receivers.as_slice(), &self.neg_receivers].concat();
        let mut labels = vec![1.0; self.pos_senders.len()];
        labels.resize(senders.len(), 0.0);
        (senders, receivers, labels)
    }

    /// `graph` (the graph that was split) with only this split's message-passing edges, each
    /// with its features; nodes and globals unchanged.
    ///
    /// # Errors
    /// If `graph` is not the graph that was split (an edge id out of range).
    pub fn message_graph(&self, graph: &GraphsTuple) -> Result<GraphsTuple, DataError> {
        Ok(graph.edge_subgraph(&self.message_edges)?)
    }
}

impl LinkSplit {
    /// How many negatives [`train_negatives`](Self::train_negatives) draws per epoch.
    pub fn num_train_negatives(&self) -> usize {
        self.num_train_neg
    }

    /// Fresh training negatives for `epoch`: `⌊neg_sampling_ratio · training positives⌋`
    /// pairs that are not training edges, from the stream of `(seed, epoch)`.
    ///
    /// # Errors
    /// None in practice: the split checked that the free pairs suffice (kept a `Result` for
    /// the sampler's own checks).
    pub fn train_negatives(&self, epoch: u64) -> Result<(Vec<i64>, Vec<i64>), DataError> {
        let seed =
            SplitMix64::new(self.seed ^ epoch.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64();
        self.train_sampler.sample(self.num_train_neg, seed)
    }
}

impl RandomLinkSplit {
    /// A split with `num_val` and `num_test` of the pairs held out; directed, no disjoint
    /// supervision edges, one negative per positive, seed 0.
    pub fn new(num_val: f64, num_test: f64) -> RandomLinkSplit {
        RandomLinkSplit {
            num_val,
            num_test,
            undirected: false,
            disjoint_train_ratio: 0.0,
            neg_sampling_ratio: 1.0,
            seed: 0,
        }
    }

    /// Treat the graph as undirected.
    pub fn with_undirected(mut self, undirected: bool) -> Self {
        self.undirected = undirected;
        self
    }

    /// Supervise on this fraction of the training pairs only.
    pub fn with_disjoint_train_ratio(mut self, ratio: f64) -> Self {
        self.disjoint_train_ratio = ratio;
        self
    }

    /// Negatives per positive.
    pub fn with_neg_sampling_ratio(mut self, ratio: f64) -> Self {
        self.neg_sampling_ratio = ratio;
        self
    }

    /// The random seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    pub(super) fn check(&self) -> Result<(), DataError> {
        let fraction = |x: f64| (0.0..1.0).contains(&x);
        if !fraction(self.num_val)
            || !fraction(self.num_test)
            || self.num_val + self.num_test >= 1.0
        {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit: num_val = {} and num_test = {} must be in [0, 1) with a sum below 1",
                self.num_val, self.num_test
            )));
        }
        if !fraction(self.disjoint_train_ratio) {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit: disjoint_train_ratio = {} is not in [0, 1)",
                self.disjoint_train_ratio
            )));
        }
        if !(self.neg_sampling_ratio >= 0.0 && self.neg_sampling_ratio.is_finite()) {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit: neg_sampling_ratio = {} is not a finite number >= 0",
                self.neg_sampling_ratio
            )));
        }
        Ok(())
    }

    /// Splits the edges `senders[e] -> receivers[e]` of a graph of `num_nodes` nodes.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for options out of range, mismatched lists, a node id
    /// outside the graph, a duplicate edge, a missing reverse edge with `undirected`, or too few
    /// edges to leave a training edge; [`DataError::TooDense`] if there are too few non-edges
    /// for the negatives.
    pub fn split(
        &self,
        senders: &[i64],
        receivers: &[i64],
        num_nodes: usize,
    ) -> Result<LinkSplit, DataError> {
        self.check()?;
        let all = NegativeSampling {
            undirected: self.undirected,
            ..Default::default()
        };
        // Also checks the lengths and the node ids.
        let full = NegativeSampler::new(senders, receivers, &[num_nodes], all)?;
        let id_of = edge_ids(senders, receivers, "")?;
        let mut pairs: Vec<usize> = Vec::with_capacity(senders.len());
        let mut reverse = vec![usize::MAX; senders.len()];
        for (e, (&s, &r)) in senders.iter().zip(receivers).enumerate() {
            if !self.undirected {
                pairs.push(e);
            } else if s <= r {
                let Some(&back) = id_of.get(&(&r, &s)) else {
                    return Err(no_reverse(e, s, r));
                };
                reverse[e] = back;
                pairs.push(e);
            } else if !id_of.contains_key(&(&r, &s)) {
                return Err(no_reverse(e, s, r));
            }
        }
        let sampler = |s: &[i64], r: &[i64]| NegativeSampler::new(s, r, &[num_nodes], all);
        let relation = Relation {
            senders,
            receivers,
            reverse: self.undirected.then_some(reverse),
            rev_type: None,
        };
        self.assemble(relation, pairs, full, sampler)
    }

    /// Shuffles `pairs`, cuts them into training, validation and test pairs, and draws the
    /// negatives (`full` knows every edge; `sampler` builds one over the training edges).
    pub(super) fn assemble(
        &self,
        rel: Relation,
        mut pairs: Vec<usize>,
        full: NegativeSampler,
        sampler: impl Fn(&[i64], &[i64]) -> Result<NegativeSampler, DataError>,
    ) -> Result<LinkSplit, DataError> {
        let (senders, receivers) = (rel.senders, rel.receivers);
        SplitMix64::new(self.seed).shuffle(&mut pairs);
        let p = pairs.len();
        let (n_val, n_test) = (
            (self.num_val * p as f64).floor() as usize,
            (self.num_test * p as f64).floor() as usize,
        );
        let n_train = p - n_val - n_test;
        let n_disjoint = (self.disjoint_train_ratio * n_train as f64).floor() as usize;
        if n_train == n_disjoint {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit: {p} pairs leave no training edge to pass messages along"
            )));
        }
        let (train, rest) = pairs.split_at(n_train);
        let (val, test) = rest.split_at(n_val);
        // Both directions of each undirected pair, ascending.
        let edges_of = |sets: &[&[usize]]| {
            let mut ids: Vec<usize> = sets.iter().flat_map(|s| s.iter()).copied().collect();
            if let Some(reverse) = &rel.reverse {
                let backs: Vec<usize> = ids.iter().map(|&e| reverse[e]).collect();
                ids.extend(backs);
            }
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let ratio = |n: usize| (self.neg_sampling_ratio * n as f64).floor() as usize;
        let (n_neg_val, n_neg_test) = (ratio(n_val), ratio(n_test));
        let (ns, nr) = full.sample(n_neg_val + n_neg_test, self.seed ^ 0x5851_F42D_4C95_7F2D)?;
        let set = |message: Vec<usize>, pos: &[usize], neg: std::ops::Range<usize>| LinkSet {
            rev_message_edges: rel.rev_type.as_ref().map_or_else(Vec::new, |rev| {
                let mut ids: Vec<usize> = message.iter().map(|&e| rev[e]).collect();
                ids.sort_unstable();
                ids
            }),
            message_edges: message,
            pos_edges: pos.to_vec(),
            pos_senders: pos.iter().map(|&e| senders[e]).collect(),
            pos_receivers: pos.iter().map(|&e| receivers[e]).collect(),
            neg_senders: ns[neg.clone()].to_vec(),
            neg_receivers: nr[neg].to_vec(),
        };
        let supervised = if n_disjoint > 0 {
            &train[..n_disjoint]
        } else {
            train
        };
        let train_known = edges_of(&[train]);
        let (ks, kr): (Vec<i64>, Vec<i64>) = train_known
            .iter()
            .map(|&e| (senders[e], receivers[e]))
            .unzip();
        let train_sampler = sampler(&ks, &kr)?;
        // Checked here so that every epoch's training negatives exist.
        let (asked, available) = (ratio(supervised.len()), train_sampler.available()[0]);
        if asked as u64 > available {
            return Err(DataError::TooDense {
                graph: 0,
                asked,
                available,
            });
        }
        Ok(LinkSplit {
            train: set(edges_of(&[&train[n_disjoint..]]), supervised, 0..0),
            val: set(train_known, val, 0..n_neg_val),
            test: set(
                edges_of(&[train, val]),
                test,
                n_neg_val..n_neg_val + n_neg_test,
            ),
            train_sampler,
            num_train_neg: asked,
            seed: self.seed,
            relation: None,
        })
    }

    /// Splits a [`GraphsTuple`] of one graph.
    ///
    /// # Errors
    /// As [`split`](Self::split); [`DataError::InvalidArgument`] for a batch of several graphs.
    pub fn split_graph(&self, graph: &GraphsTuple) -> Result<LinkSplit, DataError> {
        if graph.n_graph() != 1 {
            return Err(DataError::InvalidArgument(format!(
                "RandomLinkSplit splits one graph, not a batch of {}",
                graph.n_graph()
            )));
        }
        let (senders, receivers) = graph.to_coo();
        self.split(&senders, &receivers, graph.sum_n_node())
    }
}

impl burn_gnn_graph::Transform for RandomLinkSplit {
    type Output = LinkSplit;

    /// [`split_graph`](RandomLinkSplit::split_graph) as the last step of a chain
    /// ([`Transform::then`](burn_gnn_graph::Transform::then)).
    ///
    /// # Errors
    /// As [`split_graph`](RandomLinkSplit::split_graph), wrapped in
    /// [`GraphError::Step`](burn_gnn_graph::GraphError::Step).
    fn apply(&self, graph: &GraphsTuple) -> Result<LinkSplit, burn_gnn_graph::GraphError> {
        self.split_graph(graph)
            .map_err(|e| burn_gnn_graph::GraphError::Step {
                step: "RandomLinkSplit",
                source: Box::new(e),
            })
    }
}
