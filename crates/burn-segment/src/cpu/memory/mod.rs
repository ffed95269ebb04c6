//! The CPU kernels' memory policy, in one place: kernel outputs, the pool that recycles the
//! large ones (`pool.rs`), and the heap setting for everything else (`heap.rs`).
//!
//! A large output is expensive before a kernel writes a byte of it: glibc maps every block over
//! 32 MiB afresh and unmaps it on free, so each call faults in and has the system clear every
//! page (a 768 MiB `segment_max` output at 1e7 rows is 196 608 pages of 4 KiB), then pays a TLB
//! shootdown when the tensor is dropped. Training calls the same kernels on tensors of the same
//! shapes at every step, so on Linux the outputs of the Flex backend that are
//! [`POOLED_OUTPUT_BYTES`] or larger come from a pool instead: blocks of whole 2 MiB pages
//! (advised `MADV_HUGEPAGE`), handed to the tensor through Burn
//! [`Bytes`](burn::tensor::Bytes) whose controller gives the block back to the pool when the
//! tensor (and every clone of it) is dropped. The next output of the same rounded size takes
//! it, already faulted in.
//!
//! The pool is shared by all threads, keeps at most [`DEFAULT_OUTPUT_POOL_BYTES`] of idle
//! blocks unless told otherwise ([`set_output_pool_capacity`]; 0 turns the recycling off), and
//! unmaps the blocks it has held longest first. An output larger than that capacity is left to
//! the global allocator, like a small one. Blocks in use by tensors do not count: the pool
//! only ever holds memory that no tensor holds. [`clear_output_pool`] unmaps every idle block.
//! Results do not depend on the pool: every kernel writes each element of its output (a
//! recycled block holds the values of its last use until then) before it returns it.
//!
//! NdArray's tensors own a `Vec` and would copy a pooled block, so its outputs stay `Vec`s, as
//! do the outputs of the public slice kernels in [`kernels`](super::kernels).

mod heap;

pub use heap::retain_freed_memory;

use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ops::{Deref, DerefMut};

/// The default most bytes of idle blocks the output pool keeps: 1 GiB, which holds the outputs
/// of one `segment_max` over 1e7 rows of 64 columns (768 MiB of values and i64 arguments) or of
/// a GAT layer's forward and backward on 1e6 edges.
pub const DEFAULT_OUTPUT_POOL_BYTES: usize = 1 << 30;

/// The smallest output, in bytes, that comes from the pool: below it glibc reuses freed memory
/// itself (its mapping threshold rises to 32 MiB after the first large free), and the fault
/// cost is small next to the kernel's.
pub const POOLED_OUTPUT_BYTES: usize = 4 << 20;

/// Outputs of at least this many bytes ask for transparent huge pages (pooled or not).
pub(crate) const HUGE_OUTPUT: usize = POOLED_OUTPUT_BYTES;

/// Where a kernel's output is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alloc {
    /// A `Vec`, always.
    Vec,
    /// A block of the output pool when it is large enough (on Linux), else a `Vec`.
    Pool,
}

/// A kernel's output of `T`s: a `Vec`, or a block of the output pool.
pub(crate) enum Out<T> {
    /// Owned by the global allocator.
    Vec(Vec<T>),
    /// A block of the pool, returned to it on drop.
    Pooled(Pooled<T>),
}

impl<T> Deref for Out<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Out::Vec(v) => v,
            Out::Pooled(p) => p,
        }
    }
}

impl<T> DerefMut for Out<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Out::Vec(v) => v,
            Out::Pooled(p) => p,
        }
    }
}

impl<T: Copy> Out<T> {
    /// The values as a `Vec`: free for a `Vec`, a copy of a pooled block (which then goes back
    /// to the pool).
    pub(crate) fn into_vec(self) -> Vec<T> {
        match self {
            Out::Vec(v) => v,
            Out::Pooled(p) => p.to_vec(),
        }
    }
}

/// A kernel output of `len` elements left unwritten, for a kernel that writes every one of
/// them (empty segments included) before [`assume_written`] hands it on: no fill pass before
/// the kernel's own, and fresh pages are faulted in (and cleared by the system) by the
/// kernel's threads in parallel rather than by one thread filling them. Outputs of
/// [`HUGE_OUTPUT`] or more are advised `MADV_HUGEPAGE` before they are touched, so they fault
/// in 2 MiB at a time (where the system's transparent huge pages are set to `madvise` or
/// `always`).
pub(crate) fn output_unwritten<T: Copy>(alloc: Alloc, len: usize) -> Out<MaybeUninit<T>> {
    let bytes = len * size_of::<T>();
    if let Some(block) = pool::take(alloc, bytes) {
        return Out::Pooled(Pooled::new(block, len));
    }
    let mut v: Vec<MaybeUninit<T>> = Vec::with_capacity(len);
    if bytes >= HUGE_OUTPUT {
        advise_huge_pages(v.as_mut_ptr() as *mut u8, bytes);
    }
    // SAFETY: the capacity holds `len` elements, and a `MaybeUninit` needs no initialisation.
    unsafe { v.set_len(len) };
    Out::Vec(v)
}

/// The output of [`output_unwritten`] once written.
///
/// # Safety
/// Every element of `out` must have been written.
pub(crate) unsafe fn assume_written<T>(out: Out<MaybeUninit<T>>) -> Out<T> {
    match out {
        Out::Vec(v) => {
            let mut v = core::mem::ManuallyDrop::new(v);
            // SAFETY: `MaybeUninit<T>` has `T`'s layout, the buffer came from a `Vec` of the
            // same length and capacity, and the caller guarantees that every element is
            // initialised.
            Out::Vec(unsafe {
                Vec::from_raw_parts(v.as_mut_ptr() as *mut T, v.len(), v.capacity())
            })
        }
        Out::Pooled(mut p) => {
            let block = p
                .block
                .take()
                .expect("a pooled output holds its block until dropped");
            Out::Pooled(Pooled::new(block, p.len))
        }
    }
}

/// `madvise(MADV_HUGEPAGE)` on the whole 2 MiB pages inside `ptr..ptr + bytes` (Linux; a no-op
/// elsewhere, and harmless where the advice is refused).
pub(crate) fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside one live allocation of this process; MADV_HUGEPAGE
            // changes only how its pages are backed, never their contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// `len` `T`s at the start of a pool block.
pub(crate) struct Pooled<T> {
    /// `None` only once the block has moved on (to a `Bytes` or a retyped `Pooled`).
    block: Option<pool::Block>,
    len: usize,
    _elems: PhantomData<T>,
}

impl<T> Pooled<T> {
    fn new(block: pool::Block, len: usize) -> Self {
        debug_assert!(len * size_of::<T>() <= block.size());
        Pooled {
            block: Some(block),
            len,
            _elems: PhantomData,
        }
    }

    /// The values as Burn `Bytes` that give the block back to the pool when dropped.
    pub(crate) fn into_bytes(mut self) -> burn::tensor::Bytes {
        let block = self
            .block
            .take()
            .expect("a pooled output holds its block until dropped");
        pool::into_bytes(block, self.len * size_of::<T>())
    }
}

impl<T> Deref for Pooled<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        let block = self
            .block
            .as_ref()
            .expect("a pooled output holds its block until dropped");
        // SAFETY: the block is at least `len * size_of::<T>()` bytes, aligned to 2 MiB, and owned
        // by this value; the `T`s are initialised, or `T` is `MaybeUninit`.
        unsafe { core::slice::from_raw_parts(block.ptr() as *const T, self.len) }
    }
}

impl<T> DerefMut for Pooled<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        let block = self
            .block
            .as_mut()
            .expect("a pooled output holds its block until dropped");
        // SAFETY: as in `deref`, and `&mut self` borrows the block uniquely.
        unsafe { core::slice::from_raw_parts_mut(block.ptr() as *mut T, self.len) }
    }
}

impl<T> Drop for Pooled<T> {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            pool::give_back(block);
        }
    }
}

#[cfg(target_os = "linux")]
mod pool;

/// Without Linux's `mmap` there is no pool: every output is a `Vec`.
#[cfg(not(target_os = "linux"))]
mod pool {
    use super::{Alloc, OutputPoolStats};

    pub(crate) enum Block {}
    impl Block {
        pub(crate) fn size(&self) -> usize {
            match *self {}
        }
        pub(crate) fn ptr(&self) -> *mut u8 {
            match *self {}
        }
    }
    pub(crate) fn take(_: Alloc, _: usize) -> Option<Block> {
        None
    }
    pub(crate) fn give_back(block: Block) {
        match block {}
    }
    pub(crate) fn into_bytes(block: Block, _: usize) -> burn::tensor::Bytes {
        match block {}
    }
    pub(crate) fn stats() -> OutputPoolStats {
        OutputPoolStats::default()
    }
    pub(crate) fn set_capacity(_: usize) {}
    pub(crate) fn clear() {}
}

/// What the output pool holds and how often it has answered; see [`output_pool_stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OutputPoolStats {
    /// Outputs served by a recycled block.
    pub hits: u64,
    /// Outputs that mapped a new block.
    pub misses: u64,
    /// Idle blocks held now.
    pub blocks: usize,
    /// Bytes of the idle blocks held now.
    pub bytes: usize,
    /// The most bytes of idle blocks the pool may hold.
    pub capacity: usize,
}

/// The output pool's counters and contents (all zero where there is no pool: outside Linux).
pub fn output_pool_stats() -> OutputPoolStats {
    pool::stats()
}

/// Sets the most bytes of idle output blocks the pool keeps (default
/// [`DEFAULT_OUTPUT_POOL_BYTES`]); blocks over the new capacity are unmapped at once, oldest
/// first. Outputs larger than the capacity come from the global allocator, so 0 turns the
/// recycling off (with glibc's defaults each output over 32 MiB is then mapped afresh and
/// unmapped on drop; see [`retain_freed_memory`]).
pub fn set_output_pool_capacity(bytes: usize) {
    pool::set_capacity(bytes)
}

/// Unmaps every idle block of the output pool (blocks held by tensors go back to it, and are
/// kept or unmapped under its capacity, when those tensors are dropped).
pub fn clear_output_pool() {
    pool::clear()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests that recycle a block or change the capacity run one at a time: a capacity of 0
    /// set by one would unmap the block another expects back.
    static CAPACITY: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// An output of `len` copies of `value`, written as a kernel writes its output.
    fn filled<T: Copy>(alloc: Alloc, len: usize, value: T) -> Out<T> {
        let mut out = output_unwritten::<T>(alloc, len);
        out.iter_mut().for_each(|x| _ = x.write(value));
        // SAFETY: every element was written just above.
        unsafe { assume_written(out) }
    }

    #[test]
    fn outputs_hold_what_was_written_at_every_size() {
        // Below and above the huge-page size, as `Vec`s and from the pool.
        for alloc in [Alloc::Vec, Alloc::Pool] {
            for len in [0, 1, 1000, HUGE_OUTPUT / 4 + 3, 3 * HUGE_OUTPUT / 4] {
                let mut out = output_unwritten::<f32>(alloc, len);
                assert_eq!(out.len(), len);
                out.iter_mut()
                    .enumerate()
                    .for_each(|(i, x)| _ = x.write(i as f32 - 7.5));
                // SAFETY: every element was written just above.
                let out = unsafe { assume_written(out) };
                assert!(
                    out.iter().enumerate().all(|(i, &x)| x == i as f32 - 7.5),
                    "{alloc:?} len {len}"
                );
                assert_eq!(out.into_vec().len(), len);
            }
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_dropped_output_is_recycled() {
        let _serial = CAPACITY.lock().unwrap_or_else(|e| e.into_inner());
        // A size no other test of this binary asks for, so no other thread takes the block.
        let len = (POOLED_OUTPUT_BYTES + (6 << 20) + 12) / 4;
        let mut first = filled(Alloc::Pool, len, 1.0f32);
        assert!(
            matches!(first, Out::Pooled(_)),
            "an output this large comes from the pool"
        );
        first
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as f32);
        let ptr = first.as_ptr();
        drop(first);
        let hits = output_pool_stats().hits;
        let zeros = filled(Alloc::Pool, len, 0.0f32);
        assert_eq!(zeros.as_ptr(), ptr, "the block was recycled");
        assert!(output_pool_stats().hits > hits);
        assert!(zeros.iter().all(|x| x.to_bits() == 0));

        // Through Burn's `Bytes`: the block goes back to the pool when the bytes are dropped.
        let Out::Pooled(block) = zeros else {
            unreachable!()
        };
        let bytes = block.into_bytes();
        assert_eq!(bytes.len(), len * 4);
        assert!(bytes.iter().all(|&b| b == 0));
        drop(bytes);
        let again = output_unwritten::<f32>(Alloc::Pool, len);
        assert_eq!(
            again.as_ptr() as *const f32,
            ptr,
            "the block came back from the bytes"
        );

        // A `Vec` output never touches the pool.
        assert!(matches!(
            output_unwritten::<f32>(Alloc::Vec, len),
            Out::Vec(_)
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_pool_keeps_no_idle_block_over_its_capacity() {
        let _serial = CAPACITY.lock().unwrap_or_else(|e| e.into_inner());
        let len = (POOLED_OUTPUT_BYTES + (10 << 20)) / 8;
        let out = filled(Alloc::Pool, len, 0i64);
        set_output_pool_capacity(0);
        drop(out);
        // Other threads may give blocks back meanwhile, but none is kept at capacity 0.
        assert_eq!(
            (output_pool_stats().bytes, output_pool_stats().blocks),
            (0, 0)
        );
        assert_eq!(output_pool_stats().capacity, 0);
        // An output the pool could never keep comes from the global allocator.
        let over = filled(Alloc::Pool, len, 3i64);
        assert!(
            matches!(over, Out::Vec(_)),
            "an output over the capacity is a Vec"
        );
        assert!(over.iter().all(|&x| x == 3));
        drop(over);
        set_output_pool_capacity(DEFAULT_OUTPUT_POOL_BYTES);
        let out = filled(Alloc::Pool, len, 0i64);
        drop(out);
        assert!(output_pool_stats().bytes >= len * 8);
        clear_output_pool();
        assert_eq!(output_pool_stats().blocks, 0);
    }
}
