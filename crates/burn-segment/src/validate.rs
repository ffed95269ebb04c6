//! Host-side validation for callers who want a `Result` instead of a panic.

use burn::tensor::{Int, Tensor};

/// What is wrong with segment ids, partition sizes or weights.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SegmentError {
    /// An id lies outside `[0, num_segments)`.
    #[error(
        "segment id {id} at position {position} is out of range for num_segments = {num_segments}"
    )]
    IdOutOfRange {
        /// The offending id.
        id: i64,
        /// Its position in `segment_ids`.
        position: usize,
        /// The number of segments.
        num_segments: usize,
    },
    /// `segment_ids` does not have one entry per row of the data.
    #[error("segment_ids has {ids} entries but the data has {rows} rows")]
    LengthMismatch {
        /// Entries in `segment_ids`.
        ids: usize,
        /// Rows (dim 0) of the data.
        rows: usize,
    },
    /// A partition size is negative.
    #[error("partition {index} has negative size {size}")]
    NegativePartition {
        /// Position in `partitions`.
        index: usize,
        /// The size found.
        size: i64,
    },
    /// A weight of a weighted statistic is negative or not finite.
    #[error("weight {weight} at position {position} is negative or not finite")]
    BadWeight {
        /// Its position in the weights.
        position: usize,
        /// The weight found.
        weight: f64,
    },
    /// A quantile outside `[0, 1]` (or NaN).
    #[error("quantile {q} is not in [0, 1]")]
    QuantileOutOfRange {
        /// The quantile asked for.
        q: f64,
    },
    /// The partition sizes do not add up to the number of rows.
    #[error("partition sizes sum to {sum} but the data has {rows} rows")]
    PartitionSumMismatch {
        /// Sum of the sizes.
        sum: i64,
        /// Rows (dim 0) of the data.
        rows: usize,
    },
}

/// Checks that every id lies in `[0, num_segments)` and, if `rows` is given, that there is one
/// id per row. Reads the ids back to the host (one device sync).
///
/// # Errors
/// [`SegmentError::LengthMismatch`] or [`SegmentError::IdOutOfRange`] (the first bad id).
pub fn validate_segment_ids(
    segment_ids: &Tensor<1, Int>,
    num_segments: usize,
    rows: Option<usize>,
) -> Result<(), SegmentError> {
    let ids = segment_ids.dims()[0];
    if let Some(rows) = rows.filter(|&r| r != ids) {
        return Err(SegmentError::LengthMismatch { ids, rows });
    }
    let data = segment_ids.clone().into_data();
    for (position, id) in data.iter::<i64>().enumerate() {
        if id < 0 || id >= num_segments as i64 {
            return Err(SegmentError::IdOutOfRange {
                id,
                position,
                num_segments,
            });
        }
    }
    Ok(())
}

/// Checks that partition sizes are non-negative and sum to `rows`. Reads them back to the host.
///
/// # Errors
/// [`SegmentError::NegativePartition`] or [`SegmentError::PartitionSumMismatch`].
pub fn validate_partitions(partitions: &Tensor<1, Int>, rows: usize) -> Result<(), SegmentError> {
    let data = partitions.clone().into_data();
    let mut sum = 0i64;
    for (index, size) in data.iter::<i64>().enumerate() {
        if size < 0 {
            return Err(SegmentError::NegativePartition { index, size });
        }
        sum = sum.saturating_add(size);
    }
    if sum != rows as i64 {
        return Err(SegmentError::PartitionSumMismatch { sum, rows });
    }
    Ok(())
}
