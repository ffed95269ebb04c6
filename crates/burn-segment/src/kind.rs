//! [`SegmentKind`]: the tensor kinds the segment reductions accept, and how each dispatches to
//! the backend's float or integer op.

use burn::backend::{Dispatch, DispatchTensor};
use burn::tensor::{Float, Int, kind::Numeric};

use crate::plan::SegmentPlanPrimitive;
use crate::{SegmentBackend, SegmentExtreme, SegmentReduction};

/// The primitive form of a plan, as dispatched.
type Plan = SegmentPlanPrimitive<Dispatch>;

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
        ids: DispatchTensor,
        num_segments: usize,
        reduction: SegmentReduction,
    ) -> DispatchTensor;
    #[doc(hidden)]
    fn extreme(
        data: DispatchTensor,
        ids: DispatchTensor,
        num_segments: usize,
        extreme: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor);
    #[doc(hidden)]
    fn reduce_planned(data: DispatchTensor, plan: Plan, r: SegmentReduction) -> DispatchTensor;
    #[doc(hidden)]
    fn extreme_planned(
        data: DispatchTensor,
        plan: Plan,
        extreme: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor);
}

impl SegmentKind for Float {
    fn reduce(
        d: DispatchTensor,
        i: DispatchTensor,
        n: usize,
        r: SegmentReduction,
    ) -> DispatchTensor {
        Dispatch::segment_reduce(d, i, n, r)
    }
    fn extreme(
        d: DispatchTensor,
        i: DispatchTensor,
        n: usize,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::segment_extreme(d, i, n, e)
    }
    fn reduce_planned(d: DispatchTensor, p: Plan, r: SegmentReduction) -> DispatchTensor {
        Dispatch::segment_reduce_planned(d, p, r)
    }
    fn extreme_planned(
        d: DispatchTensor,
        p: Plan,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::segment_extreme_planned(d, p, e)
    }
}

impl SegmentKind for Int {
    fn reduce(
        d: DispatchTensor,
        i: DispatchTensor,
        n: usize,
        r: SegmentReduction,
    ) -> DispatchTensor {
        Dispatch::int_segment_reduce(d, i, n, r)
    }
    fn extreme(
        d: DispatchTensor,
        i: DispatchTensor,
        n: usize,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::int_segment_extreme(d, i, n, e)
    }
    fn reduce_planned(d: DispatchTensor, p: Plan, r: SegmentReduction) -> DispatchTensor {
        Dispatch::int_segment_reduce_planned(d, p, r)
    }
    fn extreme_planned(
        d: DispatchTensor,
        p: Plan,
        e: SegmentExtreme,
    ) -> (DispatchTensor, DispatchTensor) {
        Dispatch::int_segment_extreme_planned(d, p, e)
    }
}
