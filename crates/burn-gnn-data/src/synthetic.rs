//! Seeded random graphs for tests and benchmarks: Erdős–Rényi, stochastic block model,
//! Barabási–Albert, Watts–Strogatz.
//!
//! Every generator is deterministic in its seed on every platform and release (its random
//! stream is [`SplitMix64`], defined here, not a dependency's), and runs in time linear in
//! nodes + edges: the `G(n, p)` samplers skip over absent pairs with geometric jumps
//! (Batagelj & Brandes, 2005) instead of visiting all `n²` pairs.

use burn::tensor::{Device, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;

use crate::DataError;

/// SplitMix64 (Steele, Lea & Flood, 2014): a small, fast, fixed-forever random stream.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A stream started from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias (Lemire's multiply-shift with rejection).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SplitMix64::below(0)");
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates), uniformly over permutations.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i as u64 + 1) as usize);
        }
    }

    /// A standard normal sample (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.next_f64(); // (0, 1]
        let v = self.next_f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// A generated graph: an edge list over `num_nodes` nodes, plus block ids for block models.
///
/// Undirected generators list each edge in both directions. Edges are sorted by
/// `(receiver, sender)`, without self loops or duplicates.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntheticGraph {
    /// Nodes.
    pub num_nodes: usize,
    /// Edge senders.
    pub senders: Vec<i64>,
    /// Edge receivers.
    pub receivers: Vec<i64>,
    /// The block of each node (stochastic block model), `None` otherwise.
    pub blocks: Option<Vec<i64>>,
}

impl SyntheticGraph {
    /// Edges (directed; an undirected graph counts each edge twice).
    pub fn num_edges(&self) -> usize {
        self.senders.len()
    }

    /// The graph as a validated [`GraphsTuple`] with node features `x: [num_nodes, d]`, or
    /// without node features (`x = None`; the node count is still `num_nodes`).
    ///
    /// # Errors
    /// `x` with a row count other than `num_nodes` ([`DataError::Graph`]).
    pub fn graph(&self, x: Option<Tensor<2>>, device: &Device) -> Result<GraphsTuple, DataError> {
        let g = GraphsTuple::from_coo(&self.senders, &self.receivers, self.num_nodes, device)?;
        Ok(match x {
            Some(x) => g.with_nodes(x)?,
            None => g,
        })
    }

    fn from_pairs(num_nodes: usize, mut pairs: Vec<(u64, u64)>, undirected: bool) -> Self {
        if undirected {
            let back: Vec<(u64, u64)> = pairs.iter().map(|&(s, r)| (r, s)).collect();
            pairs.extend(back);
        }
        // Sort by (receiver, sender).
        pairs.sort_unstable_by_key(|&(s, r)| (r, s));
        let (senders, receivers) = pairs.into_iter().map(|(s, r)| (s as i64, r as i64)).unzip();
        SyntheticGraph {
            num_nodes,
            senders,
            receivers,
            blocks: None,
        }
    }
}

fn check_probability(p: f64, what: &str) -> Result<(), DataError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(DataError::InvalidArgument(format!(
            "{what} must be a probability in [0, 1], got {p}"
        )))
    }
}

/// Calls `hit(k)` for each `k` in `0..count` independently with probability `p`, in increasing
/// order, in `O(hits)` time: the gap to the next hit is geometric.
fn bernoulli_skips(count: u64, p: f64, rng: &mut SplitMix64, mut hit: impl FnMut(u64)) {
    if p <= 0.0 || count == 0 {
        return;
    }
    if p >= 1.0 {
        (0..count).for_each(hit);
        return;
    }
    let log_q = (-p).ln_1p();
    let mut k: u64 = 0;
    loop {
        // Number of misses before the next hit: floor(ln(U) / ln(1 - p)), U in (0, 1].
        let u = 1.0 - rng.next_f64();
        let skip = (u.ln() / log_q).floor();
        if !skip.is_finite() || skip >= (count - k) as f64 {
            return;
        }
        k += skip as u64;
        hit(k);
        k += 1;
        if k >= count {
            return;
        }
    }
}

/// The `k`-th pair `(i, j)` with `j < i` in the order (1,0), (2,0), (2,1), (3,0), …
fn triangle_pair(k: u64) -> (u64, u64) {
    let mut i = ((1.0 + (1.0 + 8.0 * k as f64).sqrt()) / 2.0).floor() as u64;
    // Correct the float estimate so that i(i-1)/2 <= k < i(i+1)/2.
    while i * (i - 1) / 2 > k {
        i -= 1;
    }
    while (i + 1) * i / 2 <= k {
        i += 1;
    }
    (i, k - i * (i - 1) / 2)
}

/// An Erdős–Rényi graph `G(n, p)`: each pair of distinct nodes is an edge independently with
/// probability `p` (each ordered pair, if `directed`).
///
/// # Errors
/// `p` outside `[0, 1]` or NaN.
pub fn erdos_renyi(
    num_nodes: usize,
    p: f64,
    directed: bool,
    seed: u64,
) -> Result<SyntheticGraph, DataError> {
    stochastic_block_model(&[num_nodes], &[vec![p]], directed, seed).map(|mut g| {
        g.blocks = None;
        g
    })
}

/// A stochastic block model: nodes in consecutive blocks of `block_sizes`; nodes `u` in block
/// `a` and `v` in block `b` are joined with probability `probs[a][b]` (PyG's
/// `StochasticBlockModelDataset` and networkx's `stochastic_block_model`). Undirected graphs
/// need a symmetric `probs`.
///
/// # Errors
/// `probs` not `blocks × blocks`, an entry outside `[0, 1]`, or (undirected) not symmetric.
pub fn stochastic_block_model(
    block_sizes: &[usize],
    probs: &[Vec<f64>],
    directed: bool,
    seed: u64,
) -> Result<SyntheticGraph, DataError> {
    let b = block_sizes.len();
    if probs.len() != b || probs.iter().any(|row| row.len() != b) {
        return Err(DataError::InvalidArgument(format!(
            "probs must be {b} × {b} for {b} blocks"
        )));
    }
    for (a, row) in probs.iter().enumerate() {
        for (c, &p) in row.iter().enumerate() {
            check_probability(p, &format!("probs[{a}][{c}]"))?;
            if !directed && p != probs[c][a] {
                return Err(DataError::InvalidArgument(format!(
                    "an undirected block model needs symmetric probs: probs[{a}][{c}] = {p} but probs[{c}][{a}] = {}",
                    probs[c][a]
                )));
            }
        }
    }
    let starts: Vec<u64> = block_sizes
        .iter()
        .scan(0u64, |acc, &s| {
            let start = *acc;
            *acc += s as u64;
            Some(start)
        })
        .collect();
    let num_nodes: usize = block_sizes.iter().sum();
    let mut rng = SplitMix64::new(seed);
    let mut pairs = Vec::new();
    for a in 0..b {
        for c in 0..b {
            let (sa, sc) = (block_sizes[a] as u64, block_sizes[c] as u64);
            let (oa, oc) = (starts[a], starts[c]);
            let p = probs[a][c];
            match (directed, a.cmp(&c)) {
                (false, std::cmp::Ordering::Less) => {}
                (false, std::cmp::Ordering::Equal) => {
                    bernoulli_skips(sa * sa.saturating_sub(1) / 2, p, &mut rng, |k| {
                        let (i, j) = triangle_pair(k);
                        pairs.push((oa + i, oa + j));
                    });
                }
                (false, std::cmp::Ordering::Greater)
                | (true, std::cmp::Ordering::Less | std::cmp::Ordering::Greater) => {
                    bernoulli_skips(sa * sc, p, &mut rng, |k| {
                        pairs.push((oa + k / sc, oc + k % sc))
                    });
                }
                (true, std::cmp::Ordering::Equal) => {
                    // Ordered pairs without the diagonal.
                    let row = sa.saturating_sub(1);
                    bernoulli_skips(sa * row, p, &mut rng, |k| {
                        let (i, t) = (k / row, k % row);
                        pairs.push((oa + i, oa + t + u64::from(t >= i)));
                    });
                }
            }
        }
    }
    let mut g = SyntheticGraph::from_pairs(num_nodes, pairs, !directed);
    g.blocks = Some(
        block_sizes
            .iter()
            .enumerate()
            .flat_map(|(i, &s)| std::iter::repeat_n(i as i64, s))
            .collect(),
    );
    Ok(g)
}

/// A Barabási–Albert graph (undirected) as networkx's `barabasi_albert_graph`: a star on
/// `m + 1` nodes, then each new node joins `m` distinct existing nodes chosen with probability
/// proportional to their degree. `m · (num_nodes − m)` undirected edges.
///
/// # Errors
/// `m = 0` or `m >= num_nodes`.
pub fn barabasi_albert(num_nodes: usize, m: usize, seed: u64) -> Result<SyntheticGraph, DataError> {
    if m == 0 || m >= num_nodes {
        return Err(DataError::InvalidArgument(format!(
            "Barabási–Albert needs 1 <= m < num_nodes, got m = {m}, num_nodes = {num_nodes}"
        )));
    }
    let mut rng = SplitMix64::new(seed);
    let mut pairs: Vec<(u64, u64)> = (1..=m as u64).map(|v| (v, 0)).collect();
    // Each node appears once per incident edge end: uniform picks are degree-proportional.
    let mut ends: Vec<u64> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut chosen: Vec<u64> = Vec::with_capacity(m);
    for source in (m + 1) as u64..num_nodes as u64 {
        chosen.clear();
        while chosen.len() < m {
            let t = ends[rng.below(ends.len() as u64) as usize];
            if !chosen.contains(&t) {
                chosen.push(t);
            }
        }
        for &t in &chosen {
            pairs.push((source, t));
            ends.push(source);
            ends.push(t);
        }
    }
    Ok(SyntheticGraph::from_pairs(num_nodes, pairs, true))
}

/// A Watts–Strogatz small-world graph (undirected), as networkx's `watts_strogatz_graph`
/// ([Watts & Strogatz, 1998](https://doi.org/10.1038/30918)): a ring lattice in which node `u`
/// is joined to the `k / 2` nodes after it (`u + 1, …, u + k/2`, modulo `num_nodes`), hence to
/// its `k` nearest neighbours; then each lattice edge `(u, u + j)`, for `j = 1..=k/2` and `u`
/// in order, is rewired with probability `p` to `(u, w)`, `w` uniform over the nodes that are
/// neither `u` nor already joined to `u` (kept when `u` is joined to every other node).
/// `num_nodes · k / 2` undirected edges whatever `p`.
///
/// With a small `p` most edges join nodes whose ids are close: the locality of a mesh or of a
/// graph whose nodes were numbered along its structure, with a few long-range edges. `p = 0`
/// is the lattice itself, `p = 1` close to a random graph of the same degree.
///
/// # Errors
/// Odd `k` (networkx silently uses `k − 1`), `k >= num_nodes` (for `k > 0`), `p` outside
/// `[0, 1]`, or more than `u32::MAX` nodes.
pub fn watts_strogatz(
    num_nodes: usize,
    k: usize,
    p: f64,
    seed: u64,
) -> Result<SyntheticGraph, DataError> {
    check_probability(p, "p")?;
    if k % 2 == 1 || (k > 0 && k >= num_nodes) {
        return Err(DataError::InvalidArgument(format!(
            "Watts–Strogatz needs an even k < num_nodes (k / 2 neighbours on each side), got k = {k}, num_nodes = {num_nodes}"
        )));
    }
    if num_nodes > u32::MAX as usize {
        return Err(DataError::InvalidArgument(format!(
            "Watts–Strogatz supports up to {} nodes, got {num_nodes}",
            u32::MAX
        )));
    }
    let n = num_nodes;
    let half = k / 2;
    // Adjacency lists; degrees stay close to k, so membership is a short scan.
    let mut adj: Vec<Vec<u32>> = (0..n)
        .map(|u| {
            let mut a = Vec::with_capacity(k);
            a.extend((1..=half).map(|j| ((u + j) % n) as u32));
            a.extend((1..=half).map(|j| ((u + n - j) % n) as u32));
            a
        })
        .collect();
    let mut rng = SplitMix64::new(seed);
    for j in 1..=half {
        for u in 0..n {
            if rng.next_f64() >= p {
                continue;
            }
            let v = ((u + j) % n) as u32;
            if adj[u].len() >= n - 1 {
                continue;
            }
            let w = loop {
                let w = rng.below(n as u64) as u32;
                if w as usize != u && !adj[u].contains(&w) {
                    break w;
                }
            };
            // The lattice edge (u, v) is still there: only this step removes it (another
            // node's step removes (x, x + j') with x + j' = u only if j + j' is a multiple of
            // num_nodes, and j + j' <= k < num_nodes).
            if let Some(at) = adj[u].iter().position(|&x| x == v) {
                adj[u].swap_remove(at);
            }
            if let Some(back) = adj[v as usize].iter().position(|&x| x as usize == u) {
                adj[v as usize].swap_remove(back);
            }
            adj[u].push(w);
            adj[w as usize].push(u as u32);
        }
    }
    let pairs: Vec<(u64, u64)> = adj
        .iter()
        .enumerate()
        .flat_map(|(u, a)| {
            a.iter()
                .filter(move |&&w| (w as usize) > u)
                .map(move |&w| (u as u64, u64::from(w)))
        })
        .collect();
    Ok(SyntheticGraph::from_pairs(n, pairs, true))
}

/// `[rows, cols]` standard normal features from `seed` (for benchmarks and tests).
pub fn random_features(rows: usize, cols: usize, seed: u64, device: &Device) -> Tensor<2> {
    let mut rng = SplitMix64::new(seed);
    let v: Vec<f32> = (0..rows * cols).map(|_| rng.normal() as f32).collect();
    Tensor::from_data(TensorData::new(v, [rows, cols]), device)
}
