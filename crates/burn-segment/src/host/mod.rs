//! Host code that no backend owns: the CSR plan of a set of segment ids ([`CsrPlan`]), the id
//! scan and the counting sort that build it, the element traits and SIMD dispatch the CPU
//! kernels are written over, and the host selection kernels (top-k, quantiles) that the
//! composite path runs too. `plan/`, the CPU backend and the composite defaults import it; it
//! imports none of them.

pub(crate) mod csr;
pub(crate) mod elem;
mod group;
pub(crate) mod quantile;
mod rows;
pub(crate) mod scan;
pub(crate) mod simd;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod topk;

pub(crate) use csr::CsrPlan;
pub(crate) use elem::{Elem, FloatElem, IdElem};
pub use quantile::QuantileInterpolation;
pub(crate) use quantile::quantile_rows;
pub(crate) use rows::Rows;
pub(crate) use scan::{Scan, bad_id, scan_ids};
pub(crate) use topk::{before, picked_values, topk_rows};
