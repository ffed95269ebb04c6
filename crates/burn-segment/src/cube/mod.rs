//! The wgpu backend (CubeCL, also reached through `Fusion`): hand-written kernels for f32 and
//! i32 data with i32 or i64 ids; other dtypes take the composite defaults.
//!
//! Each call first runs two small kernels: one sets a device flag when the ids are not sorted,
//! one finds the segment offsets by binary search (when they are). Then both strategies are
//! launched and the flag picks the one that works, so the host never waits on the device:
//!
//! - **sorted ids** (`partition_*`, receiver-sorted graphs): CSR kernels, one unit per output
//!   element folding its segment's rows in row order, with no atomics. Results are bitwise
//!   repeatable, and equal to the CPU kernels' for sum, prod, max, min and count.
//! - **unsorted ids**: atomics. Sums use float atomic adds where the device has them (the order
//!   of the adds, and so the last bits of a sum, may change from run to run); otherwise, and for
//!   products, one unit per column walks the rows in order (deterministic, less parallel). Max /
//!   min use integer atomic max / min on order-preserving keys of the f32 bits, and the argument
//!   an atomic min over the rows that attain them, so they are exact and repeatable. Softmax is
//!   max (keys), `exp(x - max)`, sum (as above), divide.
//!
//! Rows whose id is outside `[0, num_segments)` are dropped inside every kernel (their softmax
//! output is 0): nothing is ever written out of bounds, and nothing panics, unlike the CPU
//! backends. Max / min of `-0.0` and `0.0` give `0.0` (they share a key).

mod kernels;

use std::sync::atomic::{AtomicUsize, Ordering};

use burn::backend::cubecl::{dtype_to_elem_type, dtype_to_storage_type};
use burn::backend::ops::{FloatTensorOps, IntTensorOps};
use burn::backend::{
    Scalar, TensorMetadata,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, FloatDType, IntDType, Shape};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise, features::AtomicUsage, ir::Type};

use crate::composite::{self, int_identity};
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// How many segment ops the wgpu kernels have executed in this process. Tests use it to prove
/// that calls through `Fusion` reach the kernels rather than a composite default.
#[doc(hidden)]
pub fn wgpu_kernel_calls() -> usize {
    CALLS.load(Ordering::Relaxed)
}

fn called() {
    CALLS.fetch_add(1, Ordering::Relaxed);
}

/// Launch geometry for one unit per element of `units`.
fn grid(t: &CubeTensor, units: usize) -> (CubeCount, CubeDim) {
    let dim = CubeDim::new(&t.client, units);
    (calculate_cube_count_elemwise(&t.client, units, dim), dim)
}

/// `[E, ...]` -> (`E`, product of the trailing dims, `[N, ...]`).
fn dims(shape: &Shape, n: usize) -> (usize, usize, Shape) {
    let dims = shape.as_slice();
    let d = dims[1..].iter().product();
    let mut out = dims.to_vec();
    out[0] = n;
    (dims[0], d, Shape::from(out))
}

fn ids_ok(ids: &CubeTensor) -> bool {
    matches!(ids.dtype, DType::I32 | DType::I64)
}

/// A tensor of `shape` filled with `value` (an f32 or an integer dtype).
fn full(shape: Shape, value: f64, dtype: DType, like: &CubeTensor) -> CubeTensor {
    match dtype {
        DType::F32 => {
            CubeBackend::float_full(shape, Scalar::Float(value), &like.device, FloatDType::F32)
        }
        other => CubeBackend::int_full(
            shape,
            Scalar::Int(value as i64),
            &like.device,
            IntDType::from(other),
        ),
    }
}

/// Whether the device adds `dtype` atomically in global memory.
fn adds_atomically(t: &CubeTensor) -> bool {
    t.client
        .properties()
        .atomic_type_usage(Type::atomic(dtype_to_elem_type(t.dtype)))
        .contains(AtomicUsage::Add)
}

/// The unsorted flag and, for sorted ids, the CSR offsets `[n + 1]`.
struct Plan {
    flag: CubeTensor,
    offsets: CubeTensor,
}

fn plan(ids: &CubeTensor, n: usize) -> Plan {
    let e = ids.meta.shape()[0];
    let it = dtype_to_storage_type(ids.dtype);
    let flag = full(Shape::new([1]), 0.0, DType::U32, ids);
    if e >= 2 {
        let (count, dim) = grid(ids, e - 1);
        kernels::unsorted_flag::launch(
            &ids.client,
            count,
            dim,
            ids.clone().into_tensor_arg(),
            flag.clone().into_tensor_arg(),
            it,
        );
    }
    let offsets = CubeBackend::int_empty(Shape::new([n + 1]), &ids.device, IntDType::U32);
    let (count, dim) = grid(ids, n + 1);
    kernels::csr_offsets::launch(
        &ids.client,
        count,
        dim,
        ids.clone().into_tensor_arg(),
        flag.clone().into_tensor_arg(),
        offsets.clone().into_tensor_arg(),
        n,
        it,
    );
    Plan { flag, offsets }
}

/// `out += data` per segment (or `*=`), for the unsorted path.
fn fold_unsorted(
    data: &CubeTensor,
    ids: &CubeTensor,
    flag: &CubeTensor,
    out: &CubeTensor,
    n: usize,
    prod: bool,
) {
    let (e, d, _) = dims(&data.shape(), n);
    let types = [
        dtype_to_storage_type(data.dtype),
        dtype_to_storage_type(ids.dtype),
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
            args.1,
            args.2,
            out.clone().into_tensor_arg(),
            n,
            d,
            types,
        );
    } else {
        let (count, dim) = grid(data, d);
        kernels::column_sum_prod::launch(
            &data.client,
            count,
            dim,
            args.0,
            args.1,
            args.2,
            out.clone().into_tensor_arg(),
            n,
            d,
            prod,
            types,
        );
    }
}

/// Segment sum or product of f32 or i32 rows.
fn sum_prod(data: CubeTensor, ids: CubeTensor, n: usize, prod: bool) -> CubeTensor {
    called();
    let (e, d, out_shape) = dims(&data.shape(), n);
    let out = full(out_shape, if prod { 1.0 } else { 0.0 }, data.dtype, &data);
    if e == 0 || n == 0 || d == 0 {
        return out;
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let p = plan(&ids, n);
    let (count, dim) = grid(&data, n * d);
    kernels::csr_sum_prod::launch(
        &data.client,
        count,
        dim,
        data.clone().into_tensor_arg(),
        p.offsets.into_tensor_arg(),
        p.flag.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
        d,
        prod,
        dtype_to_storage_type(data.dtype),
    );
    fold_unsorted(&data, &ids, &p.flag, &out, n, prod);
    out
}

/// Segment max or min of f32 or i32 rows, with the first row attaining it (ids' dtype).
fn extreme(
    data: CubeTensor,
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
    let (e, d, out_shape) = dims(&data.shape(), n);
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
        kernels::csr_extreme_f32::launch(&client, count, dim, x, offsets, flag, o, a, d, max, it);
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
            i,
            f,
            keys.clone().into_tensor_arg(),
            n,
            d,
            max,
            it,
        );
        let (x, i, f) = arg_();
        let (k, r) = (
            keys.clone().into_tensor_arg(),
            rows.clone().into_tensor_arg(),
        );
        kernels::atomic_arg_f32::launch(&client, count, dim, x, i, f, k, r, n, d, max, it);
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

/// Segment softmax of f32 rows.
fn softmax(data: CubeTensor, ids: CubeTensor, n: usize) -> CubeTensor {
    called();
    let (e, d, seg_shape) = dims(&data.shape(), n);
    let out = full(data.shape(), 0.0, DType::F32, &data);
    if e == 0 || n == 0 || d == 0 {
        return out;
    }
    let (data, ids) = (into_contiguous(data), into_contiguous(ids));
    let p = plan(&ids, n);
    let it = dtype_to_storage_type(ids.dtype);
    let client = data.client.clone();
    let f = || p.flag.clone().into_tensor_arg();

    let (count, dim) = grid(&data, n * d);
    let (x, offsets, o) = (
        data.clone().into_tensor_arg(),
        p.offsets.clone().into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    kernels::csr_softmax::launch(&client, count, dim, x, offsets, f(), o, n, d);

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
    kernels::atomic_key_extreme::launch(&client, count.clone(), dim, x, i, f(), k, n, d, true, it);
    let (x, i, k, o) = (
        data.clone().into_tensor_arg(),
        ids.clone().into_tensor_arg(),
        keys.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    kernels::softmax_exp::launch(&client, count.clone(), dim, x, i, f(), k, o, n, d, it);
    let sums = full(seg_shape, 0.0, DType::F32, &data);
    fold_unsorted(&out, &ids, &p.flag, &sums, n, false);
    let (i, s, o) = (
        ids.clone().into_tensor_arg(),
        sums.into_tensor_arg(),
        out.clone().into_tensor_arg(),
    );
    kernels::softmax_div::launch(&client, count, dim, i, f(), s, o, n, d, it);
    out
}

/// Number of rows per segment, in the ids' dtype.
fn count(ids: CubeTensor, n: usize) -> CubeTensor {
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
    match ids.dtype {
        DType::I32 => counts,
        other => CubeBackend::int_cast(counts, IntDType::from(other)),
    }
}

impl SegmentBackend for CubeBackend {
    fn segment_reduce(
        data: FloatTensor<Self>,
        ids: IntTensor<Self>,
        n: usize,
        r: SegmentReduction,
    ) -> FloatTensor<Self> {
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::float_reduce::<Self>(data, ids, n, r);
        }
        match r {
            SegmentReduction::Sum => sum_prod(data, ids, n, false),
            SegmentReduction::Prod => sum_prod(data, ids, n, true),
            SegmentReduction::Max => extreme(data, ids, n, SegmentExtreme::Max).0,
            SegmentReduction::Min => extreme(data, ids, n, SegmentExtreme::Min).0,
        }
    }

    fn segment_extreme(
        data: FloatTensor<Self>,
        ids: IntTensor<Self>,
        n: usize,
        which: SegmentExtreme,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::float_extreme::<Self>(data, ids, n, which);
        }
        extreme(data, ids, n, which)
    }

    fn segment_softmax(
        data: FloatTensor<Self>,
        ids: IntTensor<Self>,
        n: usize,
    ) -> FloatTensor<Self> {
        if data.dtype != DType::F32 || !ids_ok(&ids) {
            return composite::softmax::<Self>(data, ids, n);
        }
        softmax(data, ids, n)
    }

    fn int_segment_reduce(
        data: IntTensor<Self>,
        ids: IntTensor<Self>,
        n: usize,
        r: SegmentReduction,
    ) -> IntTensor<Self> {
        if data.dtype != DType::I32 || !ids_ok(&ids) {
            return composite::int_reduce::<Self>(data, ids, n, r);
        }
        match r {
            SegmentReduction::Sum => sum_prod(data, ids, n, false),
            SegmentReduction::Prod => sum_prod(data, ids, n, true),
            SegmentReduction::Max => extreme(data, ids, n, SegmentExtreme::Max).0,
            SegmentReduction::Min => extreme(data, ids, n, SegmentExtreme::Min).0,
        }
    }

    fn int_segment_extreme(
        data: IntTensor<Self>,
        ids: IntTensor<Self>,
        n: usize,
        which: SegmentExtreme,
    ) -> (IntTensor<Self>, IntTensor<Self>) {
        if data.dtype != DType::I32 || !ids_ok(&ids) {
            return composite::int_extreme::<Self>(data, ids, n, which);
        }
        extreme(data, ids, n, which)
    }

    fn segment_count(ids: IntTensor<Self>, n: usize) -> IntTensor<Self> {
        if !ids_ok(&ids) {
            return composite::count::<Self>(ids, n);
        }
        count(ids, n)
    }
}
