//! Host side of each op: allocate outputs at their identities, build the plan, launch the
//! sorted and the unsorted kernels (the device flag picks which one works).

use burn::backend::TensorMetadata;
use burn::backend::cubecl::dtype_to_storage_type;
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::tensor::{BoolStore, DType, FloatDType, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};

use super::{adds_atomically, called, full, grid, kernels, plan};
use crate::composite::int_identity;
use crate::shape::flat_rows;
use crate::{SegmentExtreme, SegmentReduction};

/// The entries a sum keeps: every one, or those a Bool mask (`U8` / `U32` storage) keeps.
pub(super) struct Kept {
    /// The mask, or a one-element placeholder without one.
    mask: CubeTensor,
    /// The kernels' `masked`: 0 (none), 1 (one flag per row), 2 (a flag per entry).
    code: u32,
}

impl Kept {
    /// No mask: every entry counts. The kernels never read the mask argument then, so `data`
    /// itself stands in for it: no allocation or fill on the unmasked ops' path.
    pub(super) fn all(data: &CubeTensor) -> Self {
        Self {
            mask: data.clone(),
            code: 0,
        }
    }

    /// The entries `mask` keeps (`[E]` or the data's shape), or `None` for a storage the
    /// kernels do not read.
    pub(super) fn by(mask: CubeTensor, data: &CubeTensor) -> Option<Self> {
        let readable = matches!(mask.dtype, DType::Bool(BoolStore::U8 | BoolStore::U32));
        let per_row = mask.shape().num_dims() == 1 && data.shape().num_dims() > 1;
        let code = if per_row { 1 } else { 2 };
        readable.then(|| Self {
            mask: into_contiguous(mask),
            code,
        })
    }

    fn arg(&self) -> (cubecl::prelude::TensorArg, cubecl::prelude::ElemType) {
        (
            self.mask.clone().into_tensor_arg(),
            dtype_to_storage_type(self.mask.dtype),
        )
    }
}

/// `out += data` per segment over the entries `kept` keeps (or `*=` over all), for the
/// unsorted path.
fn fold_unsorted(
    data: &CubeTensor,
    kept: &Kept,
    ids: &CubeTensor,
    flag: &CubeTensor,
    out: &CubeTensor,
    n: usize,
    prod: bool,
) {
    let (e, d, _) = flat_rows(&data.shape(), n);
    let (mask, mask_type) = kept.arg();
    let types = [
        dtype_to_storage_type(data.dtype),
        dtype_to_storage_type(ids.dtype),
        mask_type,
    ];
    let args = (
        data.clone().into_tensor_arg(),
        ids.clone().into_tensor_arg(),
        flag.clone().into_tensor_arg(),
    );
    if !prod && adds_atomically(data) {
        let (count, dim) = grid(data, e * d);
        kernels::atomic_sum::launch(
            &data.client,
            count,
            dim,
            args.0,
            mask,
            args.1,
            args.2,
            out.clone().into_tensor_arg(),
            n,
            d,
            kept.code,
            types,
        );
    } else {
        let (count, dim) = grid(data, d);
        kernels::column_sum_prod::launch(
            &data.client,
            count,
            dim,
            args.0,
            mask,
            args.1,
            args.2,
            out.clone().into_tensor_arg(),
            n,
            d,
            prod,
            kept.code,
            types,
        );
    }
}

/// Segment sum or product of f32 or i32 rows (a sum over the entries `kept` keeps).
pub(super) fn sum_prod(
    data: CubeTensor,
    kept: Option<Kept>,
    ids: CubeTensor,
    n: usize,
    prod: bool,
) -> CubeTensor {
    called();
    let (e, d, out_shape) = flat_rows(&data.shape(), n);
    let out = full(out_shape, if prod { 1.0 } else { 0.0 }, data.dtype, &data);
    if e == 0 || n == 0 || d == 0 {
        return out;
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let kept = kept.unwrap_or_else(|| Kept::all(&data));
    let p = plan(&ids, n);
    let (count, dim) = grid(&data, n * d);
    let (mask, mask_type) = kept.arg();
    kernels::csr_sum_prod::launch(
        &data.client,
        count,
        dim,
        data.clone().into_tensor_arg(),
        mask,
        p.offsets.into_tensor_arg(),
        p.flag.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        d,
        prod,
        kept.code,
        [dtype_to_storage_type(data.dtype), mask_type],
    );
    fold_unsorted(&data, &kept, &ids, &p.flag, &out, n, prod);
    out
}

/// Segment max or min of f32 or i32 rows, with the first row attaining it (ids' dtype).
pub(super) fn extreme(
    data: CubeTensor,
    kept: Option<Kept>,
    ids: CubeTensor,
    n: usize,
    which: SegmentExtreme,
) -> (CubeTensor, CubeTensor) {
    called();
    let max = which == SegmentExtreme::Max;
    let reduction = if max {
        SegmentReduction::Max
    } else {
        SegmentReduction::Min
    };
    let (e, d, out_shape) = flat_rows(&data.shape(), n);
    let f32_data = data.dtype == DType::F32;
    let identity = match (f32_data, max) {
        (true, true) => f64::NEG_INFINITY,
        (true, false) => f64::INFINITY,
        (false, _) => int_identity(reduction, data.dtype) as f64,
    };
    let out = full(out_shape.clone(), identity, data.dtype, &data);
    let arg = full(out_shape.clone(), -1.0, ids.dtype, &ids);
    if e == 0 || n == 0 || d == 0 {
        return (out, arg);
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    // (Masks are for f32 data only.)
    let kept = kept.unwrap_or_else(|| Kept::all(&data));
    let (mask, mt) = (|| kept.arg().0, kept.arg().1);
    let p = plan(&ids, n);
    let (dt, it) = (
        dtype_to_storage_type(data.dtype),
        dtype_to_storage_type(ids.dtype),
    );
    let client = data.client.clone();
    let arg_ = || {
        (
            data.clone().into_tensor_arg(),
            ids.clone().into_tensor_arg(),
            p.flag.clone().into_tensor_arg(),
        )
    };

    // Sorted ids: one CSR pass writes values and rows.
    let (count, dim) = grid(&data, n * d);
    let (x, offsets, flag, o, a) = (
        data.clone().into_tensor_arg(),
        p.offsets.clone().into_tensor_arg(),
        p.flag.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        arg.clone().into_tensor_arg(),
    );
    if f32_data {
        let (m, code) = (mask(), kept.code);
        kernels::csr_extreme_f32::launch(
            &client,
            count,
            dim,
            x,
            m,
            offsets,
            flag,
            o,
            a,
            d,
            max,
            code,
            [it, mt],
        );
    } else {
        kernels::csr_extreme_int::launch(
            &client,
            count,
            dim,
            x,
            offsets,
            flag,
            o,
            a,
            d,
            max,
            [dt, it],
        );
    }

    // Unsorted ids: atomic extreme, then the smallest row attaining it.
    let rows = full(out_shape.clone(), u32::MAX as f64, DType::U32, &ids);
    let (count, dim) = grid(&data, e * d);
    if f32_data {
        let key = if max {
            kernels::NEG_INF_KEY
        } else {
            kernels::POS_INF_KEY
        };
        let keys = full(out_shape, key as f64, DType::U32, &ids);
        let (x, i, f) = arg_();
        kernels::atomic_key_extreme::launch(
            &client,
            count.clone(),
            dim,
            x,
            mask(),
            i,
            f,
            keys.clone().into_tensor_arg(),
            n,
            d,
            max,
            kept.code,
            [it, mt],
        );
        let (x, i, f) = arg_();
        let (k, r) = (
            keys.clone().into_tensor_arg(),
            rows.clone().into_tensor_arg(),
        );
        let types = [it, mt];
        let code = kept.code;
        kernels::atomic_arg_f32::launch(
            &client,
            count,
            dim,
            x,
            mask(),
            i,
            f,
            k,
            r,
            n,
            d,
            max,
            code,
            types,
        );
        let (count, dim) = grid(&data, n * d);
        let (k, f, o) = (
            keys.into_tensor_arg(),
            p.flag.clone().into_tensor_arg(),
            out.clone().into_tensor_arg(),
        );
        kernels::finish_keys::launch(&client, count, dim, k, f, o);
    } else {
        let (x, i, f) = arg_();
        kernels::atomic_int_extreme::launch(
            &client,
            count.clone(),
            dim,
            x,
            i,
            f,
            out.clone().into_tensor_arg(),
            n,
            d,
            max,
            [dt, it],
        );
        let (x, i, f) = arg_();
        let (b, r) = (
            out.clone().into_tensor_arg(),
            rows.clone().into_tensor_arg(),
        );
        kernels::atomic_arg_int::launch(&client, count, dim, x, i, f, b, r, n, d, [dt, it]);
    }
    let (count, dim) = grid(&data, n * d);
    let (r, f, a) = (
        rows.into_tensor_arg(),
        p.flag.into_tensor_arg(),
        arg.clone().into_tensor_arg(),
    );
    kernels::finish_rows::launch(&client, count, dim, r, f, a, it);
    (out, arg)
}

// ANCHOR: cube_softmax_host
/// Segment softmax of f32 rows.
pub(super) fn softmax(
    data: CubeTensor,
    kept: Option<Kept>,
    ids: CubeTensor,
    n: usize,
) -> CubeTensor {
    called();
    let (e, d, seg_shape) = flat_rows(&data.shape(), n);
    let out = full(data.shape(), 0.0, DType::F32, &data);
    if e == 0 || n == 0 || d == 0 {
        return out;
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let kept = kept.unwrap_or_else(|| Kept::all(&data));
    let p = plan(&ids, n);
    let it = dtype_to_storage_type(ids.dtype);
    let client = data.client.clone();
    let f = || p.flag.clone().into_tensor_arg();
    let (m, mt) = (|| kept.arg().0, kept.arg().1);

    let (count, dim) = grid(&data, n * d);
    let (x, offsets, o) = (
        data.clone().into_tensor_arg(),
        p.offsets.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    let code = kept.code;
    kernels::csr_softmax::launch(&client, count, dim, x, m(), offsets, f(), o, n, d, code, mt);

    let keys = full(
        seg_shape.clone(),
        kernels::NEG_INF_KEY as f64,
        DType::U32,
        &ids,
    );
    let (count, dim) = grid(&data, e * d);
    let (x, i, k) = (
        data.clone().into_tensor_arg(),
        ids.clone().into_tensor_arg(),
        keys.clone().into_tensor_arg(),
    );
    let types = [it, mt];
    let c = count.clone();
    kernels::atomic_key_extreme::launch(
        &client,
        c,
        dim,
        x,
        m(),
        i,
        f(),
        k,
        n,
        d,
        true,
        code,
        types,
    );
    let (x, i, k, o) = (
        data.clone().into_tensor_arg(),
        ids.clone().into_tensor_arg(),
        keys.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    let c = count.clone();
    kernels::softmax_exp::launch(&client, c, dim, x, m(), i, f(), k, o, n, d, code, types);
    // Left-out entries are 0 in `out`: a plain sum totals the kept ones.
    let sums = full(seg_shape, 0.0, DType::F32, &data);
    fold_unsorted(&out, &Kept::all(&out), &ids, &p.flag, &sums, n, false);
    let (i, s, o) = (
        ids.clone().into_tensor_arg(),
        sums.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    kernels::softmax_div::launch(&client, count, dim, m(), i, f(), s, o, n, d, code, types);
    out
}
// ANCHOR_END: cube_softmax_host

/// Number of rows per segment, in the ids' dtype.
pub(super) fn count(ids: CubeTensor, n: usize) -> CubeTensor {
    called();
    let e = ids.meta.shape()[0];
    let counts = full(Shape::new([n]), 0.0, DType::I32, &ids);
    if e > 0 && n > 0 {
        let ids = into_contiguous(ids.clone());
        let (count, dim) = grid(&ids, e);
        let it = dtype_to_storage_type(ids.dtype);
        kernels::count::launch(
            &ids.client,
            count,
            dim,
            ids.clone().into_tensor_arg(),
            counts.clone().into_tensor_arg(),
            n,
            it,
        );
    }
    in_dtype(counts, ids.dtype)
}

/// Nonzero f32 entries per segment and column, in the ids' dtype (counted in i32).
pub(super) fn count_nonzero(data: CubeTensor, ids: CubeTensor, n: usize) -> CubeTensor {
    called();
    let (e, d, out_shape) = flat_rows(&data.shape(), n);
    let counts = full(out_shape, 0.0, DType::I32, &ids);
    let ids_dtype = ids.dtype;
    if e > 0 && n > 0 && d > 0 {
        let (data, ids) = (into_contiguous(data), into_contiguous(ids));
        let p = plan(&ids, n);
        let (count, dim) = grid(&data, n * d);
        kernels::csr_count_nonzero::launch(
            &data.client,
            count,
            dim,
            data.clone().into_tensor_arg(),
            p.offsets.into_tensor_arg(),
            p.flag.clone().into_tensor_arg(),
            counts.clone().into_tensor_arg(),
            d,
        );
        let (count, dim) = grid(&data, e * d);
        kernels::atomic_count_nonzero::launch(
            &data.client,
            count,
            dim,
            data.clone().into_tensor_arg(),
            ids.clone().into_tensor_arg(),
            p.flag.into_tensor_arg(),
            counts.clone().into_tensor_arg(),
            n,
            d,
            dtype_to_storage_type(ids.dtype),
        );
    }
    in_dtype(counts, ids_dtype)
}

/// i32 counts in the ids' dtype.
fn in_dtype(counts: CubeTensor, dtype: DType) -> CubeTensor {
    match dtype {
        DType::I32 => counts,
        other => CubeBackend::int_cast(counts, IntDType::from(other)),
    }
}

/// Row-wise gather with out-of-range ids giving zero rows.
pub(super) fn gather(data: CubeTensor, ids: CubeTensor) -> CubeTensor {
    called();
    let shape = data.shape();
    let (n, d, out_shape) = flat_rows(&shape, ids.meta.shape()[0]);
    let e = out_shape[0];
    if e == 0 || d == 0 {
        return full(out_shape, 0.0, data.dtype, &data);
    }
    let out = match data.dtype {
        DType::F32 => CubeBackend::float_empty(out_shape, &data.device, FloatDType::F32),
        other => CubeBackend::int_empty(out_shape, &data.device, IntDType::from(other)),
    };
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let types = [
        dtype_to_storage_type(data.dtype),
        dtype_to_storage_type(ids.dtype),
    ];
    let (count, dim) = grid(&data, e * d);
    let (x, i, o) = (
        data.clone().into_tensor_arg(),
        ids.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    kernels::gather_rows::launch(&data.client, count, dim, x, i, o, n, d, types);
    out
}
