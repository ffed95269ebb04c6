//! Workarounds for Burn 0.22, in one place.
//!
//! Upstream: on Burn 0.22's wgpu backend (through Fusion), an op on an empty index tensor (a
//! `select` with no indices, an element-wise op on a `[0]` tensor) corrupts the results of
//! later, unrelated ops in the same stream (seen: `[0] + [0]` reading `[7]`); graphs without
//! edges trigger it. These helpers launch nothing on empty inputs. They can go when the graph
//! suite (`tests/suite/`) passes on wgpu with plain `select` and element-wise ops.

use burn::tensor::kind::Basic;
use burn::tensor::{Int, Tensor};

/// The rows of `t` at `indices`: `t.select(0, indices)`, except that an empty `indices` gives an
/// empty tensor without launching anything (see the module docs for why: gather with this).
///
/// # Shapes
/// `t: [N, ...]`, `indices: [E]` -> `[E, ...]`.
pub fn gather_rows<const D: usize, K: Basic>(
    t: Tensor<D, K>,
    indices: Tensor<1, Int>,
) -> Tensor<D, K> {
    if indices.dims()[0] == 0 {
        return t.slice(0..0);
    }
    t.select(0, indices)
}

/// Elementwise `f(t)` on an index tensor, skipped when it is empty (see [`gather_rows`]).
pub(crate) fn unless_empty(
    t: Tensor<1, Int>,
    f: impl FnOnce(Tensor<1, Int>) -> Tensor<1, Int>,
) -> Tensor<1, Int> {
    if t.dims()[0] == 0 { t } else { f(t) }
}
