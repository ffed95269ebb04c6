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
