//! The two CPU tensor primitives (NdArray's and Flex's) seen as slices: what the kernels read
//! and how their outputs become tensors again.

use std::borrow::Cow;

use burn::backend::TensorMetadata;
use burn::tensor::{Shape, TensorData};
use burn_flex::{FlexTensor, Layout};
use burn_ndarray::NdArrayTensor;

use super::kernels::Rows;
use super::memory::{Alloc, Out};

/// A CPU tensor primitive whose values can be read as a slice and built from a `Vec`.
pub(crate) trait CpuTensor: TensorMetadata + Sized {
    /// The values in row-major order (borrowed when contiguous).
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]>;
    /// The values as rows along the first dimension, the trailing ones flattened: borrowed when
    /// contiguous, copied otherwise (the default).
    fn rows<E: CpuElem>(&self) -> RowsOf<'_, E> {
        let (len, width) = rows_and_width(&self.shape());
        RowsOf {
            values: self.values(),
            len,
            width,
            stride: width,
        }
    }
    /// A tensor owning `values` with the given shape.
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self;
    /// Where this backend's kernel outputs are allocated: from the output pool where its
    /// tensors can hold a pooled block without a copy.
    const ALLOC: Alloc;
    /// A tensor owning a kernel's output with the given shape.
    fn from_out<E: CpuElem>(out: Out<E>, shape: Shape) -> Self {
        Self::from_values(out.into_vec(), shape)
    }
    /// The values in row-major order, to overwrite in place: `Some` only where this tensor
    /// alone owns its buffer and the buffer holds exactly its values, contiguously.
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]>;
    /// A Bool tensor's flags in row-major order, one byte each (non-zero: true); `None` for
    /// other dtypes and for a bool storage the kernels do not read (Flex's `u32` flags).
    fn mask_bytes(&self) -> Option<Cow<'_, [u8]>>;
}

/// Element types the CPU adapters can read out of a tensor primitive.
pub(crate) trait CpuElem: burn::tensor::Element + bytemuck::Pod {
    fn from_ndarray(t: &NdArrayTensor) -> Option<Cow<'_, [Self]>>;
}

macro_rules! cpu_elem {
    ($t:ty, $variant:ident) => {
        impl CpuElem for $t {
            fn from_ndarray(t: &NdArrayTensor) -> Option<Cow<'_, [Self]>> {
                match t {
                    NdArrayTensor::$variant(s) => {
                        let view = s.view();
                        Some(match view.to_slice() {
                            Some(slice) => Cow::Borrowed(slice),
                            None => Cow::Owned(view.iter().copied().collect()),
                        })
                    }
                    _ => None,
                }
            }
        }
    };
}
cpu_elem!(f32, F32);
cpu_elem!(f64, F64);
cpu_elem!(i32, I32);
cpu_elem!(i64, I64);

impl CpuTensor for NdArrayTensor {
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]> {
        E::from_ndarray(self).unwrap_or_else(|| {
            panic!(
                "burn-segment: expected {:?} data, got {:?}",
                E::dtype(),
                self.dtype()
            )
        })
    }
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self {
        NdArrayTensor::from_data(TensorData::new(values, shape))
    }
    fn mask_bytes(&self) -> Option<Cow<'_, [u8]>> {
        match self {
            NdArrayTensor::Bool(s) => Some(Cow::Owned(s.view().iter().map(|&b| b as u8).collect())),
            _ => None,
        }
    }
    // An ndarray owns a `Vec`: a pooled block would be copied into one.
    const ALLOC: Alloc = Alloc::Vec;
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]> {
        // NdArray (deprecated in Burn 0.22) always gets a fresh output.
        None
    }
}

impl CpuTensor for FlexTensor {
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]> {
        assert_eq!(self.dtype(), E::dtype(), "burn-segment: unexpected dtype");
        match self.as_slice::<E>() {
            Some(slice) => Cow::Borrowed(slice),
            None => Cow::Owned(self.to_contiguous().storage::<E>().to_vec()),
        }
    }
    /// Borrowed also for rows at any non-negative stride whose own values are contiguous: a
    /// row slice, a column slice (`x.slice([.., a..b])`), a row of an expanded tensor.
    fn rows<E: CpuElem>(&self) -> RowsOf<'_, E> {
        assert_eq!(self.dtype(), E::dtype(), "burn-segment: unexpected dtype");
        let layout = self.layout();
        let (len, width) = rows_and_width(layout.shape());
        match row_stride(layout) {
            Some(stride) if len > 0 && width > 0 && !layout.is_contiguous() => {
                let start = layout.start_offset();
                let end = start + (len - 1) * stride + width;
                RowsOf {
                    values: Cow::Borrowed(&self.storage::<E>()[start..end]),
                    len,
                    width,
                    stride,
                }
            }
            _ => RowsOf {
                values: self.values(),
                len,
                width,
                stride: width,
            },
        }
    }
    fn from_values<E: CpuElem>(values: Vec<E>, shape: Shape) -> Self {
        FlexTensor::from_data(TensorData::new(values, shape))
    }
    const ALLOC: Alloc = Alloc::Pool;
    fn from_out<E: CpuElem>(out: Out<E>, shape: Shape) -> Self {
        match out {
            Out::Vec(values) => Self::from_values(values, shape),
            Out::Pooled(block) => {
                FlexTensor::new(block.into_bytes(), Layout::contiguous(shape), E::dtype())
            }
        }
    }
    fn values_mut<E: CpuElem>(&mut self) -> Option<&mut [E]> {
        let len = self.shape().num_elements();
        if self.dtype() != E::dtype()
            || self.layout().contiguous_offsets() != Some((0, len))
            || self.storage::<E>().len() != len
        {
            return None;
        }
        self.try_storage_mut::<E>()
    }
    fn mask_bytes(&self) -> Option<Cow<'_, [u8]>> {
        use burn::tensor::{BoolStore, DType};
        if !matches!(self.dtype(), DType::Bool(BoolStore::Native | BoolStore::U8)) {
            return None;
        }
        Some(match self.layout().contiguous_offsets() {
            Some((start, end)) => Cow::Borrowed(&self.storage::<u8>()[start..end]),
            None => Cow::Owned(self.to_contiguous().storage::<u8>().to_vec()),
        })
    }
}

/// A tensor's values seen as rows (see [`CpuTensor::rows`]).
pub(crate) struct RowsOf<'a, E: Clone> {
    values: Cow<'a, [E]>,
    len: usize,
    width: usize,
    stride: usize,
}

impl<E: Clone> RowsOf<'_, E> {
    /// The rows, as the kernels read them.
    pub(crate) fn view(&self) -> Rows<'_, E> {
        Rows::strided(self.values.as_ref(), self.len, self.width, self.stride)
    }

    /// Whether the rows are read in place (no copy was made).
    #[cfg(test)]
    pub(crate) fn is_borrowed(&self) -> bool {
        matches!(self.values, Cow::Borrowed(_))
    }
}

/// The number of rows (first dimension) and values per row (the rest) of `shape`.
fn rows_and_width(shape: &Shape) -> (usize, usize) {
    match shape.num_dims() {
        0 => (1, 1),
        _ => (shape[0], shape.iter().skip(1).product()),
    }
}

/// The stride between rows of `layout` if each row's values are contiguous (the trailing
/// dimensions row-major and dense) and rows do not run backwards.
fn row_stride(layout: &Layout) -> Option<usize> {
    let (shape, strides) = (layout.shape(), layout.strides());
    if shape.num_dims() == 0 {
        return None;
    }
    let mut expected = 1isize;
    for i in (1..shape.num_dims()).rev() {
        if shape[i] != 1 && strides[i] != expected {
            return None;
        }
        expected *= shape[i] as isize;
    }
    usize::try_from(strides[0]).ok()
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
    use std::cell::Cell;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use burn::tensor::DType;

    use super::*;
    use crate::cpu::kernels::CsrPlan;
    use crate::cpu::ops::{extreme, reduce, softmax};
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
