//! The backends the generic suite runs on, and helpers to move data in and out of them.

#![allow(deprecated)] // Device::ndarray and NdArray: deprecated in Burn 0.22, still supported.

use burn::backend::NdArray;
use burn::tensor::{Bool, DType, Device, Int, Tensor, TensorData};
use burn_segment::{SegmentExtreme, SegmentPlan, SegmentReduction, Segments, composite};

/// How a target reaches the ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// The public functions, dispatched to the device's backend.
    Public,
    /// The composite defaults of `SegmentBackend`, run on NdArray primitives: what a backend
    /// without kernels (wgpu until its kernels land) executes.
    Composite,
    /// The same ops through a `SegmentPlan` of the ids (built per call here).
    Planned,
}

/// One backend of the generic suite.
#[derive(Clone, Debug)]
pub struct Target {
    pub name: &'static str,
    pub device: Device,
    pub path: Path,
}

impl Target {
    /// Whether f64 results on this target are trustworthy. wgpu reports f64 support on Mesa's
    /// lavapipe, but Burn's f64 ops there return f32 bit patterns read as f64 (seen with the
    /// composite softmax and the std backward), so its checks run in f32.
    pub fn f64(&self) -> bool {
        !self.name.contains("wgpu") && self.device.supports_dtype(burn::tensor::DType::F64)
    }

    /// Whether rows with out-of-range ids are dropped (the composite path and wgpu's kernels)
    /// rather than rejected with a panic (the CPU kernels).
    /// A plan rejects bad ids when it is built, on every backend.
    pub fn drops_bad_ids(&self) -> bool {
        self.path == Path::Composite || (self.path == Path::Public && self.is_cube())
    }

    /// Whether the target runs the CubeCL kernels (wgpu, CUDA).
    pub fn is_cube(&self) -> bool {
        self.name.contains("wgpu") || self.name.contains("cuda")
    }

    pub fn is_autodiff(&self) -> bool {
        self.name.contains("autodiff")
    }
}

/// Every backend this build can test; `wgpu` is added by the crate's `wgpu` feature where the
/// machine has a Vulkan adapter.
pub fn targets() -> Vec<Target> {
    #[allow(unused_mut)] // pushed to with the wgpu feature
    let mut t = vec![
        Target {
            name: "ndarray",
            device: Device::ndarray(),
            path: Path::Public,
        },
        Target {
            name: "flex",
            device: Device::flex(),
            path: Path::Public,
        },
        Target {
            name: "autodiff<ndarray>",
            device: Device::ndarray().autodiff(),
            path: Path::Public,
        },
        Target {
            name: "autodiff<flex>",
            device: Device::flex().autodiff(),
            path: Path::Public,
        },
        Target {
            name: "autodiff<flex> checkpointing",
            device: Device::flex().autodiff().gradient_checkpointing(),
            path: Path::Public,
        },
        Target {
            name: "composite(ndarray)",
            device: Device::ndarray(),
            path: Path::Composite,
        },
        Target {
            name: "planned(flex)",
            device: Device::flex(),
            path: Path::Planned,
        },
        Target {
            name: "planned(autodiff<ndarray>)",
            device: Device::ndarray().autodiff(),
            path: Path::Planned,
        },
    ];
    // Without a Vulkan adapter: skipped with one printed line (a failure with
    // BURN_GNN_REQUIRE_WGPU=1).
    #[cfg(feature = "wgpu")]
    if burn_segment::wgpu_test_targets() {
        let wgpu = Device::wgpu(burn::tensor::DeviceKind::DefaultDevice);
        t.push(Target {
            name: "wgpu",
            device: wgpu.clone(),
            path: Path::Public,
        });
        t.push(Target {
            name: "autodiff<wgpu>",
            device: wgpu.clone().autodiff(),
            path: Path::Public,
        });
        t.push(Target {
            name: "planned(autodiff<wgpu>)",
            device: wgpu.autodiff(),
            path: Path::Planned,
        });
    }
    // CUDA: with the `cuda` feature, on a machine with an NVIDIA driver, when asked for
    // (BURN_GNN_CUDA_TESTS=1; benches/gpu.sh sets it).
    #[cfg(feature = "cuda")]
    if std::env::var("BURN_GNN_CUDA_TESTS").as_deref() == Ok("1") {
        let cuda = Device::cuda(0);
        t.push(Target {
            name: "cuda",
            device: cuda.clone(),
            path: Path::Public,
        });
        t.push(Target {
            name: "autodiff<cuda>",
            device: cuda.clone().autodiff(),
            path: Path::Public,
        });
        t.push(Target {
            name: "planned(autodiff<cuda>)",
            device: cuda.autodiff(),
            path: Path::Planned,
        });
    }
    // BURN_GNN_ONLY_TARGETS=cuda keeps the targets whose name holds it (benches/gpu.sh).
    if let Ok(only) = std::env::var("BURN_GNN_ONLY_TARGETS") {
        t.retain(|target| target.name.contains(only.as_str()));
    }
    t
}

/// The autodiff targets (gradient checks; a check runs planned ops by building plans itself).
pub fn autodiff_targets() -> Vec<Target> {
    targets()
        .into_iter()
        .filter(|t| t.is_autodiff() && t.path == Path::Public)
        .collect()
}

/// The ops composed from the core ones.
#[derive(Clone, Copy, Debug)]
pub enum Derived {
    Mean,
    Variance,
    Std,
    Normalize(f64),
    Logsumexp,
    MaxOr(f64),
    MinOr(f64),
}

/// A derived op through `target`'s path (`Public` for the composite path, which has none).
pub fn derived(
    target: &Target,
    op: Derived,
    x: Tensor<2>,
    ids: Tensor<1, Int>,
    n: usize,
) -> Tensor<2> {
    use burn_segment as seg;
    use burn_segment::{SegmentStatistics, Segments};
    if target.path == Path::Planned {
        let p = plan(ids, n);
        return match op {
            Derived::Mean => p.mean(x),
            Derived::Variance => p.variance(x),
            Derived::Std => p.std(x),
            Derived::Normalize(eps) => p.normalize(x, eps),
            Derived::Logsumexp => p.logsumexp(x),
            Derived::MaxOr(c) => p.max_or_constant(x, c),
            Derived::MinOr(c) => p.min_or_constant(x, c),
        };
    }
    match op {
        Derived::Mean => seg::segment_mean(x, ids, n),
        Derived::Variance => seg::segment_variance(x, ids, n),
        Derived::Std => seg::segment_std(x, ids, n),
        Derived::Normalize(eps) => seg::segment_normalize(x, ids, n, eps),
        Derived::Logsumexp => seg::segment_logsumexp(x, ids, n),
        Derived::MaxOr(c) => seg::segment_max_or_constant(x, ids, n, c),
        Derived::MinOr(c) => seg::segment_min_or_constant(x, ids, n, c),
    }
}

pub fn floats<const D: usize>(
    values: &[f64],
    shape: [usize; D],
    device: &Device,
    dtype: DType,
) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), (device, dtype))
}

pub fn f32s<const D: usize>(values: &[f64], shape: [usize; D], device: &Device) -> Tensor<D> {
    floats(values, shape, device, DType::F32)
}

pub fn ints<const D: usize>(
    values: &[i64],
    shape: [usize; D],
    device: &Device,
    dtype: DType,
) -> Tensor<D, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), (device, dtype))
}

pub fn ints_2d(values: &[i64], shape: [usize; 2], device: &Device) -> Tensor<2, Int> {
    ints(values, shape, device, DType::I32)
}

pub fn ids(values: &[i64], device: &Device, i32_ids: bool) -> Tensor<1, Int> {
    let dtype = if i32_ids { DType::I32 } else { DType::I64 };
    ints(values, [values.len()], device, dtype)
}

pub fn bools<const D: usize>(
    values: &[bool],
    shape: [usize; D],
    device: &Device,
) -> Tensor<D, Bool> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), device)
}

pub fn read_bool<const D: usize>(t: Tensor<D, Bool>) -> Vec<bool> {
    t.into_data().iter::<bool>().collect()
}

pub fn read<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().iter::<f64>().collect()
}

pub fn read_int<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

/// f32 rounding of reference inputs, so references see what the backend sees.
pub fn as_f32(values: &[f64]) -> Vec<f64> {
    values.iter().map(|&v| v as f32 as f64).collect()
}

/// Asserts `got ≈ want` elementwise: NaN matches NaN, infinities match exactly.
#[track_caller]
pub fn assert_close(what: &str, got: &[f64], want: &[f64], rtol: f64, atol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= atol + rtol * w.abs()
        };
        assert!(
            ok,
            "{what}: element {i}: got {g}, want {w}\n got  {got:?}\n want {want:?}"
        );
    }
}

pub fn nd<const D: usize, K>(
    t: Tensor<D, K>,
) -> <K as burn::tensor::BackendPrimitive<NdArray>>::Primitive
where
    K: burn::tensor::BackendPrimitive<NdArray> + burn::tensor::kind::Basic,
{
    t.try_into_primitive::<NdArray>()
        .expect("an ndarray tensor")
}

/// A tensor kind the suite reduces, with its composite default on NdArray.
pub trait Kind: burn_segment::SegmentKind + burn::tensor::BackendPrimitive<NdArray> {
    /// The kind's composite reduction.
    fn composite_reduce(
        data: Tensor<2, Self>,
        ids: Tensor<1, Int>,
        n: usize,
        r: SegmentReduction,
    ) -> Tensor<2, Self>;
    /// The kind's composite max/min with arguments.
    fn composite_extreme(
        data: Tensor<2, Self>,
        ids: Tensor<1, Int>,
        n: usize,
        e: SegmentExtreme,
    ) -> (Tensor<2, Self>, Tensor<2, Int>);
}

// The two impls differ only in which composite they call (float_* or int_*).
macro_rules! kind {
    ($kind:ty, $reduce:ident, $extreme:ident) => {
        impl Kind for $kind {
            fn composite_reduce(
                data: Tensor<2, Self>,
                ids: Tensor<1, Int>,
                n: usize,
                r: SegmentReduction,
            ) -> Tensor<2, Self> {
                Tensor::from_primitive::<NdArray>(composite::$reduce::<NdArray>(
                    nd(data),
                    nd(ids),
                    n,
                    r,
                ))
            }
            fn composite_extreme(
                data: Tensor<2, Self>,
                ids: Tensor<1, Int>,
                n: usize,
                e: SegmentExtreme,
            ) -> (Tensor<2, Self>, Tensor<2, Int>) {
                let (v, a) = composite::$extreme::<NdArray>(nd(data), nd(ids), n, e);
                (
                    Tensor::from_primitive::<NdArray>(v),
                    Tensor::from_primitive::<NdArray>(a),
                )
            }
        }
    };
}
kind!(burn::tensor::Float, float_reduce, float_extreme);
kind!(Int, int_reduce, int_extreme);

/// A float or integer reduction through `target`'s path.
pub fn reduce<K: Kind>(
    target: &Target,
    data: Tensor<2, K>,
    ids: Tensor<1, Int>,
    n: usize,
    r: SegmentReduction,
) -> Tensor<2, K> {
    match target.path {
        Path::Public => burn_segment::segment_reduce(data, ids, n, r),
        Path::Planned => plan(ids, n).reduce(data, r),
        Path::Composite => K::composite_reduce(data, ids, n, r),
    }
}

/// Float or integer max/min with arguments through `target`'s path.
pub fn extreme<K: Kind>(
    target: &Target,
    data: Tensor<2, K>,
    ids: Tensor<1, Int>,
    n: usize,
    e: SegmentExtreme,
) -> (Tensor<2, K>, Tensor<2, Int>) {
    match (target.path, e) {
        (Path::Public, SegmentExtreme::Max) => burn_segment::segment_max_with_indices(data, ids, n),
        (Path::Public, SegmentExtreme::Min) => burn_segment::segment_min_with_indices(data, ids, n),
        (Path::Planned, SegmentExtreme::Max) => plan(ids, n).max_with_indices(data),
        (Path::Planned, SegmentExtreme::Min) => plan(ids, n).min_with_indices(data),
        (Path::Composite, _) => K::composite_extreme(data, ids, n, e),
    }
}

/// Softmax through `target`'s path.
pub fn softmax(target: &Target, data: Tensor<2>, ids: Tensor<1, Int>, n: usize) -> Tensor<2> {
    match target.path {
        Path::Public => burn_segment::segment_softmax(data, ids, n),
        Path::Planned => plan(ids, n).softmax(data),
        Path::Composite => {
            Tensor::from_primitive::<NdArray>(composite::softmax::<NdArray>(nd(data), nd(ids), n))
        }
    }
}

/// Counts through `target`'s path.
pub fn count(target: &Target, ids: Tensor<1, Int>, n: usize) -> Tensor<1, Int> {
    match target.path {
        Path::Public => burn_segment::segment_count(ids, n),
        Path::Planned => plan(ids, n).count(),
        Path::Composite => {
            Tensor::from_primitive::<NdArray>(composite::count::<NdArray>(nd(ids), n))
        }
    }
}

/// Fused SpMM through `target`'s path (`weights` given explicitly).
pub fn spmm(
    target: &Target,
    x: Tensor<2>,
    senders: Tensor<1, Int>,
    receivers: Tensor<1, Int>,
    weights: Option<Tensor<2>>,
    n: usize,
) -> Tensor<2> {
    match (target.path, weights) {
        (Path::Public, w) => burn_segment::spmm(x, senders, receivers, w, n),
        (Path::Planned, w) => {
            let rows = x.dims()[0];
            SegmentPlan::spmm(x, &plan(senders, rows), &plan(receivers, n), w)
        }
        (Path::Composite, Some(w)) => Tensor::from_primitive::<NdArray>(
            composite::spmm::<NdArray>(nd(x), nd(w), nd(senders), nd(receivers), n),
        ),
        (Path::Composite, None) => {
            let w = Tensor::<2>::ones([senders.dims()[0], 1], (&x.device(), x.dtype()));
            spmm(target, x, senders, receivers, Some(w), n)
        }
    }
}

/// Fused SDDMM through `target`'s path.
pub fn sddmm(
    target: &Target,
    a: Tensor<2>,
    b: Tensor<2>,
    ai: Tensor<1, Int>,
    bi: Tensor<1, Int>,
    heads: usize,
) -> Tensor<2> {
    match target.path {
        Path::Public => burn_segment::sddmm(a, b, ai, bi, heads),
        Path::Planned => {
            let (na, nb) = (a.dims()[0], b.dims()[0]);
            SegmentPlan::sddmm(a, b, &plan(ai, na), &plan(bi, nb), heads)
        }
        Path::Composite => Tensor::from_primitive::<NdArray>(composite::sddmm::<NdArray>(
            nd(a),
            nd(b),
            nd(ai),
            nd(bi),
            heads,
        )),
    }
}

/// Fused attention softmax through `target`'s path.
pub fn attention(
    target: &Target,
    src: Tensor<2>,
    dst: Tensor<2>,
    s: Tensor<1, Int>,
    r: Tensor<1, Int>,
    bias: Option<Tensor<2>>,
    slope: f64,
) -> Tensor<2> {
    match target.path {
        Path::Public => burn_segment::attention_softmax(src, dst, s, r, bias, slope),
        Path::Planned => {
            let (ns, nd) = (src.dims()[0], dst.dims()[0]);
            SegmentPlan::attention_softmax(src, dst, &plan(s, ns), &plan(r, nd), bias, slope)
        }
        Path::Composite => {
            let bias = bias
                .unwrap_or_else(|| Tensor::zeros([s.dims()[0], 1], (&src.device(), src.dtype())));
            Tensor::from_primitive::<NdArray>(composite::attention_softmax::<NdArray>(
                nd(src),
                nd(dst),
                nd(bias),
                nd(s),
                nd(r),
                slope,
            ))
        }
    }
}

/// The plan of `ids` for `n` segments; panics with the plan's error (which names the bad id as
/// the CPU kernels' panic does).
pub fn plan(ids: Tensor<1, Int>, n: usize) -> SegmentPlan {
    SegmentPlan::new(ids, n).unwrap_or_else(|e| panic!("burn-segment: {e}"))
}

/// The wgpu kernels' call count (0 without them): a test that
/// compares it before and after a call proves the kernel ran (other tests may add calls too).
pub fn cube_calls() -> usize {
    #[cfg(feature = "cube")]
    return burn_segment::wgpu_kernel_calls();
    #[cfg(not(feature = "cube"))]
    0
}
