//! An opt-in setting of the process's allocator for training on large graphs.
//!
//! Burn's own CPU ops (matmul, elementwise ops, copies) allocate their outputs through the
//! global allocator. glibc serves a block over 32 MiB with a fresh memory mapping and unmaps it
//! on free, so on a large graph every such tensor of every step is faulted in and cleared by
//! the system page by page, then unmapped again: at 1e7 edges (1e6 nodes of 64 `f32`s, 256 MiB
//! per node tensor) that was up to a third of a layer's forward and backward. The kernels of
//! this crate recycle their own large outputs ([`set_output_pool_capacity`]), but the other
//! ops' tensors are out of their reach.
//!
//! [`retain_freed_memory`] tells glibc to serve large blocks from its heap and never to give
//! freed heap memory back to the system, so the next step's tensors reuse the pages the last
//! step's left, already faulted in.
//!
//! [`set_output_pool_capacity`]: super::set_output_pool_capacity

/// Makes the process's allocator keep freed memory for its next allocations instead of
/// returning it to the system: on Linux with glibc, large blocks come from the heap instead of
/// fresh mappings (`mallopt(M_MMAP_MAX, 0)`) and the heap is never trimmed
/// (`mallopt(M_TRIM_THRESHOLD, -1)`), for the rest of the process. Returns whether it applied
/// (`false` on other platforms and C libraries, where it does nothing).
///
/// Call it once, early in a program that trains on large graphs on the CPU: each step then
/// reuses the previous step's memory instead of faulting fresh pages in (the book's performance
/// chapter has the figures). Below 32 MiB per tensor glibc reuses freed blocks anyway. The price
/// is memory: the process keeps its peak heap for good, and freed blocks in the middle of the
/// heap are reused only by allocations that fit in them. It changes how memory is obtained,
/// never what any op computes. Blocks over 64 MiB that glibc serves to threads other than the
/// main one still come from fresh mappings.
///
/// The same two settings are available without code through the environment, as
/// `GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=<bytes>` (with a large
/// threshold instead of "never").
pub fn retain_freed_memory() -> bool {
    imp::retain_freed_memory()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    pub(super) fn retain_freed_memory() -> bool {
        // SAFETY: mallopt only sets glibc's allocation parameters; both values are documented
        // (mallopt(3): 0 disables mmap for large requests, -1 disables trimming).
        unsafe {
            libc::mallopt(libc::M_MMAP_MAX, 0) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, -1) == 1
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub(super) fn retain_freed_memory() -> bool {
        false
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::retain_freed_memory;

    /// Bytes glibc holds in mappings of their own (blocks it will unmap on free).
    fn mapped() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        unsafe { libc::mallinfo2() }.hblkhd
    }

    #[test]
    fn large_blocks_come_from_the_heap_once_retained() {
        const LARGE: usize = 48 << 20;
        let before = mapped();
        let block = std::hint::black_box(vec![1u8; LARGE]);
        let with_default = mapped().saturating_sub(before);
        drop(block);
        assert!(
            with_default >= LARGE,
            "glibc maps a 48 MiB block by default ({with_default} bytes mapped)"
        );
        assert!(retain_freed_memory());
        let before = mapped();
        let block = std::hint::black_box(vec![1u8; LARGE]);
        let retained = mapped().saturating_sub(before);
        assert_eq!(block[LARGE - 1], 1);
        drop(block);
        assert!(
            retained < LARGE,
            "a 48 MiB block comes from the heap once retained ({retained} bytes mapped)"
        );
    }
}
