//! Devices, seeded random graphs, host helpers.

#![allow(deprecated)] // Device::ndarray: deprecated in Burn 0.22, still supported.

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::GraphsTuple;

/// Every backend this build can test, and whether it records gradients.
pub fn devices() -> Vec<(&'static str, Device)> {
    #[allow(unused_mut)]
    let mut d = vec![
        ("flex", Device::flex()),
        ("ndarray", Device::ndarray()),
        ("autodiff<flex>", Device::flex().autodiff()),
    ];
    // Without a Vulkan adapter: skipped with one printed line (a failure with
    // BURN_GNN_REQUIRE_WGPU=1).
    #[cfg(feature = "wgpu")]
    if burn_segment::wgpu_test_targets() {
        let w = Device::wgpu(burn::tensor::DeviceKind::DefaultDevice);
        d.push(("wgpu", w.clone()));
        d.push(("autodiff<wgpu>", w.autodiff()));
    }
    d
}

/// The devices for forward-only checks: every device but `autodiff<wgpu>`, whose forward
/// kernels are wgpu's (the software driver compiles each new kernel shape: the slow part).
pub fn forward_devices() -> Vec<(&'static str, Device)> {
    devices()
        .into_iter()
        .filter(|(name, _)| *name != "autodiff<wgpu>")
        .collect()
}

/// A small deterministic generator (SplitMix64), so that every run sees the same graphs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in [-1, 1).
    pub fn float(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A random edge list over `n` nodes with `e` edges (duplicates and self loops possible); the
/// last node is isolated when `n >= 3`.
pub fn random_edges(rng: &mut Rng, n: usize, e: usize) -> (Vec<i64>, Vec<i64>) {
    let reach = if n >= 3 { n - 1 } else { n };
    if reach == 0 {
        return (vec![], vec![]);
    }
    (0..e)
        .map(|_| (rng.below(reach) as i64, rng.below(reach) as i64))
        .unzip()
}

pub fn graph(s: &[i64], r: &[i64], n: usize, device: &Device) -> GraphsTuple {
    GraphsTuple::from_coo(s, r, n, device).unwrap()
}

pub fn floats(values: &[f64], shape: [usize; 2], device: &Device) -> Tensor<2> {
    Tensor::from_data(
        TensorData::new(values.iter().map(|&v| v as f32).collect::<Vec<_>>(), shape),
        device,
    )
}

pub fn random_x(rng: &mut Rng, n: usize, d: usize, device: &Device) -> (Vec<f64>, Tensor<2>) {
    let v: Vec<f64> = (0..n * d).map(|_| rng.float()).collect();
    let t = floats(&v, [n, d], device);
    (v, t)
}

pub fn host<const D: usize>(t: Tensor<D>) -> Vec<f64> {
    t.into_data().iter::<f64>().collect()
}

/// Asserts two float vectors agree to `tol` (absolute + relative).
pub fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: entry {i}: got {g}, want {w}"
        );
    }
}

pub fn ints(values: &[i64], device: &Device) -> Tensor<1, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), [values.len()]), device)
}
