//! Dropout with a fast mask on the CPU backends.
//!
//! Burn 0.22's `Dropout::forward` draws its Bernoulli mask one element at a time through a
//! sampler rebuilt per element; on Cora that was about a third of a GAT training epoch. [`dropout`]
//! computes the same inverted dropout (keep with probability `1 − p`, scale kept values by
//! `1 / (1 − p)`) with the mask drawn on the host from a counter-based hash (MurmurHash3's
//! finaliser of the element's index and a key; in parallel and vectorised), one multiply in
//! all, on Flex and NdArray. The stream's seed is one draw of the device's own generator, so
//! `Device::seed` still makes runs repeatable. Other backends call Burn's `Dropout::forward`,
//! whose mask is drawn on the device.
//!
//! Can go when Burn's own `Dropout::forward` on Flex costs no more than this in the gnn bench's
//! GAT epoch.

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
    // `keep < 1` here (`prob > 0`), so the threshold fits in 32 bits.
    let threshold = (keep * 4_294_967_296.0) as u32;
    let scale = (1.0 / keep) as f32;
    let shape = x.shape();
    let n = shape.num_elements();
    let mut mask = vec![0f32; n];
    // Counter-based: element `i` keeps its value when a 32-bit hash of (key, i) falls below the
    // threshold, so every chunk is independent (parallel) and the loop vectorises (32-bit lanes).
    const CHUNK: usize = 1 << 14;
    mask.par_chunks_mut(CHUNK)
        .enumerate()
        // `move`: the closure owns copies of key, threshold and scale, so the compiler keeps
        // them in registers (borrowed, they may alias the mask) and vectorises the loop.
        .for_each(move |(chunk, values)| {
            let first = (chunk * CHUNK) as u64;
            // Chunks never straddle a multiple of 2^32, so the high half is fixed per chunk.
            let k = fmix32((key >> 32) as u32 ^ fmix32((first >> 32) as u32)) ^ key as u32;
            let base = first as u32;
            for (j, m) in values.iter_mut().enumerate() {
                let h = fmix32(base.wrapping_add(j as u32).wrapping_mul(0x9E37_79B9) ^ k);
                *m = if h < threshold { scale } else { 0.0 };
            }
        });
    let mask = Tensor::<D>::from_data(TensorData::new(mask, shape), (&device, x.dtype()));
    x * mask
}

/// MurmurHash3's 32-bit finaliser: a bijection whose output bits each depend on every input bit.
#[inline(always)]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85EB_CA6B);
    h ^= h >> 13;
    h = h.wrapping_mul(0xC2B2_AE35);
    h ^ (h >> 16)
}
