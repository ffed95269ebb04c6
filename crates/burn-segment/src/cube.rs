//! The wgpu (CubeCL) backend: composite defaults until its own kernels land.

use burn_cubecl::CubeBackend;

use crate::SegmentBackend;

impl SegmentBackend for CubeBackend {}
