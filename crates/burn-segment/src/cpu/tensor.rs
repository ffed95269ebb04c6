//! The two CPU tensor primitives (NdArray's and Flex's) seen as slices: what the kernels read
//! and how their outputs become tensors again.

use std::borrow::Cow;

use burn::backend::TensorMetadata;
use burn::tensor::{Shape, TensorData};
use burn_flex::{FlexTensor, Layout};
use burn_ndarray::NdArrayTensor;

use super::output::{Alloc, Out};

/// A CPU tensor primitive whose values can be read as a slice and built from a `Vec`.
pub(crate) trait CpuTensor: TensorMetadata + Sized {
    /// The values in row-major order (borrowed when contiguous).
    fn values<E: CpuElem>(&self) -> Cow<'_, [E]>;
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
}
