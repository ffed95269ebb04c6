//! Devices the suite runs on, random graphs, and host helpers.

#![allow(deprecated)] // Device::ndarray: deprecated in Burn 0.22, still supported.

use std::collections::BTreeMap;

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_gnn_graph::{FeatureData, FeatureSetData, FeatureValues, GraphData, GraphsTuple};
use proptest::prelude::*;

/// Every backend this build can test; `wgpu` is added by the crate's `wgpu` feature where the
/// machine has a Vulkan adapter.
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
        d.push((
            "wgpu",
            Device::wgpu(burn::tensor::DeviceKind::DefaultDevice),
        ));
    }
    d
}

pub fn ints(values: &[i64], device: &Device) -> Tensor<1, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), [values.len()]), device)
}

pub fn floats<const D: usize>(values: &[f32], shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::from_data(TensorData::new(values.to_vec(), shape), device)
}

pub fn host_f32<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().iter::<f32>().collect()
}

pub fn host_i64<const D: usize>(t: Tensor<D, Int>) -> Vec<i64> {
    t.into_data().iter::<i64>().collect()
}

pub fn host_bool(t: Tensor<1, burn::tensor::Bool>) -> Vec<bool> {
    t.into_data().iter::<bool>().collect()
}

/// The float values of a feature, whatever its host dtype.
pub fn values_f64(f: &FeatureData) -> Vec<f64> {
    match &f.values {
        FeatureValues::F32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::F64(v) => v.clone(),
        FeatureValues::I32(v) => v.iter().map(|&x| x as f64).collect(),
        FeatureValues::I64(v) => v.iter().map(|&x| x as f64).collect(),
    }
}

/// A graph's host mirror with int features widened to i64, so that mirrors taken on devices
/// with different default int dtypes compare equal.
pub fn mirror(g: &GraphsTuple) -> GraphData {
    let mut d = g.to_graph_data().expect("supported dtypes");
    for set in [&mut d.nodes, &mut d.edges, &mut d.globals] {
        for f in set.main.iter_mut().chain(set.named.values_mut()) {
            if let FeatureValues::I32(v) = &f.values {
                f.values = FeatureValues::I64(v.iter().map(|&x| x as i64).collect());
            }
        }
    }
    d
}

/// One random graph per entry of `n_node`, as host data: f32 node features `[n, 2]`, f32 edge
/// weights `[e]` in 1..=4, an int node label, f32 globals `[g, 3]`. Values are small integers
/// (exact in f32).
pub fn graph_data(
    n_node: Vec<usize>,
    edge_seeds: Vec<Vec<(usize, usize, i32)>>,
    values: Vec<i32>,
) -> GraphData {
    let mut d = GraphData::default();
    let mut first = 0usize;
    let mut w = Vec::new();
    for (n, seeds) in n_node.iter().zip(&edge_seeds) {
        let kept: Vec<_> = if *n == 0 {
            vec![]
        } else {
            seeds.iter().collect()
        };
        for (s, r, x) in &kept {
            d.senders.push((first + s % n) as i64);
            d.receivers.push((first + r % n) as i64);
            w.push(1.0 + (x.rem_euclid(4)) as f32);
        }
        d.n_node.push(*n as i64);
        d.n_edge.push(kept.len() as i64);
        first += n;
    }
    let v = |i: usize| values[i % values.len()] as f32 / 4.0;
    d.num_nodes = first;
    let f = |shape: Vec<usize>, values: Vec<f32>| FeatureData {
        shape,
        values: FeatureValues::F32(values),
    };
    d.nodes.main = Some(f(vec![first, 2], (0..2 * first).map(v).collect()));
    d.nodes.named.insert(
        "label".into(),
        FeatureData {
            shape: vec![first],
            values: FeatureValues::I64((0..first as i64).map(|i| i % 3).collect()),
        },
    );
    d.edges = FeatureSetData {
        main: Some(f(vec![w.len()], w)),
        named: BTreeMap::new(),
    };
    let g = n_node.len();
    d.globals.main = Some(f(vec![g, 3], (0..3 * g).map(|i| v(i + 7)).collect()));
    d
}

/// Random graph data: 1 to `max_graphs` graphs of 0 to 5 nodes and 0 to 6 edges each.
pub fn arb_graph(max_graphs: usize) -> impl Strategy<Value = GraphData> {
    (
        prop::collection::vec(0usize..6, 1..=max_graphs),
        prop::collection::vec(
            prop::collection::vec((0usize..6, 0usize..6, -8i32..8), 0..7),
            max_graphs,
        ),
        prop::collection::vec(-8i32..8, 1..16),
    )
        .prop_map(|(n, e, v)| graph_data(n.clone(), e[..n.len()].to_vec(), v))
}

pub fn build(d: &GraphData, device: &Device) -> GraphsTuple {
    GraphsTuple::from_graph_data(d, device).expect("generated graphs are valid")
}

/// Sorted (sender, receiver, weight) triples of a graph's edges.
pub fn triples(g: &GraphsTuple) -> Vec<(i64, i64, i64)> {
    let (s, r) = g.to_coo();
    let w: Vec<f32> = g
        .edges()
        .map(|f| f.to_data().iter::<f32>().collect())
        .unwrap_or_else(|| vec![1.0; s.len()]);
    let mut t: Vec<_> = s
        .into_iter()
        .zip(r)
        .zip(w)
        .map(|((s, r), w)| (s, r, w as i64))
        .collect();
    t.sort();
    t
}
