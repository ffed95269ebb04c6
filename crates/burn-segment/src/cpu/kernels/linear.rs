//! A dense layer's two products on the CPU: `x · W` and the weight gradient `xᵀ · g`, through
//! the gemm crate (Flex's own matmul) called once per part of a split chosen here.
//!
//! Flex hands both products to gemm whole, and gemm parallelises over the output's blocks: a
//! `[N, 64] · [64, 64]` product barely gained from a second thread and a `64 × 64` weight
//! gradient over `K = N` rows ran slower on two threads than on one (`benches/RESULTS.md`).
//! Here the forward product is split by rows and the weight gradient by its long `K`
//! dimension (partial products summed in part order). The parts depend only on the shapes, so
//! the bits are the same for any number of threads.

use core::mem::MaybeUninit;

use rayon::prelude::*;

use super::{Elem, for_each_chunk};
use crate::cpu::memory::{Alloc, Out, assume_written, output_unwritten};

/// Multiply-adds below which a product runs as one call on the calling thread.
const ONE_THREAD_WORK: usize = 1 << 20;
/// Multiply-adds per part of a split product (enough to repay a part's packing and dispatch).
const PART_WORK: usize = 1 << 21;
/// The most values of `W` (forward) or of the output (weight gradient) that are split as above:
/// past it gemm's own split over the output's blocks has enough blocks to share.
const SPLIT_MAX_VALUES: usize = 1 << 16;
/// The most partial weight gradients (each as large as the output) summed per call.
const MAX_PARTS: usize = 8;
/// Output values per task of the partials' sum.
const SUM_CHUNK: usize = 1 << 14;

/// One gemm call: `dst[m, n] = lhs[m, k] · rhs[k, n]`, every operand row-major except `lhs`,
/// read at `lhs_rs` between rows and `lhs_cs` between columns.
///
/// # Safety
/// `dst` must hold `m · n` values; `lhs` must hold every `i · lhs_rs + j · lhs_cs` for `i < m`,
/// `j < k`, and `rhs` `k · n` values.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_into<E: Elem>(
    dst: *mut E,
    (m, n, k): (usize, usize, usize),
    lhs: *const E,
    (lhs_rs, lhs_cs): (usize, usize),
    rhs: *const E,
    parallelism: gemm::Parallelism,
) {
    // SAFETY: the caller's bounds; `read_dst = false` writes every value of `dst` without
    // reading it (zeros when `k = 0`).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            n as isize,
            false,
            lhs,
            lhs_cs as isize,
            lhs_rs as isize,
            rhs,
            1,
            n as isize,
            E::ZERO,
            E::ONE,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// `x · w` for row-major `x: [rows, d_in]` and `w: [d_in, d_out]`: `[rows, d_out]`.
pub(crate) fn linear<E: Elem>(
    alloc: Alloc,
    x: &[E],
    w: &[E],
    (rows, d_in, d_out): (usize, usize, usize),
) -> Out<E> {
    assert!(
        x.len() == rows * d_in && w.len() == d_in * d_out,
        "burn-segment: linear operands do not match [{rows}, {d_in}] · [{d_in}, {d_out}]"
    );
    let mut out = output_unwritten::<E>(alloc, rows * d_out);
    let part = |dst: &mut [MaybeUninit<E>], first_row: usize, parallelism| {
        let m = dst.len() / d_out.max(1);
        // SAFETY: `dst` holds `m` output rows, `x` the `m` rows from `first_row`, `w` all of W.
        unsafe {
            gemm_into(
                dst.as_mut_ptr() as *mut E,
                (m, d_out, d_in),
                x.as_ptr().add(first_row * d_in),
                (d_in, 1),
                w.as_ptr(),
                parallelism,
            )
        }
    };
    let work = rows * d_in * d_out;
    if work < ONE_THREAD_WORK || rows < 2 || d_out == 0 {
        part(&mut out, 0, gemm::Parallelism::None);
    } else if d_in * d_out > SPLIT_MAX_VALUES {
        part(&mut out, 0, gemm::Parallelism::Rayon(0));
    } else {
        let part_rows = (PART_WORK / (d_in * d_out)).clamp(1, rows);
        out.par_chunks_mut(part_rows * d_out)
            .enumerate()
            .for_each(|(p, dst)| part(dst, p * part_rows, gemm::Parallelism::None));
    }
    // SAFETY: every output row belongs to one part, and gemm wrote each part whole.
    unsafe { assume_written(out) }
}

/// `xᵀ · g` for row-major `x: [rows, d_in]` and `g: [rows, d_out]`: the `[d_in, d_out]`
/// weight gradient of `x · W`.
pub(crate) fn linear_weight_grad<E: Elem>(
    alloc: Alloc,
    x: &[E],
    g: &[E],
    (rows, d_in, d_out): (usize, usize, usize),
) -> Out<E> {
    assert!(
        x.len() == rows * d_in && g.len() == rows * d_out,
        "burn-segment: linear weight gradient operands do not match [{rows}, {d_in}] and \
         [{rows}, {d_out}]"
    );
    let values = d_in * d_out;
    let mut out = output_unwritten::<E>(alloc, values);
    // `dst = x[rows_of_part]ᵀ · g[rows_of_part]`: xᵀ's rows are x's columns.
    let part = |dst: *mut E, first: usize, k: usize, parallelism| {
        // SAFETY: `dst` holds `d_in · d_out` values; `x` and `g` hold the `k` rows from `first`.
        unsafe {
            gemm_into(
                dst,
                (d_in, d_out, k),
                x.as_ptr().add(first * d_in),
                (1, d_in),
                g.as_ptr().add(first * d_out),
                parallelism,
            )
        }
    };
    let work = rows * values;
    let parts = (work / PART_WORK).clamp(1, MAX_PARTS).min(rows.max(1));
    if work < ONE_THREAD_WORK || parts == 1 || values > SPLIT_MAX_VALUES {
        let parallelism = match work < ONE_THREAD_WORK {
            true => gemm::Parallelism::None,
            false => gemm::Parallelism::Rayon(0),
        };
        part(out.as_mut_ptr() as *mut E, 0, rows, parallelism);
        // SAFETY: the one call wrote every value.
        return unsafe { assume_written(out) };
    }
    // Part `p` takes rows `p · rows / parts ..` into a partial of its own; the output is their
    // sum in part order (the same sums for any number of threads).
    let bounds = |p: usize| p * rows / parts;
    let mut partials = vec![vec![E::ZERO; values]; parts];
    partials.par_iter_mut().enumerate().for_each(|(p, dst)| {
        let (first, end) = (bounds(p), bounds(p + 1));
        part(
            dst.as_mut_ptr(),
            first,
            end - first,
            gemm::Parallelism::None,
        )
    });
    // Each value sums its partials in part order whichever chunk it falls in; large outputs
    // are summed in parallel chunks (up to 8 × 2^16 adds, too many for one thread).
    for_each_chunk(&mut out, SUM_CHUNK, values >= 2 * SUM_CHUNK, |k, dst| {
        for (j, o) in dst.iter_mut().enumerate() {
            let i = k * SUM_CHUNK + j;
            let sum = partials[1..]
                .iter()
                .fold(partials[0][i], |s, q| s.add(q[i]));
            o.write(sum);
        }
    });
    // SAFETY: the chunks above wrote every value.
    unsafe { assume_written(out) }
}
