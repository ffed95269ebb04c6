//! Top-k per segment and column: the `k` largest (or smallest) rows of each segment with their
//! row indices, ties to the smaller row, NaN above every number.
//!
//! One backend op, [`TopkBackend::segment_topk`], chooses the rows and reads their values: an
//! extension of its own, the whole op in this file (the trait with its default, the CPU and
//! `Autodiff` implementations, the public function) beside its kernels (`host/topk.rs`, which
//! the default and the CPU backends run, and `cube/topk.rs` for wgpu, `k ≤ 32` over sorted or
//! planned ids) and its reference. The default chooses on the host (a device sync on a GPU). Where the data
//! is tracked, the values are gathered from it at the rows on its device, so gradients reach the
//! selected rows (and only them). Every backend selects the same rows.

use burn::backend::{
    AutodiffBackend, Backend, Dispatch, Scalar, TensorMetadata, backend_extension,
    tensor::{FloatTensor, IntTensor},
};
use burn::tensor::{DType, Int, IntDType, Shape, Tensor, TensorData};

use crate::composite::read_host;
use crate::cpu::CpuIndex;
use crate::cpu::tensor::CpuTensor;
use crate::host::{CsrPlan, picked_values, topk_rows};
use crate::plan::SegmentIndex;
use crate::{SegmentIds, Segments};

/// Top-k per segment as a backend extension: one method, a default that chooses on the host,
/// kernels as overrides.
#[backend_extension(
    Autodiff,
    NdArray,
    Flex,
    Cube: cfg(feature = "cube"),
    Fusion: cfg(feature = "cube")
)]
pub trait TopkBackend: Backend {
    /// The `k` largest (`largest`) or smallest rows of each segment of `data: [E, C]`, per
    /// column and in rank order: values `[N, k, C]` and rows `[N, k, C]` in the ids' dtype.
    /// Ties go to the smaller row, NaN orders above every number, and a segment of fewer than
    /// `k` rows fills with `∓inf` and row -1. The values carry no gradient
    /// (`SegmentStatistics::topk` gathers tracked data at the rows). The default chooses on the
    /// host (one read of the data and the ids: a sync on a GPU).
    #[fusion(meta = |data, index, k, _largest| topk_specs(data, index, *k))]
    fn segment_topk(
        data: FloatTensor<Self>,
        #[extension_type] index: SegmentIndex<Self>,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let (ids, n) = index.into_ids();
        host_topk::<Self>(data, ids, n, k, largest)
    }
}

/// What `Fusion` records for `segment_topk`: values `[N, k, C]` like the data, rows like the
/// ids.
#[cfg(feature = "cube")]
fn topk_specs(
    data: &burn::backend::fusion::custom::TensorSpec,
    index: &crate::plan::SegmentIndexMetadata,
    k: usize,
) -> (
    burn::backend::fusion::custom::TensorSpec,
    burn::backend::fusion::custom::TensorSpec,
) {
    use burn::backend::fusion::custom::TensorSpec;
    let shape = Shape::new([index.num_segments(), k, data.shape[1]]);
    (
        TensorSpec::new(shape.clone(), data.dtype),
        TensorSpec::new(shape, index.segment_ids().dtype),
    )
}

/// The CPU backends run the host kernel on their data in place (f32, f64; the default for the
/// rest). A macro only because NdArray and Flex are two types.
macro_rules! impl_cpu_topk {
    ($($backend:ty),*) => {$(
        impl TopkBackend for $backend {
            fn segment_topk(
                data: FloatTensor<Self>,
                index: SegmentIndex<Self>,
                k: usize,
                largest: bool,
            ) -> (FloatTensor<Self>, IntTensor<Self>) {
                cpu_topk(data, index, k, largest)
            }
        }
    )*};
}
impl_cpu_topk!(burn::backend::NdArray, burn::backend::Flex);

/// Top-k's values carry no gradient (`SegmentStatistics::topk` gathers tracked data at the
/// rows): the inner backend's op runs on the untracked data.
impl<B: TopkBackend, C: burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy>
    TopkBackend for burn::backend::Autodiff<B, C>
{
    fn segment_topk(
        data: FloatTensor<Self>,
        index: SegmentIndex<Self>,
        k: usize,
        largest: bool,
    ) -> (FloatTensor<Self>, IntTensor<Self>) {
        let data = data.into_primitive();
        let (values, rows) = B::segment_topk(data, index.map::<B>(), k, largest);
        (Self::from_inner(values), rows)
    }
}

/// Top-k values and rows (`[N, k, C]`, rows in the ids' dtype) with the data read in place and
/// the outputs built from their vectors: no host round trip, and a plan's grouping reused.
fn cpu_topk<
    T: CpuTensor + 'static,
    B: Backend<FloatTensorPrimitive = T, IntTensorPrimitive = T>,
>(
    data: T,
    ids: SegmentIndex<B>,
    k: usize,
    largest: bool,
) -> (T, T) {
    let shape = data.shape();
    let (e, c) = (shape[0], shape[1]);
    if !matches!(data.dtype(), DType::F32 | DType::F64) || k == 0 || e == 0 || c == 0 {
        let (ids, n) = ids.into_ids();
        return host_topk::<B>(data, ids, n, k, largest);
    }
    let (plan, dtype) = (ids.csr(), ids.dtype());
    let out_shape = burn::tensor::Shape::new([plan.num_segments(), k, c]);
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let (rows, values) = match data.dtype() {
        DType::F32 => {
            let x = data.values::<f32>();
            let rows = topk_rows(&x, c, &plan, k, largest);
            let picked = picked_values(&x, &rows, c, fill as f32);
            (rows, T::from_values(picked, out_shape.clone()))
        }
        _ => {
            let x = data.values::<f64>();
            let rows = topk_rows(&x, c, &plan, k, largest);
            let picked = picked_values(&x, &rows, c, fill);
            (rows, T::from_values(picked, out_shape.clone()))
        }
    };
    let rows = match dtype {
        DType::I32 => T::from_values(rows.iter().map(|&r| r as i32).collect(), out_shape),
        _ => T::from_values(rows, out_shape),
    };
    (values, rows)
}

/// Values `[N, k, C]` and rows `[N, k, C]` (the ids' dtype) of the `k` largest (or smallest)
/// rows of each segment, per column (see [`TopkBackend::segment_topk`]), chosen on the host.
pub(crate) fn host_topk<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    k: usize,
    largest: bool,
) -> (FloatTensor<B>, IntTensor<B>) {
    let (shape, dtype, device) = (data.shape(), data.dtype(), data.device());
    let ([e, c], ids_dtype) = ([shape[0], shape[1]], IntDType::from(ids.dtype()));
    let out_shape = Shape::new([n, k, c]);
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    if k == 0 || n == 0 || c == 0 || e == 0 {
        // Nothing to select (and no kernel launched on an empty tensor).
        let values = B::float_full(
            out_shape.clone(),
            Scalar::Float(fill),
            &device,
            dtype.into(),
        );
        let rows = B::int_full(out_shape, Scalar::Int(-1), &device, ids_dtype);
        return (values, rows);
    }
    let host_ids: Vec<i64> = read_host(B::int_into_data(ids), "top-k")
        .iter::<i64>()
        .collect();
    let plan = CsrPlan::new(&host_ids, n);
    let values = read_host(B::float_into_data(data), "top-k");
    let (rows, picked) = match values.dtype() {
        DType::F32 => {
            let values = values.as_slice::<f32>().expect("f32 data");
            let rows = topk_rows(values, c, &plan, k, largest);
            let picked = picked_values(values, &rows, c, fill as f32);
            (rows, TensorData::new(picked, out_shape.clone()))
        }
        _ => {
            let values: Vec<f64> = values.iter::<f64>().collect();
            let rows = topk_rows(&values, c, &plan, k, largest);
            let picked = picked_values(&values, &rows, c, fill);
            let picked = TensorData::new(picked, out_shape.clone()).convert_dtype(dtype);
            (rows, picked)
        }
    };
    let rows = TensorData::new(rows, out_shape).convert_dtype(ids_dtype.into());
    (
        B::float_from_data(picked, &device),
        B::int_from_data(rows, &device),
    )
}

/// The `k` largest (or smallest) rows of each segment, per column: values `[N, k, C]` and rows
/// `[N, k, C]` Int, as [`SegmentStatistics::topk`](crate::SegmentStatistics::topk) (ties to the smaller row, NaN above every number,
/// `∓inf` and -1 where a segment has fewer than `k` rows).
///
/// # Shapes
/// `data: [E, C]`, `segment_ids: [E]` -> `([N, k, C], [N, k, C] Int)`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::flex();
/// let x = Tensor::<2>::from_floats([[3.0], [f32::NAN], [3.0], [7.0], [1.0]], &device);
/// let ids = Tensor::<1, Int>::from_ints([0, 0, 0, 1, 2], &device);
/// let (values, rows) = burn_segment::segment_topk(x, ids, 3, 2, true);
/// let rows: Vec<i64> = rows.into_data().iter::<i64>().collect();
/// assert_eq!(rows, [1, 0, 3, -1, 4, -1]); // NaN first, then the first of the tied 3s
/// let values: Vec<f32> = values.into_data().iter::<f32>().collect();
/// assert!(values[0].is_nan() && values[1] == 3.0 && values[3] == f32::NEG_INFINITY);
/// ```
pub fn segment_topk(
    data: Tensor<2>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    k: usize,
    largest: bool,
) -> (Tensor<3>, Tensor<3, Int>) {
    topk(
        &SegmentIds::new(segment_ids, num_segments),
        data,
        k,
        largest,
    )
}

/// [`segment_topk`] over `g`, whose backend op gives the rows (and the values of untracked
/// data): tracked data is gathered at the rows on its own device, so gradients reach the
/// selected rows, and only them.
pub(crate) fn topk<S: Segments + ?Sized>(
    g: &S,
    data: Tensor<2>,
    k: usize,
    largest: bool,
) -> (Tensor<3>, Tensor<3, Int>) {
    g.check_rows(data.dims()[0]);
    let [_, c] = data.dims();
    let n = g.num_segments();
    let untracked = data.clone().detach().into_dispatch();
    let (values, rows) = Dispatch::segment_topk(untracked, g.index(), k, largest);
    let (values, rows) = (Tensor::from_dispatch(values), Tensor::from_dispatch(rows));
    if !data.is_tracked() || k == 0 || n == 0 || c == 0 || data.dims()[0] == 0 {
        return (values, rows);
    }
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let picked = rows.clone().reshape([n * k, c]).clamp_min(0);
    let values = data.gather(0, picked).reshape([n, k, c]);
    (values.mask_fill(rows.clone().equal_elem(-1), fill), rows)
}
