//! A content-verified cache of [`CsrPlan`]s, so that training on a fixed graph builds each plan
//! once instead of at every step.
//!
//! Every CPU kernel groups its rows by segment through a [`CsrPlan`]: one O(E) pass that checks
//! the ids' range and detects sorted ids, a count per segment, and for unsorted ids a stable
//! counting sort into a permutation (random writes over `E` entries). Training on a fixed graph
//! asks for the same few plans at every step: the receivers' in the forward pass, the senders'
//! (usually unsorted) in the backward pass of [`spmm`](crate::spmm) and of the attention ops.
//!
//! The cache keys a plan by the ids' dtype, length and `num_segments`, and keeps a copy of the
//! ids: a lookup compares the ids in full, so a plan is reused only for exactly the same ids and
//! can never go stale (a graph edited in place, or another graph of the same size, misses). A hit
//! costs one sequential read of the ids; a miss costs the plan's build plus a copy of the ids.
//! Results do not depend on the cache: a plan is a deterministic function of its ids.
//!
//! The cache is shared by the CPU backends (NdArray and Flex) and all threads, holds at most
//! [`DEFAULT_PLAN_CACHE_BYTES`] unless told otherwise ([`set_plan_cache_capacity`]; 0 turns it
//! off) and at most [`MAX_PLAN_CACHE_ENTRIES`] plans, and evicts the least recently used plan
//! first. A plan larger than the capacity is built and used but not kept. The entry bound keeps
//! mini-batch training cheap: there every batch's ids are new, and each step reuses only its
//! own few plans (a layer's forward and backward), so the cache holds a handful of small plans
//! rather than filling its byte capacity with batches that will not come back.

use std::sync::{Arc, Mutex, MutexGuard};

use burn::tensor::DType;

use super::CpuElem;
use super::kernels::{CsrPlan, IdElem};

/// The default capacity of the plan cache: 256 MiB, which holds the plans of a graph with about
/// 8 million edges (a plan of unsorted i64 ids costs 24 bytes per edge with its copy of the ids).
pub const DEFAULT_PLAN_CACHE_BYTES: usize = 256 << 20;

/// The most plans the cache holds at once, whatever their size: training on one fixed graph
/// uses a few (receivers and senders, with and without self loops).
pub const MAX_PLAN_CACHE_ENTRIES: usize = 8;

/// What the plan cache holds and how often it has answered; see [`plan_cache_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanCacheStats {
    /// Lookups answered by a cached plan.
    pub hits: u64,
    /// Lookups that built a plan.
    pub misses: u64,
    /// Plans held now.
    pub entries: usize,
    /// Bytes held now: the plans and the copies of their ids.
    pub bytes: usize,
    /// The most bytes the cache may hold.
    pub capacity: usize,
}

/// One cached plan and the ids it was built from.
struct Entry {
    dtype: DType,
    num_segments: usize,
    ids: Box<[u8]>,
    plan: Arc<CsrPlan>,
    bytes: usize,
}

impl Entry {
    /// Whether this plan was built from exactly these ids (compared in full).
    fn is_for(&self, dtype: DType, num_segments: usize, ids: &[u8]) -> bool {
        self.dtype == dtype && self.num_segments == num_segments && *self.ids == *ids
    }
}

/// A byte-bounded, least-recently-used cache of plans (the most recently used entry is last).
pub(crate) struct PlanCache {
    entries: Vec<Entry>,
    bytes: usize,
    capacity: usize,
    hits: u64,
    misses: u64,
}

/// Bytes an entry holds: its copy of the ids, the offsets and the permutation.
fn entry_bytes(ids: &[u8], plan: &CsrPlan) -> usize {
    let words = plan.offsets.len() + plan.order.as_ref().map_or(0, Vec::len);
    ids.len() + words * std::mem::size_of::<usize>()
}

impl PlanCache {
    /// An empty cache holding at most `capacity` bytes.
    pub(crate) const fn new(capacity: usize) -> Self {
        Self { entries: Vec::new(), bytes: 0, capacity, hits: 0, misses: 0 }
    }

    /// The plan built from exactly these ids (compared in full), marked as most recently used.
    /// Counts a hit or a miss.
    pub(crate) fn lookup(&mut self, dtype: DType, num_segments: usize, ids: &[u8]) -> Option<Arc<CsrPlan>> {
        let found = self
            .entries
            .iter()
            .rposition(|e| e.is_for(dtype, num_segments, ids));
        match found {
            Some(i) => {
                self.hits += 1;
                let entry = self.entries.remove(i);
                let plan = entry.plan.clone();
                self.entries.push(entry);
                Some(plan)
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Keeps `plan`, built from `ids`, evicting the least recently used plans to make room; a
    /// plan larger than the capacity is not kept. A plan already held for these ids (another
    /// thread built it meanwhile) is kept once.
    pub(crate) fn insert(&mut self, dtype: DType, num_segments: usize, ids: &[u8], plan: Arc<CsrPlan>) {
        let bytes = entry_bytes(ids, &plan);
        if bytes > self.capacity {
            return;
        }
        let held = self.entries.iter().any(|e| e.is_for(dtype, num_segments, ids));
        if held {
            return;
        }
        self.bytes += bytes;
        self.entries.push(Entry { dtype, num_segments, ids: ids.into(), plan, bytes });
        self.evict();
    }

    /// Sets the capacity in bytes, evicting what no longer fits; 0 empties and disables the cache.
    pub(crate) fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        self.evict();
    }

    /// Drops every plan (the counters are kept).
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    pub(crate) fn stats(&self) -> PlanCacheStats {
        PlanCacheStats {
            hits: self.hits,
            misses: self.misses,
            entries: self.entries.len(),
            bytes: self.bytes,
            capacity: self.capacity,
        }
    }

    fn evict(&mut self) {
        while self.bytes > self.capacity || self.entries.len() > MAX_PLAN_CACHE_ENTRIES {
            let entry = self.entries.remove(0);
            self.bytes -= entry.bytes;
        }
    }
}

static CACHE: Mutex<PlanCache> = Mutex::new(PlanCache::new(DEFAULT_PLAN_CACHE_BYTES));

/// The process-wide cache; a panic elsewhere never leaves it unusable (every update is complete
/// before anything that could panic).
fn cache() -> MutexGuard<'static, PlanCache> {
    CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The plan of `ids`: the cached one when these exact ids were planned before, else a new one
/// (which the cache then keeps).
///
/// # Panics
/// As [`CsrPlan::new`], if an id lies outside `[0, num_segments)`.
pub(crate) fn plan<I: IdElem + CpuElem>(ids: &[I], num_segments: usize) -> Arc<CsrPlan> {
    let (key, dtype): (&[u8], DType) = (bytemuck::cast_slice(ids), I::dtype());
    {
        let mut cache = cache();
        if cache.capacity > 0
            && let Some(plan) = cache.lookup(dtype, num_segments, key)
        {
            return plan;
        }
    }
    // Built outside the lock: other threads keep using the cache meanwhile.
    let plan = Arc::new(CsrPlan::new(ids, num_segments));
    cache().insert(dtype, num_segments, key, plan.clone());
    plan
}

/// Sets the most bytes the CPU plan cache may hold (plans and the copies of their ids), evicting
/// the least recently used plans that no longer fit. `0` empties the cache and turns it off.
/// The default is [`DEFAULT_PLAN_CACHE_BYTES`].
pub fn set_plan_cache_capacity(bytes: usize) {
    cache().set_capacity(bytes);
}

/// Drops every cached plan, keeping the capacity and the counters.
pub fn clear_plan_cache() {
    cache().clear();
}

/// What the CPU plan cache holds, and its hits and misses since the process started.
pub fn plan_cache_stats() -> PlanCacheStats {
    cache().stats()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(ids: &[i64]) -> &[u8] {
        bytemuck::cast_slice(ids)
    }

    fn planned(ids: &[i64], n: usize) -> Arc<CsrPlan> {
        Arc::new(CsrPlan::new(ids, n))
    }

    #[test]
    fn hits_only_for_the_same_ids_dtype_and_size() {
        let mut cache = PlanCache::new(1 << 20);
        let ids = [2i64, 0, 1, 0];
        assert!(cache.lookup(DType::I64, 3, key(&ids)).is_none());
        cache.insert(DType::I64, 3, key(&ids), planned(&ids, 3));
        let hit = cache.lookup(DType::I64, 3, key(&ids)).expect("same ids hit");
        assert_eq!(hit.offsets, CsrPlan::new(&ids, 3).offsets);
        assert_eq!(hit.order, CsrPlan::new(&ids, 3).order);
        // One id changed in place, same length: a miss, never the stale plan.
        assert!(cache.lookup(DType::I64, 3, key(&[2, 0, 1, 1])).is_none());
        // Same ids, other num_segments or dtype: a miss.
        assert!(cache.lookup(DType::I64, 4, key(&ids)).is_none());
        assert!(cache.lookup(DType::I32, 3, key(&ids)).is_none());
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.entries), (1, 4, 1));
    }

    #[test]
    fn evicts_the_least_recently_used_plan_and_respects_the_capacity() {
        let (a, b, c) = ([0i64; 64], [1i64; 64], [2i64; 64]);
        let size = entry_bytes(key(&a), &planned(&a, 3));
        let mut cache = PlanCache::new(2 * size);
        cache.insert(DType::I64, 3, key(&a), planned(&a, 3));
        cache.insert(DType::I64, 3, key(&b), planned(&b, 3));
        assert!(cache.lookup(DType::I64, 3, key(&a)).is_some()); // a is now the most recent
        cache.insert(DType::I64, 3, key(&c), planned(&c, 3)); // evicts b
        assert!(cache.lookup(DType::I64, 3, key(&b)).is_none());
        assert!(cache.lookup(DType::I64, 3, key(&a)).is_some());
        assert!(cache.lookup(DType::I64, 3, key(&c)).is_some());
        assert_eq!(cache.stats().bytes, 2 * size);
        // A plan larger than the capacity is not kept; a smaller capacity evicts.
        let big = [0i64; 1024];
        cache.insert(DType::I64, 3, key(&big), planned(&big, 3));
        assert_eq!(cache.stats().entries, 2);
        cache.set_capacity(size);
        assert_eq!((cache.stats().entries, cache.stats().bytes), (1, size));
        cache.set_capacity(0);
        assert_eq!((cache.stats().entries, cache.stats().bytes), (0, 0));
    }

    #[test]
    fn holds_at_most_max_entries_plans() {
        let mut cache = PlanCache::new(1 << 30);
        let all: Vec<[i64; 4]> = (0..MAX_PLAN_CACHE_ENTRIES as i64 + 3).map(|i| [i, 0, 0, 0]).collect();
        for ids in &all {
            cache.insert(DType::I64, 64, key(ids), planned(ids, 64));
        }
        assert_eq!(cache.stats().entries, MAX_PLAN_CACHE_ENTRIES);
        // The oldest three went; the newest are all there.
        for (i, ids) in all.iter().enumerate() {
            assert_eq!(cache.lookup(DType::I64, 64, key(ids)).is_some(), i >= 3, "plan {i}");
        }
    }

    #[test]
    fn the_same_ids_are_kept_once() {
        let ids = [1i64, 0, 1];
        let mut cache = PlanCache::new(1 << 20);
        cache.insert(DType::I64, 2, key(&ids), planned(&ids, 2));
        cache.insert(DType::I64, 2, key(&ids), planned(&ids, 2));
        assert_eq!(cache.stats().entries, 1);
    }
}

#[cfg(test)]
mod wiring {
    use std::sync::Arc;

    use burn::tensor::TensorData;
    use burn_flex::FlexTensor;

    use super::super::kernels::CsrPlan;

    /// The kernels' entry point returns the cached plan for the same ids and a fresh, correct
    /// plan for ids edited in place.
    #[test]
    fn the_cpu_kernels_plan_through_the_cache() {
        let ids: Vec<i64> = (0..1000).map(|i| (i * 7919) % 313).collect();
        let tensor = |ids: &[i64]| FlexTensor::from_data(TensorData::new(ids.to_vec(), [ids.len()]));
        let first = super::super::plan(&tensor(&ids), 313);
        let again = super::super::plan(&tensor(&ids), 313);
        assert!(Arc::ptr_eq(&first, &again), "the same ids reuse the cached plan");
        let mut edited = ids.clone();
        edited[500] = 0;
        let other = super::super::plan(&tensor(&edited), 313);
        assert!(!Arc::ptr_eq(&first, &other));
        let want = CsrPlan::new(&edited, 313);
        assert_eq!((&other.offsets, &other.order), (&want.offsets, &want.order));
    }
}
