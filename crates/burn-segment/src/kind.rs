//! [`SegmentKind`]: the tensor kinds the segment reductions accept, and how each dispatches to
//! the backend's float or integer op.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{Float, Int, kind::Numeric};

use crate::{SegmentBackend, SegmentExtreme, SegmentIndex, SegmentReduction};

mod sealed {
    pub trait Sealed {}
    impl Sealed for burn::tensor::Float {}
    impl Sealed for burn::tensor::Int {}
}

/// Tensor kinds the reductions accept: [`Float`] and [`Int`].
pub trait SegmentKind: Numeric + sealed::Sealed {
    #[doc(hidden)]
    fn reduce(
        data: DispatchTensor,
        index: SegmentIndex<Dispatch>,
        reduction: SegmentReduction,
    ) -> DispatchTensor;
    #[doc(hidden)]
    fn extreme(
        data: DispatchTensor,
        index: SegmentIndex<Dispatch>,
        extreme: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor);
}

impl SegmentKind for Float {
    fn reduce(d: DispatchTensor, i: SegmentIndex<Dispatch>, r: SegmentReduction) -> DispatchTensor {
        Dispatch::segment_reduce(d, i, r)
    }
    fn extreme(
        d: DispatchTensor,
        i: SegmentIndex<Dispatch>,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::segment_extreme(d, i, e)
    }
}

impl SegmentKind for Int {
    fn reduce(d: DispatchTensor, i: SegmentIndex<Dispatch>, r: SegmentReduction) -> DispatchTensor {
        Dispatch::int_segment_reduce(d, i, r)
    }
    fn extreme(
        d: DispatchTensor,
        i: SegmentIndex<Dispatch>,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::int_segment_extreme(d, i, e)
    }
}
