//! One graph's pair space: candidate node pairs numbered by a key, the forbidden keys sorted,
//! and the two ways of drawing distinct allowed keys.

use std::collections::HashSet;

use crate::synthetic::SplitMix64;

/// How negatives are drawn. Both give a uniformly random set of distinct non-edges; they differ
/// in speed and in the stream (so in which set a seed gives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NegativeMethod {
    /// [`Sparse`](Self::Sparse) while the graph is at most half full and at most half of the
    /// free pairs are asked for, [`Dense`](Self::Dense) otherwise.
    #[default]
    Auto,
    /// Rejection sampling: draw any pair, keep it if it is neither an edge nor drawn before.
    /// Fast on sparse graphs; slow when almost every pair is taken.
    Sparse,
    /// Exact sampling of ranks among the free pairs: the same cost at any density.
    Dense,
}

/// One graph's pair space.
#[derive(Clone, Debug)]
pub(super) struct PairSpace {
    /// The graph's first node in the batch.
    pub(super) offset: u64,
    /// Its nodes.
    pub(super) n: u64,
    /// Receiver nodes (`n`, unless bipartite) and the first of them.
    pub(super) m: u64,
    pub(super) dst_offset: u64,
    /// Number of keys (`n²`, or `n (n + 1) / 2` unordered).
    pub(super) universe: u64,
    /// Sorted, distinct keys that are not negatives.
    pub(super) forbidden: Vec<u64>,
}

impl PairSpace {
    pub(super) fn key(&self, u: u64, v: u64, undirected: bool) -> u64 {
        if undirected {
            let (a, b) = (u.min(v), u.max(v));
            // Rows 0..a of the upper triangle hold n + (n - 1) + ... + (n - a + 1) keys.
            a * self.n - a * a.saturating_sub(1) / 2 + (b - a)
        } else {
            u * self.m + v
        }
    }

    pub(super) fn pair(&self, key: u64, undirected: bool) -> (u64, u64) {
        if !undirected {
            return (key / self.m, key % self.m);
        }
        // The last row whose first key is at most `key`.
        let start = |a: u64| a * self.n - a * a.saturating_sub(1) / 2;
        let (mut lo, mut hi) = (0, self.n);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if start(mid) <= key {
                lo = mid
            } else {
                hi = mid
            }
        }
        (lo, lo + key - start(lo))
    }

    pub(super) fn available(&self) -> u64 {
        self.universe - self.forbidden.len() as u64
    }

    pub(super) fn is_forbidden(&self, key: u64) -> bool {
        self.forbidden.binary_search(&key).is_ok()
    }

    /// The allowed key of rank `rank` (0-based, in increasing key order).
    pub(super) fn key_of_rank(&self, rank: u64) -> u64 {
        // The j forbidden keys below the answer are those with `forbidden[j] - j <= rank`.
        let (mut lo, mut hi) = (0usize, self.forbidden.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.forbidden[mid] - mid as u64 <= rank {
                lo = mid + 1
            } else {
                hi = mid
            }
        }
        rank + lo as u64
    }

    pub(super) fn draw(
        &self,
        count: u64,
        method: NegativeMethod,
        rng: &mut SplitMix64,
    ) -> Vec<u64> {
        let available = self.available();
        let sparse = match method {
            NegativeMethod::Sparse => true,
            NegativeMethod::Dense => false,
            NegativeMethod::Auto => 2 * available >= self.universe && 2 * count <= available,
        };
        let mut chosen = HashSet::with_capacity(count as usize);
        let mut keys = Vec::with_capacity(count as usize);
        if sparse {
            while (keys.len() as u64) < count {
                let key = rng.below(self.universe);
                if !self.is_forbidden(key) && chosen.insert(key) {
                    keys.push(key);
                }
            }
        } else {
            // Floyd's algorithm: `count` distinct ranks in 0..available, uniformly.
            for j in available - count..available {
                let t = rng.below(j + 1);
                let rank = if chosen.insert(t) { t } else { j };
                chosen.insert(rank);
                keys.push(self.key_of_rank(rank));
            }
            rng.shuffle(&mut keys);
        }
        keys
    }
}
