//! Top-k on the device for `k ≤ MAX_K` over sorted ids: one unit per (segment, column) walks
//! its segment's rows in order and keeps the best `k` in rank order in its own slots of the
//! outputs, so a row enters only when it strictly beats the last slot (ties stay with the
//! earlier row, as on the host). Rows are ranked by [`key_of`] with NaN above every number and
//! `-0 = +0`, the host kernel's order, so every backend selects the same rows.
//!
//! Unsorted ids have no CSR offsets to walk: without a plan (which groups them first), the
//! wrapper reads the device's unsorted flag (4 bytes) and leaves them to the host default.

use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::tensor::{DType, FloatDType, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;

use super::csr::{NAN_MAX_KEY, key_of, span};
use super::rank::insert_ranked;
use super::{called, full, grid, plan};
use crate::composite::read_host;
use crate::plan::SegmentIndex;

/// The largest `k` the kernel takes: each unit inserts into `k` slots, so the work per row
/// grows with `k`; larger `k` goes to the host default.
pub(super) const MAX_K: usize = 32;

/// Sorted ids: the `k` best rows of segment `s`, column `c` into slots `(s, 0..k, c)` of
/// `rows` (`[N, k, d]`, their keys in `keys`), then their values into `values` — `fill` and -1
/// past the segment's rows.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
pub fn csr_topk<A: Int>(
    data: &Tensor<f32>,
    offsets: &Tensor<u32>,
    keys: &mut Tensor<u32>,
    values: &mut Tensor<f32>,
    rows: &mut Tensor<A>,
    n: usize,
    k: usize,
    d: usize,
    fill: f32,
    #[comptime] largest: bool,
    #[define(A)] _a: ElemType,
) {
    if ABSOLUTE_POS >= n * d {
        terminate!();
    }
    let (s, c) = (ABSOLUTE_POS / d, ABSOLUTE_POS % d);
    let base = s * k * d + c;
    let (start, end) = span(offsets, s);
    let mut held = 0usize;
    for e in start..end {
        let key = key_of(data[e * d + c], NAN_MAX_KEY);
        held = insert_ranked::<A>(keys, rows, base, d, held, k, key, A::cast_from(e), largest);
    }
    for j in 0..k {
        let at = base + j * d;
        if j < held {
            values[at] = data[usize::cast_from(rows[at]) * d + c];
        } else {
            values[at] = fill;
            rows[at] = A::new(-1);
        }
    }
}

/// Values and rows `[n, k, d]` of the top `k ≤ MAX_K` over `ids` for f32 `data: [E, d]`, or
/// `None` when the ids are not sorted (`sorted` says they are known to be: no flag read).
pub(super) fn topk(
    data: CubeTensor,
    ids: CubeTensor,
    n: usize,
    k: usize,
    largest: bool,
    sorted: bool,
) -> Option<(CubeTensor, CubeTensor)> {
    let shape = data.shape();
    let (e, d) = (shape[0], shape[1]);
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let out_shape = Shape::new([n, k, d]);
    if e == 0 || n == 0 || d == 0 || k == 0 {
        let values = full(out_shape.clone(), fill, DType::F32, &data);
        return Some((values, full(out_shape, -1.0, ids.dtype, &ids)));
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let p = plan(&ids, n);
    if !sorted {
        let flag = read_host(CubeBackend::int_into_data(p.flag.clone()), "top-k");
        if flag.iter::<u32>().next() != Some(0) {
            return None;
        }
    }
    called();
    // Every slot is written by the kernel.
    let values = CubeBackend::float_empty(out_shape.clone(), &data.device, FloatDType::F32);
    let rows = CubeBackend::int_empty(out_shape.clone(), &ids.device, ids.dtype.into());
    let keys = CubeBackend::int_empty(out_shape, &ids.device, IntDType::U32);
    let (count, dim) = grid(&data, n * d);
    csr_topk::launch(
        &data.client,
        count,
        dim,
        data.clone().into_tensor_arg(),
        p.offsets.into_tensor_arg(),
        keys.into_tensor_arg(),
        values.clone().into_tensor_arg(),
        rows.clone().into_tensor_arg(),
        n,
        k,
        d,
        fill as f32,
        largest,
        dtype_to_storage_type(ids.dtype),
    );
    Some((values, rows))
}

impl crate::TopkBackend for CubeBackend {
    fn segment_topk(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        if data.dtype == DType::F32
            && k <= MAX_K
            && let Some(p) = super::taken(&index)
        {
            return super::planned::topk_planned(data, p, k, largest);
        }
        let (ids, n) = index.into_ids();
        if data.dtype == DType::F32 && super::ids_ok(&ids) && k <= MAX_K {
            let on_device = topk(data.clone(), ids.clone(), n, k, largest, false);
            if let Some(out) = on_device {
                return out;
            }
        }
        crate::topk::host_topk::<Self>(data, ids, n, k, largest)
    }
}
