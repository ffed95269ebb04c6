//! The shapes of segment ops: shared by the trait's defaults, the composites and every kernel
//! (it imports nothing of the crate).

use burn::tensor::Shape;

/// `shape` with dim 0 replaced by `num_segments`: the output shape of a reduction (also what
/// `Fusion` records before the kernel runs).
pub(crate) fn rows_shape(shape: &Shape, num_segments: usize) -> Shape {
    let mut dims = shape.as_slice().to_vec();
    dims[0] = num_segments;
    Shape::from(dims)
}

/// `[E, ...]` -> (`E`, the product `d` of the trailing dims, the reduced shape `[N, ...]`): how
/// the kernels see their data, as an `[E, d]` matrix.
pub(crate) fn flat_rows(shape: &Shape, num_segments: usize) -> (usize, usize, Shape) {
    let dims = shape.as_slice();
    (
        dims[0],
        dims[1..].iter().product(),
        rows_shape(shape, num_segments),
    )
}
