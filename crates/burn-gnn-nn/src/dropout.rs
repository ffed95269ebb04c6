//! Dropout with a fast mask on the CPU backends.
//!
//! Burn 0.22's `Dropout::forward` draws its Bernoulli mask one element at a time through a
//! sampler rebuilt per element; on Cora that was about a third of a GAT training epoch. [`dropout`]
//! computes the same inverted dropout (keep with probability `1 − p`, scale kept values by
//! `1 / (1 − p)`) with the mask drawn on the host from counter-based SplitMix64 (in parallel), one
//! multiply in all, on Flex and NdArray. The stream's seed is one draw of the device's own generator, so
//! `Device::seed` still makes runs repeatable. Other backends call Burn's `Dropout::forward`,
//! whose mask is drawn on the device.

use burn::nn::Dropout;
use burn::tensor::{Device, Distribution, Tensor, TensorData};
use rayon::prelude::*;

/// Whether `device` computes on the host (a mask made there costs no transfer).
#[allow(deprecated)] // Device::ndarray: deprecated in Burn 0.22, still supported.
fn on_host(device: &Device) -> bool {
    let inner = device.clone().inner();
    inner == Device::flex() || inner == Device::ndarray()
}

/// `d.forward(x)`: inverted dropout while training on an autodiff device, the identity
/// otherwise (see the module docs).
pub fn dropout<const D: usize>(d: &Dropout, x: Tensor<D>) -> Tensor<D> {
    let device = x.device();
    if !d.training.is_enabled() || !device.is_autodiff() || d.prob == 0.0 {
        return x;
    }
    if !on_host(&device) {
        return d.forward(x);
    }
    let keep = 1.0 - d.prob;
    let seed: Vec<f32> = Tensor::<1>::random(
        [2],
        Distribution::Uniform(0.0, 16_777_216.0),
        &device.clone().inner(),
    )
    .into_data()
    .convert::<f32>()
    .try_into_vec()
    .expect("f32 after convert");
    let key = ((seed[0] as u64) << 24) ^ (seed[1] as u64) ^ 0x6A09_E667_F3BC_C909;
    let threshold = (keep * 4_294_967_296.0) as u64;
    let scale = (1.0 / keep) as f32;
    let shape = x.shape();
    let n = shape.num_elements();
    let mut mask = vec![0f32; n];
    // Counter-based: pair `i` comes from SplitMix64's output for counter `key + i`, so every
    // chunk is independent (parallel, and vectorised within a chunk).
    mask.par_chunks_mut(1 << 14)
        .enumerate()
        .for_each(|(chunk, values)| {
            let first = (chunk << 13) as u64;
            for (i, pair) in values.chunks_mut(2).enumerate() {
                let mut z =
                    key.wrapping_add((first + i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                for (m, half) in pair.iter_mut().zip([z & 0xFFFF_FFFF, z >> 32]) {
                    *m = f32::from((half < threshold) as u8) * scale;
                }
            }
        });
    let mask = Tensor::<D>::from_data(TensorData::new(mask, shape), (&device, x.dtype()));
    x * mask
}
