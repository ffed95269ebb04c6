//! [`HeteroNeighborLoader`]: neighbour sampling over the relations of a heterogeneous graph.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::{EdgeType, HeteroGraph, gather_rows};
use rayon::prelude::*;

use crate::DataError;
use crate::sampler::{InNeighbors, batch_stream, draw, epoch_batches};

/// The incoming neighbours of every node through every relation of a heterogeneous graph.
#[derive(Clone, Debug)]
pub struct HeteroNeighbors {
    num_nodes: BTreeMap<String, usize>,
    relations: Vec<(EdgeType, InNeighbors)>,
}

impl HeteroNeighbors {
    /// Lists from node counts by type and edge lists by relation (`senders` index the source
    /// type's nodes, `receivers` the target type's).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for a relation naming an unknown node type, or the
    /// errors of [`InNeighbors::bipartite`].
    pub fn new(
        num_nodes: BTreeMap<String, usize>,
        edges: &[(EdgeType, Vec<i64>, Vec<i64>)],
    ) -> Result<HeteroNeighbors, DataError> {
        let mut relations = Vec::with_capacity(edges.len());
        for (et, s, r) in edges {
            let count = |t: &str| {
                num_nodes.get(t).copied().ok_or_else(|| {
                    DataError::InvalidArgument(format!("relation {et}: unknown node type `{t}`"))
                })
            };
            relations.push((
                et.clone(),
                InNeighbors::bipartite(s, r, count(&et.src)?, count(&et.dst)?)?,
            ));
        }
        Ok(HeteroNeighbors {
            num_nodes,
            relations,
        })
    }
}

/// A sampled heterogeneous mini-batch: nodes by type (the seeds first among their type), and the
/// sampled edges of each relation as local indices.
#[derive(Clone, Debug, PartialEq)]
pub struct HeteroSampledBatch {
    /// Global ids of the batch's nodes, by type; every type of the graph is present.
    pub nodes: BTreeMap<String, Vec<i64>>,
    /// The seeds' type.
    pub seed_type: String,
    /// Number of seeds: the first `num_seeds` nodes of `seed_type`.
    pub num_seeds: usize,
    /// Sampled edges by relation, local indices into the source and target types' `nodes`.
    pub edges: BTreeMap<EdgeType, (Vec<i64>, Vec<i64>)>,
}

impl HeteroSampledBatch {
    /// The batch as a one-graph [`HeteroGraph`] on `device`, each type's features gathered from
    /// `x` (all nodes' features by type).
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] if `x` lacks a node type of the batch.
    pub fn graph(
        &self,
        x: &BTreeMap<String, Tensor<2>>,
        device: &Device,
    ) -> Result<HeteroGraph, DataError> {
        let mut b = HeteroGraph::builder(device);
        for (t, ids) in &self.nodes {
            let xt = x.get(t).ok_or_else(|| {
                DataError::InvalidArgument(format!("no features for node type `{t}`"))
            })?;
            let index = Tensor::<1, Int>::from_data(
                TensorData::new(ids.clone(), [ids.len()]),
                &xt.device(),
            );
            b = b
                .node_set(t.clone(), ids.len())
                .node_features(t.clone(), gather_rows(xt.clone(), index).to_device(device));
        }
        for (et, (s, r)) in &self.edges {
            b = b.edge_list(et.clone(), s, r);
        }
        Ok(b.build()?)
    }

    /// Number of sampled edges over all relations.
    pub fn num_edges(&self) -> usize {
        self.edges.values().map(|(s, _)| s.len()).sum()
    }
}

/// Node `v` of type `t` in the batch: its local index, added (and put on the next frontier)
/// on first sight.
fn add(
    t: &str,
    v: i64,
    local: &mut BTreeMap<String, HashMap<i64, i64>>,
    nodes: &mut BTreeMap<String, Vec<i64>>,
    frontier: &mut BTreeMap<String, Vec<i64>>,
) -> i64 {
    let map = local.get_mut(t).expect("known type");
    *map.entry(v).or_insert_with(|| {
        let list = nodes.get_mut(t).expect("known type");
        list.push(v);
        frontier.entry(t.to_string()).or_default().push(v);
        list.len() as i64 - 1
    })
}

/// [`NeighborLoader`](crate::NeighborLoader) for heterogeneous graphs, as PyG's `NeighborLoader`
/// on `HeteroData`: seeds of one node type; for each layer, every frontier node draws up to
/// `fanouts[l]` incoming neighbours *per relation* into its type, without replacement, and the
/// new nodes of every type form the next frontier. Seeded per (epoch, batch, layer, relation,
/// node), so parallel sampling gives the same batches for any number of threads.
#[derive(Clone, Debug)]
pub struct HeteroNeighborLoader {
    graph: Arc<HeteroNeighbors>,
    seed_type: String,
    seeds: Vec<i64>,
    fanouts: Vec<usize>,
    batch_size: usize,
    seed: u64,
}

impl HeteroNeighborLoader {
    /// A loader over `seeds` of type `seed_type`.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] for an unknown seed type, a seed outside its type, a zero
    /// batch size or no layers.
    pub fn new(
        graph: impl Into<Arc<HeteroNeighbors>>,
        seed_type: &str,
        seeds: Vec<i64>,
        fanouts: Vec<usize>,
        batch_size: usize,
    ) -> Result<HeteroNeighborLoader, DataError> {
        let graph = graph.into();
        let bad = |m: String| {
            Err(DataError::InvalidArgument(format!(
                "HeteroNeighborLoader: {m}"
            )))
        };
        let Some(&n) = graph.num_nodes.get(seed_type) else {
            return bad(format!("unknown seed type `{seed_type}`"));
        };
        if batch_size == 0 || fanouts.is_empty() {
            return bad("batch_size and the fan-out list must be non-empty".into());
        }
        if let Some(s) = seeds.iter().find(|&&s| !(0..n as i64).contains(&s)) {
            return bad(format!("seed {s} is outside the {n} `{seed_type}` nodes"));
        }
        Ok(HeteroNeighborLoader {
            graph,
            seed_type: seed_type.into(),
            seeds,
            fanouts,
            batch_size,
            seed: 0,
        })
    }

    /// The random seed (default 0).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Number of batches per epoch.
    pub fn num_batches(&self) -> usize {
        self.seeds.len().div_ceil(self.batch_size)
    }

    /// The batches of epoch `epoch` (seeds shuffled with `seed + epoch`), sampled lazily.
    pub fn epoch(&self, epoch: u64) -> impl Iterator<Item = HeteroSampledBatch> + '_ {
        epoch_batches(&self.seeds, self.batch_size, Some(self.seed), epoch)
            .into_iter()
            .enumerate()
            .map(move |(b, seeds)| self.sample(&seeds, epoch, b as u64))
    }

    /// Samples the neighbourhood of `seeds` (batch `batch` of `epoch`, for the random streams).
    pub fn sample(&self, seeds: &[i64], epoch: u64, batch: u64) -> HeteroSampledBatch {
        let mut nodes: BTreeMap<String, Vec<i64>> = self
            .graph
            .num_nodes
            .keys()
            .map(|t| (t.clone(), vec![]))
            .collect();
        let mut local: BTreeMap<String, HashMap<i64, i64>> = self
            .graph
            .num_nodes
            .keys()
            .map(|t| (t.clone(), HashMap::new()))
            .collect();
        let mut frontier: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for &s in seeds {
            add(&self.seed_type, s, &mut local, &mut nodes, &mut frontier);
        }
        let num_seeds = nodes[&self.seed_type].len();
        let mut edges: BTreeMap<EdgeType, (Vec<i64>, Vec<i64>)> = self
            .graph
            .relations
            .iter()
            .map(|(et, _)| (et.clone(), (vec![], vec![])))
            .collect();
        let base = batch_stream(self.seed, epoch, batch);
        for (layer, &k) in self.fanouts.iter().enumerate() {
            let current = std::mem::take(&mut frontier);
            for (ri, (et, lists)) in self.graph.relations.iter().enumerate() {
                let Some(targets) = current.get(&et.dst) else {
                    continue;
                };
                let stream = base
                    ^ ((layer * self.graph.relations.len() + ri) as u64 + 1)
                        .wrapping_mul(0x94D0_49BB_1331_11EB);
                let draws: Vec<Vec<u32>> = targets
                    .par_iter()
                    .map(|&v| {
                        draw(
                            lists.of(v as usize),
                            k,
                            stream ^ (v as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9),
                        )
                    })
                    .collect();
                for (&v, picked) in targets.iter().zip(draws) {
                    let r = local[&et.dst][&v];
                    for u in picked {
                        let l = add(&et.src, i64::from(u), &mut local, &mut nodes, &mut frontier);
                        let e = edges.get_mut(et).expect("known relation");
                        e.0.push(l);
                        e.1.push(r);
                    }
                }
            }
        }
        HeteroSampledBatch {
            nodes,
            seed_type: self.seed_type.clone(),
            num_seeds,
            edges,
        }
    }
}
