//! Partition reductions: consecutive runs of rows, given by their lengths.
//!
//! `partitions = [2, 0, 3]` splits 5 rows into `[0, 0, 2, 2, 2]`. The number of partitions and
//! the total length always come from shapes (`partitions.dims()[0]`, `data.dims()[0]`), never from
//! a data-dependent sum, so nothing waits on the device. If the sizes do not add up to the
//! length, rows past the last partition get out-of-range ids; check with
//! [`validate_partitions`](crate::validate_partitions).

use burn::tensor::{Int, Tensor, ops::IndexingUpdateOp};

use crate::{segment_max, segment_mean, segment_min, segment_softmax, segment_sum};

/// The partition index of each of `total_length` rows.
///
/// Computed on the device without a host read: marks at each partition end, then a cumulative
/// sum; ends are clamped to `[0, total_length]` so that no write is ever out of bounds.
///
/// # Shapes
/// `partitions: [P]` -> `[total_length]` Int.
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// let device = Device::flex();
/// let partitions = Tensor::<1, Int>::from_ints([2, 0, 3], &device);
/// let ids = burn_segment::partition_ids(partitions, 5);
/// assert_eq!(ids.into_data().iter::<i64>().collect::<Vec<_>>(), [0, 0, 2, 2, 2]);
/// ```
pub fn partition_ids(partitions: Tensor<1, Int>, total_length: usize) -> Tensor<1, Int> {
    let device = partitions.device();
    let p = partitions.dims()[0];
    if total_length == 0 || p == 0 {
        return Tensor::zeros([total_length], &device);
    }
    let ends = partitions.cumsum(0).clamp(0, total_length as i64);
    let ones = Tensor::<1, Int>::ones([p], &device);
    let marks = Tensor::<1, Int>::zeros([total_length + 1], &device).select_assign(
        0,
        ends,
        ones,
        IndexingUpdateOp::Add,
    );
    marks.slice(0..total_length).cumsum(0)
}

fn ids_of<const D: usize>(data: &Tensor<D>, partitions: Tensor<1, Int>) -> (Tensor<1, Int>, usize) {
    let p = partitions.dims()[0];
    (partition_ids(partitions, data.dims()[0]), p)
}

/// Sum of each partition's rows. See [`segment_sum`].
///
/// # Shapes
/// `data: [E, ...]`, `partitions: [P]` -> `[P, ...]`.
pub fn partition_sum<const D: usize>(data: Tensor<D>, partitions: Tensor<1, Int>) -> Tensor<D> {
    let (ids, p) = ids_of(&data, partitions);
    segment_sum(data, ids, p)
}

/// Mean of each partition's rows (0 for empty partitions). See [`segment_mean`].
///
/// # Shapes
/// `data: [E, ...]`, `partitions: [P]` -> `[P, ...]`.
pub fn partition_mean<const D: usize>(data: Tensor<D>, partitions: Tensor<1, Int>) -> Tensor<D> {
    let (ids, p) = ids_of(&data, partitions);
    segment_mean(data, ids, p)
}

/// Maximum of each partition's rows (`-inf` for empty partitions). See [`segment_max`].
///
/// # Shapes
/// `data: [E, ...]`, `partitions: [P]` -> `[P, ...]`.
pub fn partition_max<const D: usize>(data: Tensor<D>, partitions: Tensor<1, Int>) -> Tensor<D> {
    let (ids, p) = ids_of(&data, partitions);
    segment_max(data, ids, p)
}

/// Minimum of each partition's rows (`+inf` for empty partitions). See [`segment_min`].
///
/// # Shapes
/// `data: [E, ...]`, `partitions: [P]` -> `[P, ...]`.
pub fn partition_min<const D: usize>(data: Tensor<D>, partitions: Tensor<1, Int>) -> Tensor<D> {
    let (ids, p) = ids_of(&data, partitions);
    segment_min(data, ids, p)
}

/// Softmax within each partition. See [`segment_softmax`].
///
/// # Shapes
/// `logits: [E, ...]`, `partitions: [P]` -> `[E, ...]`.
pub fn partition_softmax<const D: usize>(
    logits: Tensor<D>,
    partitions: Tensor<1, Int>,
) -> Tensor<D> {
    let (ids, p) = ids_of(&logits, partitions);
    segment_softmax(logits, ids, p)
}
