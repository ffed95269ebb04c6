//! The top `k` columns of each row on the device.

use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::IntTensorOps;
use burn::tensor::{IntDType, Shape};
use burn_cubecl::{CubeBackend, tensor::CubeTensor};
use cubecl::prelude::*;

use super::{
    Job, MaskArgs, MaskArgsLaunch, Pairs, columns_of, mask_args, pair_score, static_eligible,
    within_radius,
};
use crate::cube::csr::{NAN_MAX_KEY, key_of};
use crate::cube::rank::insert_ranked;
use crate::pairwise::PairSelection;

/// The largest `k` the kernel takes (a row's slots are rewritten as columns enter).
pub(super) const MAX_K: usize = 32;

/// One unit per row `i` of `x: [n, d]`: the best `k` eligible columns of `y` into
/// `out[i, ..k]` in rank order (-1 past the eligible), their keys into `keys[i, ..k]`. A
/// column enters only when it strictly beats the last slot, so ties stay with the smaller one.
#[cube(launch)]
#[allow(clippy::too_many_arguments)]
fn pair_topk<I: Int>(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    labels_x: &Tensor<I>,
    labels_y: &Tensor<I>,
    spans: &Tensor<u32>,
    out: &mut Tensor<I>,
    keys: &mut Tensor<u32>,
    args: MaskArgs,
    n: usize,
    m: usize,
    d: usize,
    k: usize,
    #[comptime] p: Pairs,
    #[comptime] largest: bool,
    #[comptime] nan_wins: bool,
    #[define(I)] _i: ElemType,
) {
    if ABSOLUTE_POS >= n {
        terminate!();
    }
    let i = ABSOLUTE_POS;
    let base = i * k;
    let (start, end) = columns_of(spans, i, m, p);
    let li = labels_x[i];
    let mut held = 0usize;
    let mut done = false;
    for j in start..end {
        if !done && static_eligible::<I>(i, j, li, labels_y[j], &args, p) {
            let key = key_of(pair_score(x, y, i, j, d, p), NAN_MAX_KEY);
            let eligible = within_radius(key, &args, p);
            if eligible && nan_wins && key == NAN_MAX_KEY {
                // `amin` / `amax`: the first NaN is the answer.
                out[base] = I::cast_from(j);
                held = 1;
                done = true;
            } else if eligible {
                held =
                    insert_ranked::<I>(keys, out, base, 1, held, k, key, I::cast_from(j), largest);
            }
        }
    }
    for s in held..k {
        out[base + s] = I::new(-1);
    }
}

/// The selected columns `[N, k]` in the labels' dtype.
pub(super) fn topk(job: &Job, sel: PairSelection) -> CubeTensor {
    crate::cube::called();
    let (n, k) = (job.n(), sel.k);
    let device = &job.x.device;
    let out = CubeBackend::int_empty(Shape::new([n, k]), device, IntDType::from(job.lx.dtype));
    let keys = CubeBackend::int_empty(Shape::new([n, k]), device, IntDType::U32);
    if n == 0 {
        return out;
    }
    let (count, dim) = job.grid(n);
    pair_topk::launch(
        &job.x.client,
        count,
        dim,
        job.x.clone().into_tensor_arg(),
        job.y.clone().into_tensor_arg(),
        job.lx.clone().into_tensor_arg(),
        job.ly.clone().into_tensor_arg(),
        job.spans.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        keys.into_tensor_arg(),
        mask_args!(job),
        n,
        job.m(),
        job.d(),
        k,
        job.pairs,
        sel.largest,
        sel.nan_wins,
        dtype_to_storage_type(job.lx.dtype),
    );
    out
}
