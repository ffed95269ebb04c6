//! Seeded synthetic point clouds: points on the surfaces of five solids, randomly rotated, with
//! Gaussian noise — a small, downloadable-free classification task for point-cloud models
//! (DGCNN's `DynamicEdgeConv`, PointNet++).

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::{GraphsTuple, batch};

use crate::DataError;
use crate::synthetic::SplitMix64;

/// The solids whose surfaces [`point_clouds`] samples, all centred at the origin and about 2
/// units across.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolidShape {
    /// Unit sphere.
    Sphere,
    /// The cube `[-1, 1]³`.
    Cube,
    /// Radius 1, `z ∈ [-1, 1]`, with its two caps.
    Cylinder,
    /// Apex at `z = 1`, base of radius 1 at `z = -1`, with its base.
    Cone,
    /// Ring radius 1, tube radius 0.35, around the `z` axis.
    Torus,
}

/// The five shapes, in label order.
pub const SOLID_SHAPES: [SolidShape; 5] = [
    SolidShape::Sphere,
    SolidShape::Cube,
    SolidShape::Cylinder,
    SolidShape::Cone,
    SolidShape::Torus,
];

/// One cloud: `points` (`[n, 3]`, row-major) and its shape's label (its index in
/// [`SOLID_SHAPES`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PointCloud {
    /// `[n, 3]` positions, row-major.
    pub points: Vec<f32>,
    /// The index of its shape in [`SOLID_SHAPES`].
    pub label: usize,
}

const TORUS_TUBE: f64 = 0.35;

impl SolidShape {
    /// A point uniformly distributed on the surface (by area).
    pub fn sample(self, rng: &mut SplitMix64) -> [f64; 3] {
        use std::f64::consts::PI;
        let u = |rng: &mut SplitMix64| rng.next_f64();
        let angle = |rng: &mut SplitMix64| 2.0 * PI * rng.next_f64();
        match self {
            SolidShape::Sphere => loop {
                let p = [rng.normal(), rng.normal(), rng.normal()];
                let norm = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
                if norm > 1e-9 {
                    break [p[0] / norm, p[1] / norm, p[2] / norm];
                }
            },
            SolidShape::Cube => {
                let (face, a, b) = (
                    rng.below(6) as usize,
                    2.0 * u(rng) - 1.0,
                    2.0 * u(rng) - 1.0,
                );
                let side = if face % 2 == 0 { 1.0 } else { -1.0 };
                match face / 2 {
                    0 => [side, a, b],
                    1 => [a, side, b],
                    _ => [a, b, side],
                }
            }
            SolidShape::Cylinder => {
                // Side 4π, caps 2π: two thirds of the points on the side.
                let t = angle(rng);
                if u(rng) < 2.0 / 3.0 {
                    [t.cos(), t.sin(), 2.0 * u(rng) - 1.0]
                } else {
                    let (r, z) = (u(rng).sqrt(), if u(rng) < 0.5 { 1.0 } else { -1.0 });
                    [r * t.cos(), r * t.sin(), z]
                }
            }
            SolidShape::Cone => {
                // Side π·√5, base π; on the side the density grows with the radius.
                let t = angle(rng);
                let side = 5f64.sqrt() / (5f64.sqrt() + 1.0);
                if u(rng) < side {
                    let r = u(rng).sqrt();
                    [r * t.cos(), r * t.sin(), 1.0 - 2.0 * r]
                } else {
                    let r = u(rng).sqrt();
                    [r * t.cos(), r * t.sin(), -1.0]
                }
            }
            SolidShape::Torus => loop {
                // Area element ∝ 1 + r cos φ: accept in proportion.
                let (t, phi) = (angle(rng), angle(rng));
                if u(rng) * (1.0 + TORUS_TUBE) <= 1.0 + TORUS_TUBE * phi.cos() {
                    let ring = 1.0 + TORUS_TUBE * phi.cos();
                    break [ring * t.cos(), ring * t.sin(), TORUS_TUBE * phi.sin()];
                }
            },
        }
    }
}

/// A uniformly random rotation (from a normalised Gaussian quaternion), row-major.
fn random_rotation(rng: &mut SplitMix64) -> [[f64; 3]; 3] {
    let q: [f64; 4] = [rng.normal(), rng.normal(), rng.normal(), rng.normal()];
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-12);
    let [w, x, y, z] = q.map(|v| v / n);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// `count` clouds of `points` points each, the shapes taking turns (cloud `i` is shape
/// `i % 5`), each randomly rotated, with Gaussian noise of std `noise` per coordinate. The same
/// `seed` gives the same clouds; cloud `i` depends only on `seed` and `i`.
pub fn point_clouds(count: usize, points: usize, noise: f64, seed: u64) -> Vec<PointCloud> {
    (0..count)
        .map(|i| {
            let mut rng = SplitMix64::new(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let label = i % SOLID_SHAPES.len();
            let rot = random_rotation(&mut rng);
            let mut out = Vec::with_capacity(points * 3);
            for _ in 0..points {
                let p = SOLID_SHAPES[label].sample(&mut rng);
                for row in rot {
                    let v = row[0] * p[0] + row[1] * p[1] + row[2] * p[2];
                    out.push((v + noise * rng.normal()) as f32);
                }
            }
            PointCloud { points: out, label }
        })
        .collect()
}

/// The clouds `idx` of `clouds` as one batch: a graph per cloud (its points as nodes with their
/// positions as features `[Σ n, 3]`, no edges) and the labels `[B]`.
///
/// # Errors
/// [`DataError`] if an index is out of range.
pub fn point_cloud_batch(
    clouds: &[PointCloud],
    idx: &[usize],
    device: &Device,
) -> Result<(GraphsTuple, Tensor<1, Int>), DataError> {
    let mut graphs = Vec::with_capacity(idx.len());
    let mut labels = Vec::with_capacity(idx.len());
    for &i in idx {
        let cloud = clouds
            .get(i)
            .ok_or_else(|| DataError::InvalidArgument(format!("cloud {i} of {}", clouds.len())))?;
        let n = cloud.points.len() / 3;
        let x = Tensor::<2>::from_data(TensorData::new(cloud.points.clone(), [n, 3]), device);
        let g = GraphsTuple::from_coo(&[], &[], n, device)?.with_nodes(x)?;
        graphs.push(g);
        labels.push(cloud.label as i64);
    }
    let labels = Tensor::from_data(TensorData::new(labels, [idx.len()]), device);
    Ok((batch(&graphs)?, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_lie_on_their_surfaces() {
        let mut rng = SplitMix64::new(1);
        for _ in 0..500 {
            let [x, y, z] = SolidShape::Sphere.sample(&mut rng);
            assert!(((x * x + y * y + z * z).sqrt() - 1.0).abs() < 1e-12);
            let p = SolidShape::Cube.sample(&mut rng);
            assert!((p.iter().fold(0f64, |m, v| m.max(v.abs())) - 1.0).abs() < 1e-12);
            let [x, y, z] = SolidShape::Cylinder.sample(&mut rng);
            let r = (x * x + y * y).sqrt();
            assert!((r - 1.0).abs() < 1e-12 || ((z.abs() - 1.0).abs() < 1e-12 && r <= 1.0));
            let [x, y, z] = SolidShape::Cone.sample(&mut rng);
            let r = (x * x + y * y).sqrt();
            assert!((z - (1.0 - 2.0 * r)).abs() < 1e-12 || (z == -1.0 && r <= 1.0));
            let [x, y, z] = SolidShape::Torus.sample(&mut rng);
            let ring = (x * x + y * y).sqrt() - 1.0;
            assert!(((ring * ring + z * z).sqrt() - TORUS_TUBE).abs() < 1e-12);
        }
    }

    #[test]
    fn clouds_are_seeded_rotated_and_take_turns() {
        let a = point_clouds(7, 50, 0.0, 3);
        assert_eq!(a, point_clouds(7, 50, 0.0, 3));
        assert_ne!(a, point_clouds(7, 50, 0.0, 4));
        let labels: Vec<usize> = a.iter().map(|c| c.label).collect();
        assert_eq!(labels, [0, 1, 2, 3, 4, 0, 1]);
        // A rotation keeps the sphere's points at radius 1, and moves the cube off its axes.
        for p in a[0].points.chunks(3) {
            let r = p.iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
            assert!((r - 1.0).abs() < 1e-6);
        }
        let on_axes = a[1]
            .points
            .chunks(3)
            .all(|p| p.iter().any(|v| (v.abs() - 1.0).abs() < 1e-6));
        assert!(!on_axes, "the cube was not rotated");
    }
}
