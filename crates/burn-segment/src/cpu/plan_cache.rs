//! A content-verified cache of [`CsrPlan`]s, so that training on a fixed graph builds each plan
//! once instead of at every step.
//!
//! Every CPU kernel groups its rows by segment through a [`CsrPlan`]: one O(E) pass that checks
//! the ids' range and detects sorted ids, a count per segment, and for unsorted ids a stable
//! counting sort into a permutation (random writes over `E` entries). Training on a fixed graph
//! asks for the same few plans at every step: the receivers' in the forward pass, the senders'
//! (usually unsorted) in the backward pass of [`spmm`](crate::spmm) and of the attention ops.
//!
//! The cache keys a plan by the ids' dtype, length and `num_segments`, and a lookup compares the
//! ids in full: against a copy kept with the plan for unsorted ids, and against the plan's own
//! offsets for sorted ones (sorted ids are determined by how many rows each segment has, so
//! they need no copy: 8 bytes less per edge for the receivers' plan of an i64 graph). So a plan is
//! reused only for exactly the same ids and can never go stale (a graph edited in place, or
//! another graph of the same size, misses). A hit costs one sequential read of the ids; a miss
//! costs the plan's build, plus a copy of unsorted ids.
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

use super::kernels::{CsrPlan, IdElem};
use super::tensor::CpuElem;

/// The default capacity of the plan cache: 512 MiB, which holds the two plans of a training
/// step on a graph of about 15 million edges and `E / 10` nodes with i64 ids even when neither
/// its receivers nor its senders are sorted (self loops appended to receiver-sorted edges
/// unsort them). An unsorted plan holds 16.8 bytes per edge: the offsets, the permutation, and
/// the copy of the ids that a lookup compares; a sorted one only its offsets, 0.8 bytes per
/// edge. At 256 MiB a GAT layer on 1e7 edges (two unsorted plans of 134 MiB with i32 ids)
/// rebuilt one of them at every step.
pub const DEFAULT_PLAN_CACHE_BYTES: usize = 512 << 20;

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
    /// A copy of the ids (their bytes), for unsorted ones. Sorted ids need none: the plan's
    /// offsets determine them (the rows of segment `s` are all `s`, in order).
    ids: Option<Box<[u8]>>,
    plan: Arc<CsrPlan<'static>>,
    bytes: usize,
}

impl Entry {
    /// Whether this plan was built from exactly these ids (compared in full).
    fn is_for<I: IdElem + CpuElem>(&self, num_segments: usize, ids: &[I]) -> bool {
        if self.dtype != I::dtype() || self.num_segments != num_segments {
            return false;
        }
        match &self.ids {
            Some(copy) => **copy == *bytemuck::cast_slice::<I, u8>(ids),
            None => are_the_sorted_ids_of(ids, &self.plan.offsets),
        }
    }
}

/// Whether `ids` are the sorted ids whose CSR offsets are `offsets`: `offsets[s]..offsets[s +
/// 1]` of them equal to `s`, for every segment `s` in turn.
fn are_the_sorted_ids_of<I: IdElem>(ids: &[I], offsets: &[usize]) -> bool {
    offsets.last() == Some(&ids.len())
        && offsets
            .windows(2)
            .enumerate()
            .all(|(s, w)| ids[w[0]..w[1]].iter().all(|&id| id.to_i64() == s as i64))
}

/// A byte-bounded, least-recently-used cache of plans (the most recently used entry is last).
pub(crate) struct PlanCache {
    entries: Vec<Entry>,
    bytes: usize,
    capacity: usize,
    hits: u64,
    misses: u64,
}

/// Bytes an entry holds: the offsets, and for unsorted ids the permutation and the copy of the
/// ids (`id_bytes` of them).
fn entry_bytes(id_bytes: usize, plan: &CsrPlan) -> usize {
    let words = plan.offsets.len() + plan.order.as_ref().map_or(0, |o| o.len());
    let copy = if plan.is_sorted() { 0 } else { id_bytes };
    copy + words * std::mem::size_of::<usize>()
}

impl PlanCache {
    /// An empty cache holding at most `capacity` bytes.
    pub(crate) const fn new(capacity: usize) -> Self {
        Self {
            entries: Vec::new(),
            bytes: 0,
            capacity,
            hits: 0,
            misses: 0,
        }
    }

    /// The plan built from exactly these ids (compared in full), marked as most recently used.
    /// Counts a hit or a miss.
    pub(crate) fn lookup<I: IdElem + CpuElem>(
        &mut self,
        num_segments: usize,
        ids: &[I],
    ) -> Option<Arc<CsrPlan<'static>>> {
        let found = self
            .entries
            .iter()
            .rposition(|e| e.is_for(num_segments, ids));
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
    pub(crate) fn insert<I: IdElem + CpuElem>(
        &mut self,
        num_segments: usize,
        ids: &[I],
        plan: Arc<CsrPlan<'static>>,
    ) {
        let key: &[u8] = bytemuck::cast_slice(ids);
        let bytes = entry_bytes(key.len(), &plan);
        if bytes > self.capacity {
            return;
        }
        let held = self.entries.iter().any(|e| e.is_for(num_segments, ids));
        if held {
            return;
        }
        self.bytes += bytes;
        let copy = (!plan.is_sorted()).then(|| key.into());
        self.entries.push(Entry {
            dtype: I::dtype(),
            num_segments,
            ids: copy,
            plan,
            bytes,
        });
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
    CACHE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The plan of `ids`: the cached one when these exact ids were planned before, else a new one
/// (which the cache then keeps).
///
/// # Panics
/// As [`CsrPlan::new`], if an id lies outside `[0, num_segments)`.
pub(crate) fn plan<I: IdElem + CpuElem>(ids: &[I], num_segments: usize) -> Arc<CsrPlan<'static>> {
    LOOKUPS_HERE.set(LOOKUPS_HERE.get() + 1);
    {
        let mut cache = cache();
        if cache.capacity > 0
            && let Some(plan) = cache.lookup(num_segments, ids)
        {
            return plan;
        }
    }
    // Built outside the lock: other threads keep using the cache meanwhile.
    let plan = Arc::new(CsrPlan::new(ids, num_segments));
    cache().insert(num_segments, ids, plan.clone());
    plan
}

thread_local! {
    static LOOKUPS_HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times a CPU kernel called on this thread planned its ids per call (a lookup in the
/// plan cache, hit or miss, or a plan built with the cache off). An op through a
/// [`SegmentPlan`](crate::SegmentPlan) never does: this counts the ops that were not planned.
pub fn unplanned_calls_on_this_thread() -> u64 {
    LOOKUPS_HERE.get()
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

    fn planned<I: IdElem>(ids: &[I], n: usize) -> Arc<CsrPlan<'static>> {
        Arc::new(CsrPlan::new(ids, n))
    }

    #[test]
    fn hits_only_for_the_same_ids_dtype_and_size() {
        let mut cache = PlanCache::new(1 << 20);
        let ids = [2i64, 0, 1, 0];
        assert!(cache.lookup(3, &ids).is_none());
        cache.insert(3, &ids, planned(&ids, 3));
        let hit = cache.lookup(3, &ids).expect("same ids hit");
        assert_eq!(hit.offsets, CsrPlan::new(&ids, 3).offsets);
        assert_eq!(hit.order, CsrPlan::new(&ids, 3).order);
        // One id changed in place, same length: a miss, never the stale plan.
        assert!(cache.lookup(3, &[2i64, 0, 1, 1]).is_none());
        // Same ids, other num_segments or dtype: a miss.
        assert!(cache.lookup(4, &ids).is_none());
        assert!(cache.lookup(3, &[2i32, 0, 1, 0]).is_none());
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.entries), (1, 4, 1));
    }

    /// A sorted plan keeps no copy of its ids: its offsets decide which ids it was built from,
    /// and only exactly those hit.
    #[test]
    fn sorted_ids_are_matched_against_the_offsets() {
        let mut cache = PlanCache::new(1 << 20);
        let ids = [0i64, 0, 1, 3, 3, 3];
        let plan = planned(&ids, 5);
        assert!(plan.is_sorted());
        cache.insert(5, &ids, plan.clone());
        assert_eq!(
            cache.stats().bytes,
            plan.offsets.len() * std::mem::size_of::<usize>()
        );
        assert!(Arc::ptr_eq(
            &cache.lookup(5, &ids).expect("same ids hit"),
            &plan
        ));
        // The same counts per segment but not sorted, one id moved to another segment, one
        // id more or less, an id past the last segment's run: all misses.
        for other in [
            &[0i64, 1, 0, 3, 3, 3][..],
            &[0, 0, 1, 2, 3, 3],
            &[0, 0, 1, 3, 3],
            &[0, 0, 1, 3, 3, 3, 3],
            &[0, 0, 1, 3, 3, 4],
        ] {
            assert!(cache.lookup(5, other).is_none(), "{other:?}");
        }
        // Empty segments at the ends, and no ids at all.
        let ends = [1i32, 1, 2];
        cache.insert(4, &ends, planned(&ends, 4));
        assert!(cache.lookup(4, &ends).is_some());
        assert!(cache.lookup(4, &[1i32, 2, 2]).is_none());
        let none: [i32; 0] = [];
        cache.insert(2, &none, planned(&none, 2));
        assert!(cache.lookup(2, &none).is_some());
        assert!(cache.lookup(2, &[0i32]).is_none());
    }

    #[test]
    fn evicts_the_least_recently_used_plan_and_respects_the_capacity() {
        let (a, b, c) = (
            [0i64, 1].repeat(32),
            [1i64, 0].repeat(32),
            [2i64, 0].repeat(32),
        );
        let size = entry_bytes(a.len() * 8, &planned(&a, 3));
        let mut cache = PlanCache::new(2 * size);
        cache.insert(3, &a, planned(&a, 3));
        cache.insert(3, &b, planned(&b, 3));
        assert!(cache.lookup(3, &a).is_some()); // a is now the most recent
        cache.insert(3, &c, planned(&c, 3)); // evicts b
        assert!(cache.lookup(3, &b).is_none());
        assert!(cache.lookup(3, &a).is_some());
        assert!(cache.lookup(3, &c).is_some());
        assert_eq!(cache.stats().bytes, 2 * size);
        // A plan larger than the capacity is not kept; a smaller capacity evicts.
        let big = [0i64, 1].repeat(512);
        cache.insert(3, &big, planned(&big, 3));
        assert_eq!(cache.stats().entries, 2);
        cache.set_capacity(size);
        assert_eq!((cache.stats().entries, cache.stats().bytes), (1, size));
        cache.set_capacity(0);
        assert_eq!((cache.stats().entries, cache.stats().bytes), (0, 0));
    }

    #[test]
    fn holds_at_most_max_entries_plans() {
        let mut cache = PlanCache::new(1 << 30);
        let all: Vec<[i64; 4]> = (0..MAX_PLAN_CACHE_ENTRIES as i64 + 3)
            .map(|i| [i, 0, 0, 0])
            .collect();
        for ids in &all {
            cache.insert(64, ids, planned(ids, 64));
        }
        assert_eq!(cache.stats().entries, MAX_PLAN_CACHE_ENTRIES);
        // The oldest three went; the newest are all there.
        for (i, ids) in all.iter().enumerate() {
            assert_eq!(cache.lookup(64, ids).is_some(), i >= 3, "plan {i}");
        }
    }

    #[test]
    fn the_same_ids_are_kept_once() {
        let mut cache = PlanCache::new(1 << 20);
        for ids in [[1i64, 0, 1], [0, 1, 1]] {
            cache.insert(2, &ids, planned(&ids, 2));
            cache.insert(2, &ids, planned(&ids, 2));
        }
        assert_eq!(cache.stats().entries, 2);
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
        let tensor =
            |ids: &[i64]| FlexTensor::from_data(TensorData::new(ids.to_vec(), [ids.len()]));
        let first = super::super::ops::plan(&tensor(&ids), 313);
        let again = super::super::ops::plan(&tensor(&ids), 313);
        assert!(
            Arc::ptr_eq(&first, &again),
            "the same ids reuse the cached plan"
        );
        let mut edited = ids.clone();
        edited[500] = 0;
        let other = super::super::ops::plan(&tensor(&edited), 313);
        assert!(!Arc::ptr_eq(&first, &other));
        let want = CsrPlan::new(&edited, 313);
        assert_eq!((&other.offsets, &other.order), (&want.offsets, &want.order));
    }
}
