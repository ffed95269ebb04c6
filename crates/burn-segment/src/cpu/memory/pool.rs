//! The output pool on Linux (see [`output`](super)): blocks are anonymous memory mappings of
//! whole 2 MiB pages, advised `MADV_HUGEPAGE`, kept idle under a byte capacity.

use core::mem::MaybeUninit;
use core::ptr::NonNull;
use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use burn::tensor::Bytes;
use burn_std::bytes::{AccessError, AccessPolicy, AllocationController, AllocationProperty};

use super::{Alloc, DEFAULT_OUTPUT_POOL_BYTES, OutputPoolStats, POOLED_OUTPUT_BYTES};

/// Block sizes are whole huge pages, and blocks start on one.
const PAGE: usize = 2 << 20;

/// One anonymous mapping of `size` bytes (a multiple of [`PAGE`]), aligned to [`PAGE`], owned
/// by whoever holds this value; unmapped by [`Block::unmap`] only.
pub(crate) struct Block {
    ptr: NonNull<u8>,
    size: usize,
}

// SAFETY: a `Block` owns its mapping outright (like a `Box<[u8]>`), and access to the bytes goes
// through `&`/`&mut` borrows of the value that holds it.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

impl Block {
    /// The block's size in bytes.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The first byte of the block.
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// A fresh zeroed block of `size` bytes, or `None` when the system refuses the mapping.
    fn map(size: usize) -> Option<Block> {
        let span = size.checked_add(PAGE)?;
        // SAFETY: an anonymous private mapping at an address of the system's choosing touches
        // no existing memory.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                span,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base as usize;
        let start = base.next_multiple_of(PAGE);
        // SAFETY: the head `base..start` and the tail `start + size..base + span` lie inside the
        // mapping just made and are not used; unmapping them leaves `start..start + size`, a
        // range of whole huge pages. MADV_HUGEPAGE changes only how its pages are backed.
        unsafe {
            if start > base {
                libc::munmap(base as *mut libc::c_void, start - base);
            }
            if base + span > start + size {
                libc::munmap(
                    (start + size) as *mut libc::c_void,
                    base + span - start - size,
                );
            }
            libc::madvise(start as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
        }
        Some(Block {
            ptr: NonNull::new(start as *mut u8)?,
            size,
        })
    }

    fn unmap(self) {
        // SAFETY: `ptr..ptr + size` is this block's mapping, and the block is consumed, so no
        // borrow of its bytes outlives it.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.size) };
    }
}

/// The idle blocks, oldest first, and the counters.
struct Pool {
    idle: VecDeque<Block>,
    bytes: usize,
    capacity: usize,
    hits: u64,
    misses: u64,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    idle: VecDeque::new(),
    bytes: 0,
    capacity: DEFAULT_OUTPUT_POOL_BYTES,
    hits: 0,
    misses: 0,
});

fn lock() -> MutexGuard<'static, Pool> {
    // The pool's invariants hold between statements, so a panic elsewhere leaves it usable.
    POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Pool {
    /// Takes idle blocks out, oldest first, until at most `capacity` bytes stay idle.
    fn evict_to(&mut self, capacity: usize) -> Vec<Block> {
        let mut out = Vec::new();
        while self.bytes > capacity {
            let block = self
                .idle
                .pop_front()
                .expect("idle bytes are the sum of the idle blocks");
            self.bytes -= block.size;
            out.push(block);
        }
        out
    }
}

/// A block for an output of `bytes` bytes: a recycled idle block of the same rounded size when
/// there is one, else a new mapping. `None` where the pool does not serve this output (a `Vec`
/// output, one under [`POOLED_OUTPUT_BYTES`], or one over the pool's capacity) or the system
/// refused a mapping (the caller falls back to a `Vec`).
pub(crate) fn take(alloc: Alloc, bytes: usize) -> Option<Block> {
    if alloc != Alloc::Pool || bytes < POOLED_OUTPUT_BYTES {
        return None;
    }
    let size = bytes.checked_next_multiple_of(PAGE)?;
    {
        let mut pool = lock();
        // A block the pool could never keep is the global allocator's to serve: with glibc's
        // defaults that is a fresh mapping as well, but a process that retains freed memory
        // (`retain_freed_memory`) reuses its heap for it.
        if size > pool.capacity {
            return None;
        }
        // The most recently returned block of the size: its pages are the likeliest in cache.
        if let Some(i) = pool.idle.iter().rposition(|b| b.size == size) {
            let block = pool.idle.remove(i).expect("the position was just found");
            pool.bytes -= size;
            pool.hits += 1;
            return Some(block);
        }
        pool.misses += 1;
    }
    Block::map(size)
}

/// Returns a block no longer in use: kept idle when the capacity allows (evicting older blocks
/// to make room), unmapped otherwise. Unmapping happens outside the lock.
pub(crate) fn give_back(block: Block) {
    let evicted = {
        let mut pool = lock();
        if block.size > pool.capacity {
            vec![block]
        } else {
            pool.bytes += block.size;
            pool.idle.push_back(block);
            let capacity = pool.capacity;
            pool.evict_to(capacity)
        }
    };
    evicted.into_iter().for_each(Block::unmap);
}

/// Burn `Bytes` over the first `len` bytes of `block` (which the caller has written), giving
/// the block back to the pool when dropped.
pub(crate) fn into_bytes(block: Block, len: usize) -> Bytes {
    debug_assert!(len <= block.size);
    // SAFETY: the caller wrote the first `len` bytes of the block; the controller owns it.
    unsafe { Bytes::from_controller(Box::new(Controller { block: Some(block) }), len) }
}

/// The `Bytes` controller of a pooled block: plain resident host memory that goes back to the
/// pool on drop. It cannot grow, split or detach, so Burn copies where it would need to.
struct Controller {
    /// `None` only during drop.
    block: Option<Block>,
}

impl Controller {
    fn block(&self) -> &Block {
        self.block
            .as_ref()
            .expect("a controller holds its block until dropped")
    }
}

impl AllocationController for Controller {
    fn alloc_align(&self) -> usize {
        // Blocks start on a 2 MiB page. Burn's own allocations never ask for more than the
        // alignment of `u128` (its `MAX_ALIGN`), which a clone of these bytes is then made with.
        align_of::<u128>()
    }

    fn property(&self) -> AllocationProperty {
        AllocationProperty::Other
    }

    fn memory(&self, _policy: AccessPolicy) -> Result<&[MaybeUninit<u8>], AccessError> {
        let block = self.block();
        // SAFETY: the block's `size` bytes are mapped and owned by this controller.
        Ok(unsafe {
            core::slice::from_raw_parts(block.ptr() as *const MaybeUninit<u8>, block.size)
        })
    }

    unsafe fn memory_mut(
        &mut self,
        _policy: AccessPolicy,
    ) -> Result<&mut [MaybeUninit<u8>], AccessError> {
        let block = self.block();
        // SAFETY: as in `memory`, borrowed uniquely through `&mut self`.
        Ok(unsafe {
            core::slice::from_raw_parts_mut(block.ptr() as *mut MaybeUninit<u8>, block.size)
        })
    }

    fn capacity(&self) -> usize {
        self.block().size
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            give_back(block);
        }
    }
}

pub(crate) fn stats() -> OutputPoolStats {
    let pool = lock();
    OutputPoolStats {
        hits: pool.hits,
        misses: pool.misses,
        blocks: pool.idle.len(),
        bytes: pool.bytes,
        capacity: pool.capacity,
    }
}

pub(crate) fn set_capacity(bytes: usize) {
    let evicted = {
        let mut pool = lock();
        pool.capacity = bytes;
        pool.evict_to(bytes)
    };
    evicted.into_iter().for_each(Block::unmap);
}

pub(crate) fn clear() {
    let evicted = lock().evict_to(0);
    evicted.into_iter().for_each(Block::unmap);
}
