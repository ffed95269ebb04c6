//! Segment statistics beyond jraph's forms: variance and standard deviation with an explicit
//! correction, weighted means and variances, and the number of nonzero entries, `any` and
//! `all` of each segment. Composed from
//! the core ops (sums, counts, gathers), so every backend runs them through its kernels and
//! `Autodiff` differentiates them.

use burn::backend::Dispatch;
use burn::tensor::{Bool, Int, Tensor, TensorData};

use crate::kind::SegmentKind;
use crate::{SegmentBackend, SegmentIds, SegmentWeights, Segments};

/// Variance of each segment's rows with `correction` subtracted from the count (0: population,
/// 1: sample / Bessel's), NaN for a segment of fewer than `correction + 1` rows.
///
/// `var_c[s] = Σ_{e ∈ s} (x[e] − mean[s])² / (count[s] − c)`. Unlike
/// [`segment_variance`](crate::segment_variance) (jraph's form: population variance, 0 for an empty segment), an empty segment gives NaN for
/// every correction, as torch's `var` of nothing does. NaN in gives NaN out; a segment whose
/// output is NaN for lack of rows passes no gradient (0, not NaN) to its rows.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::flex();
/// let data = Tensor::<2>::from_floats([[1.0], [2.0], [3.0], [5.0]], &device);
/// let ids = Tensor::<1, Int>::from_ints([0, 0, 0, 1], &device);
/// // Sample variance (correction 1): ((1 − 2)² + 0 + (3 − 2)²) / 2 = 1; one row is too few.
/// let var = burn_segment::segment_variance_corrected(data, ids, 3, 1);
/// let var = var.into_data().to_vec::<f32>().unwrap();
/// assert!(var[0] == 1.0 && var[1].is_nan() && var[2].is_nan());
/// ```
pub fn segment_variance_corrected<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    correction: usize,
) -> Tensor<D> {
    variance_corrected(
        &SegmentIds::new(segment_ids, num_segments),
        data,
        correction,
    )
}

/// Standard deviation with a correction: the square root of
/// [`segment_variance_corrected`] (NaN for a segment of fewer than `correction + 1` rows).
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]`.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
pub fn segment_std_corrected<const D: usize>(
    data: Tensor<D>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
    correction: usize,
) -> Tensor<D> {
    variance_corrected(
        &SegmentIds::new(segment_ids, num_segments),
        data,
        correction,
    )
    .sqrt()
}

/// Number of nonzero entries of each segment, per column: `Σ_{e ∈ s} [x[e] ≠ 0]`. NaN counts
/// as nonzero (it is not equal to 0); `-0.0` does not. Empty segments give 0. Float or Int data.
///
/// # Shapes
/// `data: [E, ...]`, `segment_ids: [E]` -> `[num_segments, ...]` Int.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
pub fn segment_count_nonzero<const D: usize, K: SegmentKind>(
    data: Tensor<D, K>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, Int> {
    count_nonzero(&SegmentIds::new(segment_ids, num_segments), data)
}

/// Whether any entry of each segment is true, per column; false for an empty segment.
///
/// # Shapes
/// `data: [E, ...]` Bool, `segment_ids: [E]` -> `[num_segments, ...]` Bool.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
pub fn segment_any<const D: usize>(
    data: Tensor<D, Bool>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, Bool> {
    any(&SegmentIds::new(segment_ids, num_segments), data)
}

/// Whether every entry of each segment is true, per column; true for an empty segment.
///
/// # Shapes
/// `data: [E, ...]` Bool, `segment_ids: [E]` -> `[num_segments, ...]` Bool.
///
/// # Panics
/// As [`segment_reduce`](crate::segment_reduce).
pub fn segment_all<const D: usize>(
    data: Tensor<D, Bool>,
    segment_ids: Tensor<1, Int>,
    num_segments: usize,
) -> Tensor<D, Bool> {
    all(&SegmentIds::new(segment_ids, num_segments), data)
}

/// [`segment_any`] over `g`.
pub(crate) fn any<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D, Bool>,
) -> Tensor<D, Bool> {
    count_nonzero(g, data.int()).greater_elem(0)
}

/// [`segment_all`] over `g`.
pub(crate) fn all<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D, Bool>,
) -> Tensor<D, Bool> {
    count_nonzero(g, data.bool_not().int()).equal_elem(0)
}

/// [`segment_variance_corrected`] over `g`.
pub(crate) fn variance_corrected<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
    correction: usize,
) -> Tensor<D> {
    let counts = per_output(g.count().float(), &data);
    moment(g, data, (None, counts), Some(correction))
}

/// [`segment_count_nonzero`] over `g`.
pub(crate) fn count_nonzero<const D: usize, K: SegmentKind, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D, K>,
) -> Tensor<D, Int> {
    g.check_rows(data.dims()[0]);
    if data.dtype().is_float() {
        // One op (a kernel on wgpu; integer counts are the same through a plan or not).
        let out = Dispatch::segment_count_nonzero(data.into_dispatch(), g.index());
        return Tensor::from_dispatch(out);
    }
    let dims = data.dims();
    let nonzero = if dims.contains(&0) {
        // Burn 0.22's wgpu comparison kernels panic on an empty tensor.
        Tensor::zeros(dims, &data.device())
    } else {
        data.not_equal_elem(0).int()
    };
    g.sum(nonzero)
}

/// The weights broadcast over `like`'s trailing dimensions, in its dtype.
pub(crate) fn row_weights<const D: usize>(weights: &SegmentWeights, like: &Tensor<D>) -> Tensor<D> {
    let w = weights.weights();
    let rows = w.dims()[0];
    assert_eq!(
        rows,
        like.dims()[0],
        "burn-segment: {rows} weights for data of {} rows",
        like.dims()[0]
    );
    let mut dims = [1; D];
    dims[0] = rows;
    w.clone().cast(like.dtype()).reshape(dims)
}

/// The mean (with `correction`: the variance) over `g` of `data` weighted by `w` (broadcast to
/// the data; `None`: every entry weighs 1), with `total` the weight of every output entry
/// (`[N, ...]`): NaN where the total is 0 (at most `correction`). Divided by 1 there before the
/// NaN is put in, so that no gradient meets a division by zero. The corrected, weighted and
/// masked statistics all come here.
pub(crate) fn moment<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
    (w, total): (Option<Tensor<D>>, Tensor<D>),
    correction: Option<usize>,
) -> Tensor<D> {
    if data.dims().contains(&0) {
        // No weight anywhere: NaN, without elementwise kernels on empty tensors (on wgpu they
        // corrupted later results).
        return nan_tensor(total.dims(), &total);
    }
    let weigh = |t: Tensor<D>| match &w {
        Some(w) => t * w.clone(),
        None => t,
    };
    let Some(correction) = correction else {
        return mean_or_nan(g.sum(weigh(data)), total);
    };
    let none = total.clone().equal_elem(0.0);
    let mean = g.sum(weigh(data.clone())) / total.clone().mask_fill(none, 1.0);
    let squares = g.sum(weigh((data - g.gather(mean)).powi_scalar(2)));
    let dof = total - correction as f64;
    let short = dof.clone().lower_equal_elem(0.0);
    (squares / dof.mask_fill(short.clone(), 1.0)).mask_fill(short, f64::NAN)
}

/// `sum / total`, NaN where the total is 0 (divided by 1 there first, so that no gradient
/// meets a division by zero).
pub(crate) fn mean_or_nan<const D: usize>(sum: Tensor<D>, total: Tensor<D>) -> Tensor<D> {
    let none = total.clone().equal_elem(0.0);
    (sum / total.mask_fill(none.clone(), 1.0)).mask_fill(none, f64::NAN)
}

/// The row weights broadcast to `data` and their total per segment in the output's shape.
fn row_weighting<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: &Tensor<D>,
    weights: &SegmentWeights,
) -> (Option<Tensor<D>>, Tensor<D>) {
    if data.dims().contains(&0) {
        // Nothing to weigh (and no kernel on an empty tensor; see `moment`).
        let mut dims = data.dims();
        dims[0] = g.num_segments();
        return (None, Tensor::zeros(dims, (&data.device(), data.dtype())));
    }
    let total = per_output(g.sum(weights.weights().clone().cast(data.dtype())), data);
    (Some(row_weights(weights, data)), total)
}

/// [`SegmentStatistics::weighted_mean`] over `g`.
pub(crate) fn weighted_mean<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
    weights: &SegmentWeights,
) -> Tensor<D> {
    let weighting = row_weighting(g, &data, weights);
    moment(g, data, weighting, None)
}

/// [`SegmentStatistics::weighted_variance`] over `g`.
pub(crate) fn weighted_variance<const D: usize, S: Segments + ?Sized>(
    g: &S,
    data: Tensor<D>,
    weights: &SegmentWeights,
    correction: usize,
) -> Tensor<D> {
    let weighting = row_weighting(g, &data, weights);
    moment(g, data, weighting, Some(correction))
}

/// A tensor of NaN in `like`'s dtype and on its device, uploaded rather than filled: a NaN
/// fill constant came out as 0 on wgpu (lavapipe) after some kernels, in the masked suite.
pub(crate) fn nan_tensor<const D: usize>(dims: [usize; D], like: &Tensor<D>) -> Tensor<D> {
    let values = vec![f32::NAN; dims.iter().product()];
    Tensor::from_data(
        TensorData::new(values, dims),
        (&like.device(), like.dtype()),
    )
}

/// One value per segment (`[N]`) broadcast to the shape of a reduction of `data` (`[N, ...]`),
/// in `data`'s dtype.
fn per_output<const D: usize>(t: Tensor<1>, data: &Tensor<D>) -> Tensor<D> {
    let mut dims = data.dims();
    dims[0] = t.dims()[0];
    let mut rows = [1; D];
    rows[0] = dims[0];
    t.cast(data.dtype()).reshape(rows).expand(dims)
}
