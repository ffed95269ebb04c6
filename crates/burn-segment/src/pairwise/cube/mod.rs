//! The pairwise ops on CubeCL devices, for f32 inputs and i32 / i64 labels under masks that
//! are a conjunction of a group test, bands, one excluded band (`exclude_self`) and
//! `within(r)` — every mask the graph constructors and `GpsConv` build. Each kernel streams the
//! pairs of one row (or column) of its own in order, as the CPU kernels do, skipping to its
//! group's span with sorted groups, so results are the same on every run; any other mask or
//! dtype takes the composite / host defaults.
//!
//! - `select`: the top `k ≤ 32` columns per row, kept in rank order in the row's own output
//!   slots (nothing read back to the host).
//! - `matmul`: `pairwise_matmul` forward (one unit per row, online softmax) and backward (one
//!   unit per row for `x`'s gradient, one per column for `y`'s and `v`'s).
//!
//! Scores are f32 (the host selection's are f64): pairs apart by less than f32's precision
//! may rank as ties (the smaller column first).

mod matmul;
mod select;

use burn::backend::TensorMetadata;
use burn::backend::ops::IntTensorOps;
use burn::backend::tensor::{FloatTensor, IntTensor};
use burn::tensor::{DType, TensorData};
use burn_cubecl::{CubeBackend, kernel::into_contiguous, tensor::CubeTensor};
use cubecl::prelude::*;
use cubecl::{CubeCount, CubeDim, calculate_cube_count_elemwise};

use super::{PairMask, PairScore, PairSelection, PairSpec, PairWeight, PairwiseBackend};
use super::{composite, select as host};
use crate::cube::csr::{NAN_MAX_KEY, key_of};

/// A mask the kernels evaluate: the conjunction of its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Conjunction {
    /// `Some(true)`: same labels; `Some(false)`: different labels.
    group: Option<bool>,
    /// `lo <= j - i <= hi` (the intersection of every band).
    band: Option<(i64, i64)>,
    /// Not `lo <= j - i <= hi` (one excluded band, e.g. the diagonal).
    not_band: Option<(i64, i64)>,
    /// `score < r` (the smallest radius).
    within: Option<f64>,
}

impl Conjunction {
    /// `mask` as a conjunction, or `None` when it has another form (`|`, `!` of a non-band).
    fn of(mask: &Option<PairMask>) -> Option<Self> {
        let mut c = Self::default();
        match mask {
            Some(m) => c.add(m).then_some(c),
            None => Some(c),
        }
    }

    fn add(&mut self, mask: &PairMask) -> bool {
        match mask {
            PairMask::And(a, b) => self.add(a) && self.add(b),
            PairMask::Group { same } => {
                let agrees = self.group.is_none_or(|g| g == *same);
                self.group = Some(*same);
                agrees
            }
            PairMask::Band { lower, upper } => {
                let (lo, hi) = (lower.saturating_neg(), *upper);
                self.band = Some(match self.band {
                    Some((l, h)) => (l.max(lo), h.min(hi)),
                    None => (lo, hi),
                });
                true
            }
            PairMask::Not(inner) => match (&**inner, self.not_band) {
                (PairMask::Band { lower, upper }, None) => {
                    self.not_band = Some((lower.saturating_neg(), *upper));
                    true
                }
                _ => false,
            },
            PairMask::Within(r) => {
                self.within = Some(self.within.map_or(*r, |w| w.min(*r)));
                true
            }
            PairMask::Or(..) => false,
        }
    }
}

/// A band's bounds on `j - i` as i32 (the kernels' width; rows fit in i32).
fn band32((lo, hi): (i64, i64)) -> (i32, i32) {
    let clamp = |v: i64| v.clamp(i32::MIN as i64 + 1, i32::MAX as i64) as i32;
    (clamp(lo), clamp(hi))
}

/// The mask's runtime parameters: bands (unused when absent) and the radius.
#[derive(CubeLaunch, CubeType, Clone, Copy)]
struct MaskArgs {
    band_lo: i32,
    band_hi: i32,
    not_lo: i32,
    not_hi: i32,
    radius: f32,
}

/// The launch form of a job's [`MaskArgs`].
macro_rules! mask_args {
    ($job:expr) => {
        MaskArgsLaunch::new(
            $job.band.0,
            $job.band.1,
            $job.not_band.0,
            $job.not_band.1,
            $job.radius,
        )
    };
}
use mask_args;

/// Which score and mask parts a kernel compiles in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Pairs {
    dot: bool,
    sqrt: bool,
    /// Each row of `x` visits a span of `y`'s rows (sorted groups).
    spans: bool,
    /// 0: no group test, 1: same labels, 2: different labels.
    group: u32,
    band: bool,
    not_band: bool,
    within: bool,
}

/// The inputs of a kernel call, contiguous, with the mask's launch form.
struct Job {
    x: CubeTensor,
    y: CubeTensor,
    lx: CubeTensor,
    ly: CubeTensor,
    /// `[2N]`: `start, end` of each row's span of `y` (`[2]` unused without spans).
    spans: CubeTensor,
    band: (i32, i32),
    not_band: (i32, i32),
    radius: f32,
    pairs: Pairs,
}

impl Job {
    /// The job for `spec`, or `None` for a mask, dtype or size the kernels do not take.
    fn new([x, y]: [&CubeTensor; 2], [lx, ly]: [&CubeTensor; 2], spec: &PairSpec) -> Option<Self> {
        let mask = Conjunction::of(&spec.mask)?;
        let ids = matches!(lx.dtype, DType::I32 | DType::I64) && lx.dtype == ly.dtype;
        let rows_fit = x.shape()[0].max(y.shape()[0]) < i32::MAX as usize;
        if !ids || !rows_fit || x.dtype != DType::F32 || y.dtype != DType::F32 {
            return None;
        }
        let spans: Vec<u32> = match &spec.column_spans {
            Some(s) => s.iter().flat_map(|&[a, b]| [a as u32, b as u32]).collect(),
            None => vec![0, 0],
        };
        let len = spans.len();
        let spans = CubeBackend::int_from_data(TensorData::new(spans, [len]), &x.device);
        let pairs = Pairs {
            dot: spec.score == PairScore::Dot,
            sqrt: spec.score == PairScore::Euclidean,
            spans: spec.column_spans.is_some(),
            group: match mask.group {
                None => 0,
                Some(true) => 1,
                Some(false) => 2,
            },
            band: mask.band.is_some(),
            not_band: mask.not_band.is_some(),
            within: mask.within.is_some(),
        };
        Some(Self {
            x: into_contiguous(x.clone()),
            y: into_contiguous(y.clone()),
            lx: into_contiguous(lx.clone()),
            ly: into_contiguous(ly.clone()),
            spans,
            band: band32(mask.band.unwrap_or((0, 0))),
            not_band: band32(mask.not_band.unwrap_or((0, 0))),
            radius: mask.within.unwrap_or(0.0) as f32,
            pairs,
        })
    }

    fn n(&self) -> usize {
        self.x.shape()[0]
    }

    fn m(&self) -> usize {
        self.y.shape()[0]
    }

    fn d(&self) -> usize {
        self.x.shape()[1]
    }

    /// Launch geometry for one unit per element of `units`.
    fn grid(&self, units: usize) -> (CubeCount, CubeDim) {
        let dim = CubeDim::new(&self.x.client, units);
        (
            calculate_cube_count_elemwise(&self.x.client, units, dim),
            dim,
        )
    }
}

/// The span of `y`'s rows that row `i` visits.
#[cube]
fn columns_of(spans: &Tensor<u32>, i: usize, m: usize, #[comptime] p: Pairs) -> (usize, usize) {
    let mut range = (0usize, m);
    if p.spans {
        range = (
            usize::cast_from(spans[2 * i]),
            usize::cast_from(spans[2 * i + 1]),
        );
    }
    range
}

/// Whether `(i, j)` passes the mask's parts that do not depend on the score.
#[cube]
fn static_eligible<I: Int>(
    i: usize,
    j: usize,
    li: I,
    lj: I,
    args: &MaskArgs,
    #[comptime] p: Pairs,
) -> bool {
    let mut eligible = true;
    if p.group == 1 {
        eligible = li == lj;
    }
    if p.group == 2 {
        eligible = li != lj;
    }
    let diff = i32::cast_from(j) - i32::cast_from(i);
    if p.band {
        eligible = eligible && diff >= args.band_lo && diff <= args.band_hi;
    }
    if p.not_band {
        eligible = eligible && (diff < args.not_lo || diff > args.not_hi);
    }
    eligible
}

/// The score of row `i` of `x` and row `j` of `y` (`d` columns each).
#[cube]
fn pair_score(
    x: &Tensor<f32>,
    y: &Tensor<f32>,
    i: usize,
    j: usize,
    d: usize,
    #[comptime] p: Pairs,
) -> f32 {
    let mut acc = 0.0f32;
    for t in 0..d {
        let (a, b) = (x[i * d + t], y[j * d + t]);
        if p.dot {
            acc += a * b;
        } else {
            acc += (a - b) * (a - b);
        }
    }
    if p.sqrt {
        acc = acc.sqrt();
    }
    acc
}

/// Whether a score passes `within(r)` (`key < key_of(r)`: a NaN score never does), given its
/// key.
#[cube]
fn within_radius(key: u32, args: &MaskArgs, #[comptime] p: Pairs) -> bool {
    let mut ok = true;
    if p.within {
        ok = key < key_of(args.radius, NAN_MAX_KEY) && key != NAN_MAX_KEY;
    }
    ok
}

impl PairwiseBackend for CubeBackend {
    fn pairwise_matmul(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
    ) -> FloatTensor<Self> {
        let job = Job::new([&x, &y], [&labels_x, &labels_y], &spec);
        match job.filter(|_| v.dtype == DType::F32) {
            Some(job) => matmul::forward(&job, v, weight),
            None => composite::matmul::<Self>([x, y, v], [labels_x, labels_y], &spec, weight),
        }
    }

    fn pairwise_matmul_backward(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        v: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        weight: PairWeight,
        out: FloatTensor<Self>,
        grad: FloatTensor<Self>,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let floats = [&v, &out, &grad].iter().all(|t| t.dtype == DType::F32);
        let job = Job::new([&x, &y], [&labels_x, &labels_y], &spec).filter(|_| floats);
        match job {
            Some(job) => matmul::backward(&job, [v, out, grad], weight),
            None => composite::matmul_backward::<Self>(
                [x, y, v, out, grad],
                [labels_x, labels_y],
                &spec,
                weight,
            ),
        }
    }

    fn pairwise_select(
        x: FloatTensor<Self>,
        y: FloatTensor<Self>,
        labels_x: IntTensor<Self>,
        labels_y: IntTensor<Self>,
        spec: PairSpec,
        selection: PairSelection,
    ) -> IntTensor<Self> {
        let job = Job::new([&x, &y], [&labels_x, &labels_y], &spec)
            .filter(|_| (1..=select::MAX_K).contains(&selection.k));
        match job {
            Some(job) => select::topk(&job, selection),
            None => host::select_on_host::<Self>([x, y], [labels_x, labels_y], &spec, selection),
        }
    }
}
