//! [`KarateClub`]: Zachary's karate club, embedded (no download).

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;

use crate::DataError;

/// The 78 friendships `(u, v)`, `u < v` (Zachary, 1977, as networkx and PyG list them).
#[rustfmt::skip]
const EDGES: [(u8, u8); 78] = [
    (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), (0, 8), (0, 10), (0, 11), (0, 12),
    (0, 13), (0, 17), (0, 19), (0, 21), (0, 31), (1, 2), (1, 3), (1, 7), (1, 13), (1, 17),
    (1, 19), (1, 21), (1, 30), (2, 3), (2, 7), (2, 8), (2, 9), (2, 13), (2, 27), (2, 28),
    (2, 32), (3, 7), (3, 12), (3, 13), (4, 6), (4, 10), (5, 6), (5, 10), (5, 16), (6, 16),
    (8, 30), (8, 32), (8, 33), (9, 33), (13, 33), (14, 32), (14, 33), (15, 32), (15, 33),
    (18, 32), (18, 33), (19, 33), (20, 32), (20, 33), (22, 32), (22, 33), (23, 25), (23, 27),
    (23, 29), (23, 32), (23, 33), (24, 25), (24, 27), (24, 31), (25, 31), (26, 29), (26, 33),
    (27, 33), (28, 31), (28, 33), (29, 32), (29, 33), (30, 32), (30, 33), (31, 32), (31, 33),
    (32, 33),
];

/// The four communities of the GCN paper (modularity-based clustering), as PyG's `KarateClub`.
const COMMUNITIES: [u8; 34] = [
    1, 1, 1, 1, 3, 3, 3, 1, 0, 1, 3, 1, 1, 1, 0, 0, 3, 1, 0, 1, 0, 1, 0, 0, 2, 2, 0, 0, 2, 0, 0, 2,
    0, 0,
];

/// Members who stayed with Mr. Hi after the split (the rest followed the officer), networkx's
/// `club` attribute.
const MR_HI: [u8; 17] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 16, 17, 19, 21];

/// Zachary's karate club ([Zachary, 1977](https://doi.org/10.1086/jar.33.4.3629752)): 34
/// members, 78 friendships (156 directed edges), as PyG's `KarateClub`: one-hot node features
/// (the identity), four community labels, one training node per community (its first member).
#[derive(Clone, Debug)]
pub struct KarateClub {
    /// Edge senders (both directions of each friendship), sorted by `(receiver, sender)`.
    pub senders: Vec<i64>,
    /// Edge receivers.
    pub receivers: Vec<i64>,
    /// Community of each member (0..4), PyG's labels.
    pub labels: Vec<i64>,
    /// The club each member joined after the split: 0 Mr. Hi, 1 the officer.
    pub club: Vec<i64>,
    /// The first member of each community.
    pub train_mask: Vec<bool>,
}

impl KarateClub {
    /// Members.
    pub const NUM_NODES: usize = 34;
    /// Communities.
    pub const NUM_CLASSES: usize = 4;

    /// The embedded dataset.
    pub fn load() -> KarateClub {
        let mut pairs: Vec<(i64, i64)> = EDGES
            .iter()
            .flat_map(|&(u, v)| [(i64::from(u), i64::from(v)), (i64::from(v), i64::from(u))])
            .collect();
        pairs.sort_unstable_by_key(|&(s, r)| (r, s));
        let (senders, receivers) = pairs.into_iter().unzip();
        let labels: Vec<i64> = COMMUNITIES.iter().map(|&c| i64::from(c)).collect();
        let club = (0..Self::NUM_NODES as u8)
            .map(|i| i64::from(!MR_HI.contains(&i)))
            .collect();
        let mut train_mask = vec![false; Self::NUM_NODES];
        for c in 0..Self::NUM_CLASSES as i64 {
            let first = labels
                .iter()
                .position(|&l| l == c)
                .expect("every community has members");
            train_mask[first] = true;
        }
        KarateClub {
            senders,
            receivers,
            labels,
            club,
            train_mask,
        }
    }

    /// The graph with identity node features `[34, 34]`.
    ///
    /// # Errors
    /// None in practice (the embedded graph is valid); typed for uniformity with other datasets.
    pub fn graph(&self, device: &Device) -> Result<GraphsTuple, DataError> {
        let g = GraphsTuple::from_coo(&self.senders, &self.receivers, Self::NUM_NODES, device)?;
        Ok(g.with_nodes(Tensor::<2>::eye(Self::NUM_NODES, device))?)
    }

    /// Community labels, `[34]` Int.
    pub fn labels(&self, device: &Device) -> Tensor<1, Int> {
        Tensor::from_data(
            TensorData::new(self.labels.clone(), [Self::NUM_NODES]),
            device,
        )
    }
}
