//! Explicit segment plans: ids validated and grouped once, then replayed by every op.

use burn::backend::DispatchDevice;
use burn::backend::{Backend, ExtensionType, tensor::IntTensor};
use burn::tensor::{DType, Device, Int, Tensor, TensorData};

use crate::host::CsrPlan;
use crate::validate::SegmentError;

/// The backend form of a [`SegmentPlan`], as the planned methods of
/// [`SegmentBackend`](crate::SegmentBackend) receive it. Its fields are private and only
/// [`SegmentPlan`] builds one, so the kernels may trust what it holds (ids in range, offsets
/// and a permutation consistent with them): they write rows through it without checks.
#[derive(ExtensionType, Debug)]
#[extension_type(fusion: cfg(feature = "cube"))]
pub struct SegmentPlanPrimitive<B: Backend> {
    /// The ids the plan was built from, `[E]`.
    pub(crate) segment_ids: IntTensor<B>,
    /// CSR offsets, `[num_segments + 1]`: segment `s` holds positions `offsets[s]..offsets[s + 1]`
    /// of `order`.
    pub(crate) offsets: IntTensor<B>,
    /// The rows grouped by segment, stable, `[E]`; empty (`[0]`) when the ids were sorted and
    /// the grouping is the identity.
    pub(crate) order: IntTensor<B>,
    /// The number of segments.
    pub(crate) num_segments: usize,
    /// Whether the ids were sorted (non-decreasing).
    pub(crate) sorted: bool,
}

impl<B: Backend> Clone for SegmentPlanPrimitive<B> {
    fn clone(&self) -> Self {
        Self {
            segment_ids: self.segment_ids.clone(),
            offsets: self.offsets.clone(),
            order: self.order.clone(),
            num_segments: self.num_segments,
            sorted: self.sorted,
        }
    }
}

/// The ids an op of [`SegmentBackend`](crate::SegmentBackend) reduces over: given for one call
/// (checked and grouped by the backend) or a [`SegmentPlan`]'s (grouped once, trusted). One
/// argument in place of an unplanned and a planned form of every op, as jraph's `segment_sum`
/// takes its sortedness as a hint rather than as a second function. A backend that cannot use
/// a plan's grouping reads its ids ([`into_ids`](Self::into_ids)).
#[derive(ExtensionType, Debug)]
#[extension_type(fusion: cfg(feature = "cube"))]
pub enum SegmentIndex<B: Backend> {
    /// Ids given for one call, `[E]` (i32 or i64), with their number of segments (for an index
    /// into rows, such as `spmm`'s senders: the number of rows).
    Ids {
        /// The ids, `[E]`.
        segment_ids: IntTensor<B>,
        /// The number of segments `N`.
        num_segments: usize,
    },
    /// A [`SegmentPlan`]'s ids, validated and grouped when it was built.
    Plan(#[extension_type] SegmentPlanPrimitive<B>),
}

impl<B: Backend> Clone for SegmentIndex<B> {
    fn clone(&self) -> Self {
        match self {
            Self::Ids {
                segment_ids,
                num_segments,
            } => Self::ids(segment_ids.clone(), *num_segments),
            Self::Plan(plan) => Self::Plan(plan.clone()),
        }
    }
}

impl<B: Backend> SegmentIndex<B> {
    /// `segment_ids` given for one call over `num_segments` segments.
    pub fn ids(segment_ids: IntTensor<B>, num_segments: usize) -> Self {
        Self::Ids {
            segment_ids,
            num_segments,
        }
    }

    /// The number of segments `N`.
    pub fn num_segments(&self) -> usize {
        match self {
            Self::Ids { num_segments, .. } => *num_segments,
            Self::Plan(plan) => plan.num_segments,
        }
    }

    /// The ids, `[E]`.
    pub fn segment_ids(&self) -> &IntTensor<B> {
        match self {
            Self::Ids { segment_ids, .. } => segment_ids,
            Self::Plan(plan) => &plan.segment_ids,
        }
    }

    /// The ids and the number of segments, the plan's grouping (if any) forgotten.
    pub fn into_ids(self) -> (IntTensor<B>, usize) {
        match self {
            Self::Ids {
                segment_ids,
                num_segments,
            } => (segment_ids, num_segments),
            Self::Plan(plan) => (plan.segment_ids, plan.num_segments),
        }
    }

    /// The same index over another backend with the same int tensors (`Autodiff`'s inner).
    pub(crate) fn map<C: Backend<IntTensorPrimitive = B::IntTensorPrimitive>>(
        self,
    ) -> SegmentIndex<C> {
        match self {
            Self::Ids {
                segment_ids,
                num_segments,
            } => SegmentIndex::ids(segment_ids, num_segments),
            Self::Plan(p) => SegmentIndex::Plan(SegmentPlanPrimitive {
                segment_ids: p.segment_ids,
                offsets: p.offsets,
                order: p.order,
                num_segments: p.num_segments,
                sorted: p.sorted,
            }),
        }
    }
}

/// What `Fusion` records of an index: read by the output shapes of the ops that take one.
#[cfg(feature = "cube")]
impl SegmentIndexMetadata {
    /// The number of segments `N`.
    pub(crate) fn num_segments(&self) -> usize {
        match self {
            Self::Ids { num_segments, .. } => *num_segments,
            Self::Plan(plan) => plan.num_segments,
        }
    }

    /// The spec of the ids, `[E]`.
    pub(crate) fn segment_ids(&self) -> &burn::backend::fusion::custom::TensorSpec {
        match self {
            Self::Ids { segment_ids, .. } => segment_ids,
            Self::Plan(plan) => &plan.segment_ids,
        }
    }
}

/// The dtype of a plan's offsets and order: i64 on the CPU backends, whose kernels then read
/// them in place as `usize` (no conversion per call), the ids' dtype elsewhere.
fn plan_dtype(device: &Device, ids: DType) -> DType {
    match device.as_dispatch().clone().inner() {
        DispatchDevice::Flex(_) | DispatchDevice::NdArray(_) => DType::I64,
        _ => ids,
    }
}

/// Segment ids validated and grouped once, for every op that reduces over them.
///
/// A plan holds the ids, their CSR offsets (so the rows per segment) and, for unsorted ids, a
/// stable permutation that groups the rows by segment; all on the ids' device. Building one
/// checks every id (the only place a planned op checks anything about the ids) and costs one
/// read of the ids to the host plus an `O(E + N)` counting sort; every op called through the
/// plan (the [`Segments`](crate::Segments) methods `sum`, `softmax`, ...,
/// [`Segments::spmm`](crate::Segments::spmm) over plans) and its backward pass then reuse it, with no
/// validation, sort or plan lookup. Build one
/// for ids that are reduced over more than once (a graph's receivers, a batch's graph ids);
/// the free functions ([`segment_sum`](crate::segment_sum), ...) plan per call.
///
/// Cloning is cheap (tensor handles).
///
/// ```
/// use burn::tensor::{Device, Int, Tensor};
/// use burn_segment::{SegmentPlan, Segments};
///
/// let device = Device::flex();
/// let receivers = Tensor::<1, Int>::from_ints([2, 0, 2], &device);
/// let plan = SegmentPlan::new(receivers, 3).unwrap();
/// let messages = Tensor::<2>::from_floats([[1.0], [3.0], [5.0]], &device);
/// let summed = plan.sum(messages.clone());
/// assert_eq!(summed.into_data().to_vec::<f32>().unwrap(), [3.0, 0.0, 6.0]);
/// let count: Vec<i64> = plan.count().into_data().iter::<i64>().collect();
/// assert_eq!(count, [1, 0, 2]);
/// // Bad ids are an error here, not a panic later.
/// let bad = Tensor::<1, Int>::from_ints([0, 3], &device);
/// assert!(SegmentPlan::new(bad, 3).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct SegmentPlan {
    segment_ids: Tensor<1, Int>,
    offsets: Tensor<1, Int>,
    order: Tensor<1, Int>,
    num_segments: usize,
    sorted: bool,
}

impl SegmentPlan {
    /// Plans `segment_ids` (i32 or i64) for `num_segments` segments, on the ids' device.
    ///
    /// # Errors
    /// [`SegmentError::IdOutOfRange`] naming the first id outside `[0, num_segments)`.
    pub fn new(segment_ids: Tensor<1, Int>, num_segments: usize) -> Result<Self, SegmentError> {
        let data = segment_ids.clone().into_data();
        // The ids as stored where they are i32 or i64 (no conversion per id), else as i64.
        let csr = match (data.as_slice::<i64>(), data.as_slice::<i32>()) {
            (Ok(ids), _) => CsrPlan::try_new(ids, num_segments),
            (_, Ok(ids)) => CsrPlan::try_new(ids, num_segments),
            _ => CsrPlan::try_new(&data.iter::<i64>().collect::<Vec<_>>(), num_segments),
        };
        let csr = csr.map_err(|(position, id)| SegmentError::IdOutOfRange {
            id,
            position,
            num_segments,
        })?;
        let device = segment_ids.device();
        let dtype = plan_dtype(&device, segment_ids.dtype());
        let tensor = |values: &[usize]| {
            let values: Vec<i64> = values.iter().map(|&v| v as i64).collect();
            let len = values.len();
            Tensor::<1, Int>::from_data(TensorData::new(values, [len]), (&device, dtype))
        };
        let sorted = csr.is_sorted();
        let order = csr.order.as_deref().unwrap_or(&[]);
        Ok(Self {
            offsets: tensor(&csr.offsets),
            order: tensor(order),
            segment_ids,
            num_segments,
            sorted,
        })
    }

    /// The plan of consecutive partitions of `rows` rows given by their sizes (`[P]`; the
    /// `partition_*` functions' input): `P` segments, sorted ids.
    ///
    /// # Errors
    /// [`SegmentError::NegativePartition`] or [`SegmentError::PartitionSumMismatch`].
    pub fn from_partitions(partitions: Tensor<1, Int>, rows: usize) -> Result<Self, SegmentError> {
        crate::validate_partitions(&partitions, rows)?;
        let p = partitions.dims()[0];
        Self::new(crate::partition_ids(partitions, rows), p)
    }

    /// The ids the plan was built from, `[E]`.
    pub fn segment_ids(&self) -> &Tensor<1, Int> {
        &self.segment_ids
    }

    /// The number of segments `N`.
    pub fn num_segments(&self) -> usize {
        self.num_segments
    }

    /// The number of rows `E` the plan groups (the length of its ids).
    pub fn num_rows(&self) -> usize {
        self.segment_ids.dims()[0]
    }

    /// Whether the ids were sorted (no permutation is held).
    pub fn is_sorted(&self) -> bool {
        self.sorted
    }

    /// CSR offsets, `[N + 1]`: the rows of segment `s`, in the grouped order, are positions
    /// `offsets[s]..offsets[s + 1]`.
    pub fn offsets(&self) -> &Tensor<1, Int> {
        &self.offsets
    }

    /// The same plan on `device` (tensors moved, nothing recomputed).
    pub fn to_device(&self, device: &Device) -> Self {
        Self {
            segment_ids: self.segment_ids.clone().to_device(device),
            offsets: self.offsets.clone().to_device(device),
            order: self.order.clone().to_device(device),
            num_segments: self.num_segments,
            sorted: self.sorted,
        }
    }

    /// The plan as the ops of [`SegmentBackend`](crate::SegmentBackend) take it.
    pub(crate) fn index(&self) -> SegmentIndex<burn::backend::Dispatch> {
        SegmentIndex::Plan(self.primitive())
    }

    /// The backend form, for the planned methods of [`SegmentBackend`](crate::SegmentBackend).
    pub(crate) fn primitive(&self) -> SegmentPlanPrimitive<burn::backend::Dispatch> {
        SegmentPlanPrimitive {
            segment_ids: self.segment_ids.clone().into_dispatch(),
            offsets: self.offsets.clone().into_dispatch(),
            order: self.order.clone().into_dispatch(),
            num_segments: self.num_segments,
            sorted: self.sorted,
        }
    }
}
