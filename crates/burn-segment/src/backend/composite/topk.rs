//! The composite default of `segment_topk`: the rows are chosen on the host, as a
//! [`SegmentPlan`](crate::SegmentPlan) groups its ids there. One read of the data and the ids (a
//! copy on the CPU backends, a device sync on a GPU), a rayon kernel keeping a sorted buffer of
//! `k` per segment and column (`cpu::kernels::topk_rows`, comparing integer rank keys), and
//! the values and rows written back to the data's device.

use burn::backend::{Backend, Scalar, TensorMetadata, tensor::FloatTensor, tensor::IntTensor};
use burn::tensor::{DType, IntDType, Shape, TensorData};
use rayon::prelude::*;

use super::read_host;
use crate::host::{CsrPlan, topk_rows};

/// Values `[N, k, C]` and rows `[N, k, C]` (the ids' dtype) of the `k` largest (or smallest)
/// rows of each segment, per column (see `SegmentBackend::segment_topk`).
pub fn topk<B: Backend>(
    data: FloatTensor<B>,
    ids: IntTensor<B>,
    n: usize,
    k: usize,
    largest: bool,
) -> (FloatTensor<B>, IntTensor<B>) {
    let (shape, dtype, device) = (data.shape(), data.dtype(), data.device());
    let ([e, c], ids_dtype) = ([shape[0], shape[1]], IntDType::from(ids.dtype()));
    let out_shape = Shape::new([n, k, c]);
    let fill = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    if k == 0 || n == 0 || c == 0 || e == 0 {
        // Nothing to select (and no kernel launched on an empty tensor).
        let values = B::float_full(
            out_shape.clone(),
            Scalar::Float(fill),
            &device,
            dtype.into(),
        );
        let rows = B::int_full(out_shape, Scalar::Int(-1), &device, ids_dtype);
        return (values, rows);
    }
    let host_ids: Vec<i64> = read_host(B::int_into_data(ids), "top-k")
        .iter::<i64>()
        .collect();
    let plan = CsrPlan::new(&host_ids, n);
    let values = read_host(B::float_into_data(data), "top-k");
    let (rows, picked) = match values.dtype() {
        DType::F32 => {
            let values = values.as_slice::<f32>().expect("f32 data");
            let rows = topk_rows(values, c, &plan, k, largest);
            let picked = picked_values(values, &rows, c, fill as f32);
            (rows, TensorData::new(picked, out_shape.clone()))
        }
        _ => {
            let values: Vec<f64> = values.iter::<f64>().collect();
            let rows = topk_rows(&values, c, &plan, k, largest);
            let picked = picked_values(&values, &rows, c, fill);
            let picked = TensorData::new(picked, out_shape.clone()).convert_dtype(dtype);
            (rows, picked)
        }
    };
    let rows = TensorData::new(rows, out_shape).convert_dtype(ids_dtype.into());
    (
        B::float_from_data(picked, &device),
        B::int_from_data(rows, &device),
    )
}

/// `data[rows[i]]` of column `i % c` for every entry of `rows` (`[N, k, c]`), `fill` at -1.
pub(crate) fn picked_values<T: Copy + Send + Sync>(
    data: &[T],
    rows: &[i64],
    c: usize,
    fill: T,
) -> Vec<T> {
    let mut out = vec![fill; rows.len()];
    out.par_chunks_mut(c)
        .zip(rows.par_chunks(c))
        .with_min_len(1024)
        .for_each(|(out, rows)| {
            for (col, (o, &r)) in out.iter_mut().zip(rows).enumerate() {
                if r >= 0 {
                    *o = data[r as usize * c + col];
                }
            }
        });
    out
}
