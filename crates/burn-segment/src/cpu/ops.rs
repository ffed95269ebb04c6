//! The reductions on CPU tensors: ids planned (per call, or read from a `SegmentPlan`) and
//! checked, data read as slices, the slice kernels run, the outputs made tensors.

use std::borrow::Cow;
use std::cell::Cell;

use burn::backend::{Backend, TensorMetadata};
use burn::tensor::{DType, Shape};

use super::kernels::{self, CsrPlan, Elem, FloatElem, IdElem, ScatterOp};
use super::tensor::{CpuElem, CpuTensor};
use crate::host::simd::Simd;
use crate::plan::{SegmentIndex, SegmentPlanPrimitive};
use crate::shape::flat_rows;
use crate::{SegmentExtreme, SegmentReduction};

thread_local! {
    static UNPLANNED_HERE: Cell<u64> = const { Cell::new(0) };
}

/// How many times a CPU kernel called on this thread planned its ids per call (an unplanned op:
/// a free function, or `SegmentIds`). An op through a [`SegmentPlan`](crate::SegmentPlan) never
/// does; this tells the two apart (the layers' tests assert that a planned graph's forward and
/// backward plan nothing).
pub fn unplanned_calls_on_this_thread() -> u64 {
    UNPLANNED_HERE.get()
}

/// The CSR plan of a 1-D id tensor (i32 or i64), built for this call.
///
/// # Panics
/// If an id lies outside `[0, num_segments)`, naming it and its position.
pub(super) fn plan<T: CpuTensor>(ids: &T, num_segments: usize) -> CsrPlan<'static> {
    match read_ids(ids, num_segments, 0, ScatterOp::Sum) {
        Given::Csr(plan) => plan,
        Given::Scattered(..) => unreachable!("rows of no bytes are never scattered"),
    }
}

/// The ids of an unplanned sum, max or min, scanned once: a CSR plan, or the ids themselves where
/// they are unsorted and the rows narrow (no plan to build; see `kernels::scatters`).
pub(super) enum Given<'a> {
    Csr(CsrPlan<'static>),
    Scattered(ScatterIds<'a>),
}

/// Ids read for the scatter kernels, in their own dtype.
pub(super) enum ScatterIds<'a> {
    I32(Cow<'a, [i32]>),
    I64(Cow<'a, [i64]>),
}

impl ScatterIds<'_> {
    /// Number of ids.
    fn len(&self) -> usize {
        match self {
            ScatterIds::I32(ids) => ids.len(),
            ScatterIds::I64(ids) => ids.len(),
        }
    }
}

/// The ids of `data` (`[E, ...]`) for an unplanned `op` over `num_segments`.
///
/// # Panics
/// If an id lies outside `[0, num_segments)`, naming it and its position.
pub(super) fn given<'a, T: CpuTensor>(
    ids: &'a T,
    data: &T,
    num_segments: usize,
    op: ScatterOp,
) -> Given<'a> {
    let (_, d, _) = flat_rows(&data.shape(), num_segments);
    read_ids(ids, num_segments, d * data.dtype().size(), op)
}

/// The ids, checked and scanned once, for `op` over rows of `row_bytes` bytes of output per
/// segment (0: always a CSR plan). Counts as an unplanned call.
fn read_ids<T: CpuTensor>(
    ids: &T,
    num_segments: usize,
    row_bytes: usize,
    op: ScatterOp,
) -> Given<'_> {
    UNPLANNED_HERE.set(UNPLANNED_HERE.get() + 1);
    fn scan<'a, I: IdElem>(
        ids: Cow<'a, [I]>,
        n: usize,
        (row_bytes, op): (usize, ScatterOp),
        wrap: fn(Cow<'a, [I]>) -> ScatterIds<'a>,
    ) -> Given<'a> {
        let scan = crate::host::scan_ids(&ids, n)
            .unwrap_or_else(|(row, id)| crate::host::bad_id(row, id, n));
        if matches!(scan, crate::host::Scan::Sorted(_))
            || !kernels::scatters(op, ids.len(), n, row_bytes)
        {
            return Given::Csr(CsrPlan::scanned(&ids, n, scan));
        }
        Given::Scattered(wrap(ids))
    }
    match ids.dtype() {
        DType::I64 => scan(
            ids.values::<i64>(),
            num_segments,
            (row_bytes, op),
            ScatterIds::I64,
        ),
        DType::I32 => scan(
            ids.values::<i32>(),
            num_segments,
            (row_bytes, op),
            ScatterIds::I32,
        ),
        other => panic!("burn-segment: segment ids must be i32 or i64, got {other:?}"),
    }
}

/// `go::<E, I, T>(&data, ids, rest...)` for the data's element type `E` and the ids' `I`.
macro_rules! by_dtypes {
    ($go:ident, $data:expr, $ids:expr, ($($rest:expr),*)) => {{
        macro_rules! by_id {
            ($e:ty) => {
                match $ids {
                    ScatterIds::I32(i) => $go::<$e, i32, T>(&$data, i, $($rest),*),
                    ScatterIds::I64(i) => $go::<$e, i64, T>(&$data, i, $($rest),*),
                }
            };
        }
        match $data.dtype() {
            DType::F32 => by_id!(f32),
            DType::F64 => by_id!(f64),
            DType::I32 => by_id!(i32),
            DType::I64 => by_id!(i64),
            other => unreachable!("unsupported dtype {other:?} reached the CPU kernel"),
        }
    }};
}

/// Sum, max or min (values only) over unsorted ids, without a plan.
pub(super) fn reduce_scattered<T: CpuTensor>(
    data: T,
    ids: &ScatterIds,
    num_segments: usize,
    op: SegmentReduction,
) -> T {
    let (e, _, shape) = flat_rows(&data.shape(), num_segments);
    check_len(e, ids.len());
    fn go<E: CpuElem + Elem, I: IdElem, T: CpuTensor>(
        data: &T,
        ids: &[I],
        (n, op): (usize, SegmentReduction),
        s: Shape,
    ) -> T {
        let rows = data.rows::<E>();
        let values = rows.view();
        let out = match op {
            SegmentReduction::Sum => kernels::scatter_sum(Simd::detect(), T::ALLOC, values, ids, n),
            SegmentReduction::Max | SegmentReduction::Min => {
                let (simd, which) = (Simd::detect(), extreme_of(op));
                kernels::scatter_extreme_values(simd, T::ALLOC, values, ids, n, which)
            }
            SegmentReduction::Prod => unreachable!("products take the CSR path"),
        };
        T::from_out(out, s)
    }
    by_dtypes!(go, data, ids, ((num_segments, op), shape))
}

/// The scatter kernels' name for an unplanned sum, max or min (values only).
pub(super) fn scatter_op(op: SegmentReduction) -> ScatterOp {
    match op {
        SegmentReduction::Max | SegmentReduction::Min => ScatterOp::ExtremeValues,
        _ => ScatterOp::Sum,
    }
}

/// The extreme a max or min reduction computes.
fn extreme_of(op: SegmentReduction) -> SegmentExtreme {
    match op {
        SegmentReduction::Min => SegmentExtreme::Min,
        _ => SegmentExtreme::Max,
    }
}

/// Max / min with arguments (in the ids' dtype) over unsorted ids, without a plan.
pub(super) fn extreme_scattered<T: CpuTensor>(
    data: T,
    ids: &ScatterIds,
    num_segments: usize,
    which: SegmentExtreme,
) -> (T, T) {
    let (e, _, shape) = flat_rows(&data.shape(), num_segments);
    check_len(e, ids.len());
    fn go<E: CpuElem + Elem, I: CpuElem + IdElem, T: CpuTensor>(
        data: &T,
        ids: &[I],
        (n, which): (usize, SegmentExtreme),
        s: Shape,
    ) -> (T, T) {
        let values = data.rows::<E>();
        let simd = Simd::detect();
        let (v, a) = kernels::scatter_extreme(simd, T::ALLOC, values.view(), ids, n, which);
        (T::from_out(v, s.clone()), T::from_out(a, s))
    }
    by_dtypes!(go, data, ids, ((num_segments, which), shape))
}

/// The CSR plan a `SegmentPlan` holds, read from its tensors (borrowed where they are i64):
/// no scan, sort or lookup. Only `SegmentPlan::new` builds these tensors, so they are trusted;
/// the shape checks here are O(1).
pub(super) fn held_plan<B: Backend>(p: &SegmentPlanPrimitive<B>) -> CsrPlan<'_>
where
    B::IntTensorPrimitive: CpuTensor,
{
    let (offsets, order) = (usize_list(&p.offsets), usize_list(&p.order));
    let rows = TensorMetadata::shape(&p.segment_ids)[0];
    assert!(
        offsets.len() == p.num_segments + 1
            && offsets[p.num_segments] == rows
            && (p.sorted || order.len() == rows),
        "burn-segment: a SegmentPlanPrimitive that SegmentPlan::new did not build"
    );
    CsrPlan {
        offsets,
        order: (!p.sorted).then_some(order),
    }
}

/// Whether the CPU kernels handle this data dtype (others take the composite default).
pub(super) fn supports(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::I32 | DType::I64)
}

pub(super) fn check_len(e: usize, ids_len: usize) {
    assert_eq!(
        e, ids_len,
        "burn-segment: data has {e} rows but segment_ids has {ids_len} entries"
    );
}

/// Sum / product / max / min, values only.
pub(super) fn reduce<T: CpuTensor>(data: T, plan: &CsrPlan, op: SegmentReduction) -> T {
    let (e, _, out_shape) = flat_rows(&data.shape(), plan.num_segments());
    check_len(e, plan.num_rows());
    fn go<E: CpuElem + Elem, T: CpuTensor>(
        data: &T,
        p: &CsrPlan,
        op: SegmentReduction,
        s: Shape,
    ) -> T {
        let rows = data.rows::<E>();
        let values = rows.view();
        let out = match op {
            SegmentReduction::Prod => kernels::reduce_product(T::ALLOC, values, p),
            SegmentReduction::Sum => kernels::reduce_sum(Simd::detect(), T::ALLOC, values, p),
            SegmentReduction::Max | SegmentReduction::Min => {
                let (simd, which) = (kernels::extreme_simd(), extreme_of(op));
                kernels::reduce_extreme_values(simd, T::ALLOC, values, p, which)
            }
        };
        T::from_out(out, s)
    }
    match data.dtype() {
        DType::F32 => go::<f32, T>(&data, plan, op, out_shape),
        DType::F64 => go::<f64, T>(&data, plan, op, out_shape),
        DType::I32 => go::<i32, T>(&data, plan, op, out_shape),
        DType::I64 => go::<i64, T>(&data, plan, op, out_shape),
        other => unreachable!("unsupported dtype {other:?} reached the CPU kernel"),
    }
}

/// The sum of the entries `mask` keeps (`per_row`: one flag per row; else one per entry).
pub(super) fn sum_masked<T: CpuTensor>(data: T, mask: &[u8], per_row: bool, plan: &CsrPlan) -> T {
    let (e, d, out_shape) = flat_rows(&data.shape(), plan.num_segments());
    check_len(e, plan.num_rows());
    assert_eq!(
        mask.len(),
        if per_row { e } else { e * d },
        "burn-segment: mask size"
    );
    let mask = match per_row {
        true => kernels::MaskOf::Rows(mask),
        false => kernels::MaskOf::Entries(mask),
    };
    fn go<E: CpuElem + Elem, T: CpuTensor>(
        data: &T,
        mask: kernels::MaskOf<'_>,
        p: &CsrPlan,
        s: Shape,
    ) -> T {
        let rows = data.rows::<E>();
        let out = kernels::reduce_sum_masked(Simd::detect(), T::ALLOC, rows.view(), mask, p);
        T::from_out(out, s)
    }
    match data.dtype() {
        DType::F32 => go::<f32, T>(&data, mask, plan, out_shape),
        DType::F64 => go::<f64, T>(&data, mask, plan, out_shape),
        other => unreachable!("unsupported dtype {other:?} reached the masked sum"),
    }
}

/// Max / min with the row that attains it; the argument tensor has the ids' dtype `id_dtype`.
pub(super) fn extreme<T: CpuTensor>(
    data: T,
    plan: &CsrPlan,
    id_dtype: DType,
    which: SegmentExtreme,
) -> (T, T) {
    let (e, _, out_shape) = flat_rows(&data.shape(), plan.num_segments());
    check_len(e, plan.num_rows());
    fn go<E: CpuElem + Elem, I: CpuElem + IdElem, T: CpuTensor>(
        data: &T,
        plan: &CsrPlan,
        which: SegmentExtreme,
        shape: Shape,
    ) -> (T, T) {
        let simd = kernels::extreme_simd();
        let rows = data.rows::<E>();
        let (v, a) = kernels::reduce_extreme::<E, I>(simd, T::ALLOC, rows.view(), plan, which);
        (T::from_out(v, shape.clone()), T::from_out(a, shape))
    }
    macro_rules! by_id {
        ($e:ty) => {
            match id_dtype {
                DType::I32 => go::<$e, i32, T>(&data, plan, which, out_shape),
                _ => go::<$e, i64, T>(&data, plan, which, out_shape),
            }
        };
    }
    match data.dtype() {
        DType::F32 => by_id!(f32),
        DType::F64 => by_id!(f64),
        DType::I32 => by_id!(i32),
        DType::I64 => by_id!(i64),
        other => unreachable!("unsupported dtype {other:?} reached the CPU kernel"),
    }
}

/// Segment softmax, `[E, ...] -> [E, ...]`.
pub(super) fn softmax<T: CpuTensor>(data: T, plan: &CsrPlan) -> T {
    let shape = data.shape();
    let (e, d, _) = flat_rows(&shape, plan.num_segments());
    check_len(e, plan.num_rows());
    // In place where the input's buffer is this call's alone (nothing else sees it change).
    fn go<E: CpuElem + FloatElem, T: CpuTensor>(
        mut data: T,
        d: usize,
        plan: &CsrPlan,
        s: Shape,
    ) -> T {
        if let Some(values) = data.values_mut::<E>() {
            kernels::softmax_in_place(values, d, plan);
            return data;
        }
        T::from_out(kernels::softmax(T::ALLOC, data.rows::<E>().view(), plan), s)
    }
    match data.dtype() {
        DType::F32 => go::<f32, T>(data, d, plan, shape),
        DType::F64 => go::<f64, T>(data, d, plan, shape),
        other => unreachable!("unsupported dtype {other:?} reached the CPU softmax kernel"),
    }
}

/// Rows per segment, in the ids' dtype.
pub(super) fn count<T: CpuTensor>(ids: T, n: usize) -> T {
    let plan = plan(&ids, n);
    match ids.dtype() {
        DType::I32 => T::from_values(kernels::count::<i32>(&plan), Shape::from([n])),
        _ => T::from_values(kernels::count::<i64>(&plan), Shape::from([n])),
    }
}

/// The position and value of the first id outside `0..n`, if any: one branch-free pass (an
/// unsigned comparison also catches negative ids), and a search for the position only when
/// something is out of range.
fn first_out_of_range<I: CpuElem + Into<i64>>(ids: &[I], n: usize) -> Option<(usize, i64)> {
    if !ids.iter().any(|&i| Into::<i64>::into(i) as u64 >= n as u64) {
        return None;
    }
    ids.iter()
        .map(|&i| i.into())
        .enumerate()
        .find(|&(_, i)| i < 0 || i >= n as i64)
}

/// The ids of a gather from `rows` rows: given ones checked (panicking on one out of range), a
/// plan's trusted (in range by construction).
pub(super) fn gather_ids<T: CpuTensor, B: Backend<IntTensorPrimitive = T>>(
    index: SegmentIndex<B>,
    rows: usize,
) -> T {
    match index {
        SegmentIndex::Ids { segment_ids, .. } => {
            check_gather_ids(&segment_ids, rows);
            segment_ids
        }
        SegmentIndex::Plan(p) => p.segment_ids,
    }
}

/// Panics naming the first id outside `0..n` (the CPU contract for bad ids).
pub(super) fn check_gather_ids<T: CpuTensor>(ids: &T, n: usize) {
    let bad = match ids.dtype() {
        DType::I32 => first_out_of_range(&ids.values::<i32>(), n),
        _ => first_out_of_range(&ids.values::<i64>(), n),
    };
    if let Some((pos, id)) = bad {
        panic!(
            "burn-segment: segment id {id} at position {pos} is out of range for num_segments = {n}"
        );
    }
}

/// A 1-D index tensor's entries in its own dtype, borrowed where contiguous: what the fused
/// kernels index with, so that no call copies its ids into a `usize` list.
pub(crate) enum IndexList<'a> {
    I32(Cow<'a, [i32]>),
    I64(Cow<'a, [i64]>),
}

impl<'a> IndexList<'a> {
    /// The entries of `ids`, trusted to be in range (a plan's, checked when it was built).
    pub(super) fn of<T: CpuTensor>(ids: &'a T) -> Self {
        match ids.dtype() {
            DType::I32 => IndexList::I32(ids.values()),
            _ => IndexList::I64(ids.values()),
        }
    }
}

/// `$body` with `$s` bound to `$list`'s entries as a slice of their own dtype (one copy of the
/// body per dtype).
macro_rules! with_index {
    ($list:expr, |$s:ident| $body:expr) => {
        match $list {
            $crate::cpu::ops::IndexList::I32($s) => {
                let $s: &[i32] = $s;
                $body
            }
            $crate::cpu::ops::IndexList::I64($s) => {
                let $s: &[i64] = $s;
                $body
            }
        }
    };
}
pub(super) use with_index;

/// The entries of a 1-D index tensor, each checked to lie in `0..n`.
///
/// # Panics
/// Naming the first index outside `0..n`, its position, and `what` it indexes.
pub(super) fn index_list<'a, T: CpuTensor>(ids: &'a T, n: usize, what: &str) -> IndexList<'a> {
    let list = IndexList::of(ids);
    let bad = with_index!(&list, |v| first_out_of_range(v, n));
    if let Some((pos, i)) = bad {
        panic!("burn-segment: {what} index {i} at position {pos} is out of range for {n} rows");
    }
    list
}

/// The entries of a 1-D tensor of non-negative indices as `usize`: borrowed from the tensor for
/// contiguous i64 indices on 64-bit targets (no copy), converted otherwise.
pub(super) fn usize_list<T: CpuTensor>(ids: &T) -> Cow<'_, [usize]> {
    match ids.dtype() {
        DType::I32 => Cow::Owned(ids.values::<i32>().iter().map(|&i| i as usize).collect()),
        _ => match ids.values::<i64>() {
            #[cfg(target_pointer_width = "64")]
            Cow::Borrowed(v) => Cow::Borrowed(bytemuck::cast_slice(v)),
            v => Cow::Owned(v.iter().map(|&i| i as usize).collect()),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use burn::tensor::DType;

    use burn::tensor::TensorData;
    use burn_flex::{FlexTensor, Layout};

    use super::*;
    use crate::host::CsrPlan;
    use crate::{SegmentExtreme, SegmentReduction};

    /// Counts the bytes allocated by threads marked `COUNTED` (a test's own rayon pool).
    struct Counting;
    static BYTES: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static COUNTED: Cell<bool> = const { Cell::new(false) };
    }
    fn count(bytes: usize) {
        if COUNTED.try_with(Cell::get).unwrap_or(false) {
            BYTES.fetch_add(bytes, Ordering::Relaxed);
        }
    }
    // SAFETY: every call is forwarded to `System` unchanged.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: AllocLayout) -> *mut u8 {
            count(layout.size());
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: AllocLayout) {
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: AllocLayout, new_size: usize) -> *mut u8 {
            count(new_size);
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }
    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    /// The bytes `f` allocates, run on a fresh pool of two counted threads.
    fn bytes_allocated_by(f: impl FnOnce() + Send) -> usize {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .start_handler(|_| COUNTED.set(true))
            .build()
            .unwrap();
        pool.install(|| {
            let before = BYTES.load(Ordering::Relaxed);
            f();
            BYTES.load(Ordering::Relaxed) - before
        })
    }

    #[test]
    fn column_sliced_inputs_are_reduced_without_a_copy() {
        // Columns 16..32 of a [1e5, 64] tensor (6.4 MB), in 1000 sorted segments (32 KB out);
        // the same view with every other column (not contiguous within a row) is copied.
        let (rows, cols, n) = (100_000, 64, 1000);
        let values: Vec<f32> = (0..rows * cols).map(|i| (i % 251) as f32).collect();
        let full = FlexTensor::from_data(TensorData::new(values, [rows, cols]));
        let view = |strides: [isize; 2]| {
            let layout = Layout::new(Shape::from([rows, 16]), strides.to_vec(), 16);
            FlexTensor::from_arc(full.data_arc(), layout, DType::F32)
        };
        let (sliced, every_other) = (view([64, 1]), view([64, 2]));
        assert!(sliced.rows::<f32>().is_borrowed() && !every_other.rows::<f32>().is_borrowed());
        let ids: Vec<i64> = (0..rows as i64).map(|i| i / 100).collect();
        let plan = CsrPlan::new(&ids, n);
        let every_op = |x: &FlexTensor| {
            let sum = reduce(x.clone(), &plan, SegmentReduction::Sum);
            let max = extreme(x.clone(), &plan, DType::I64, SegmentExtreme::Max);
            let soft = softmax(x.clone(), &plan);
            (sum, max, soft)
        };
        let view_bytes = rows * 16 * 4;
        for (x, copied) in [(&sliced, false), (&every_other, true)] {
            let reduced = bytes_allocated_by(|| {
                reduce(x.clone(), &plan, SegmentReduction::Sum);
                extreme(x.clone(), &plan, DType::I64, SegmentExtreme::Max);
            });
            // Outputs (2 × 64 KB at most) and per-task scratch only, unless the input is copied.
            assert_eq!(
                reduced >= view_bytes,
                copied,
                "{reduced} bytes, copied: {copied}"
            );
        }
        // Softmax writes a [1e5, 16] output: one view's worth, and no copy of the input.
        let soft = bytes_allocated_by(|| _ = softmax(sliced.clone(), &plan));
        assert!(soft < view_bytes + view_bytes / 2, "{soft} bytes");
        // Read in place or copied, the bits of the contiguous copy.
        let bits = |(s, (m, a), f): (FlexTensor, (FlexTensor, FlexTensor), FlexTensor)| {
            let f32s = |t: FlexTensor| -> Vec<u32> {
                t.values::<f32>().iter().map(|v| v.to_bits()).collect()
            };
            let args = a.values::<i64>().to_vec();
            (f32s(s), f32s(m), args, f32s(f))
        };
        for x in [&sliced, &every_other] {
            assert_eq!(bits(every_op(x)), bits(every_op(&x.to_contiguous())));
        }
    }
}
