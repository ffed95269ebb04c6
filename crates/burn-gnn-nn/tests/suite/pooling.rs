//! `global_sort_pool` against a reference: a stable sort of each graph's nodes by their last
//! feature, descending, the first `k` rows concatenated and zero-padded.

use burn_gnn_graph::batch;
use burn_gnn_nn::global_sort_pool;

use crate::common::*;

#[test]
fn sort_pool_takes_each_graphs_top_nodes_by_the_last_feature() {
    const C: usize = 2;
    let sizes = [4usize, 1, 3];
    // Graph 0 ties on its last feature (rows 1 and 3); graph 2's last feature has a -inf.
    let x: Vec<f64> = vec![
        0.5,
        1.0,
        /**/ 2.0,
        3.0,
        /**/ -1.0,
        -2.0,
        /**/ 4.0,
        3.0, // graph 0
        7.0,
        0.25, // graph 1
        1.5,
        f64::NEG_INFINITY,
        /**/ 2.5,
        0.0,
        /**/ 3.5,
        -0.5, // graph 2
    ];
    for k in [1, 3, 5] {
        let mut want = Vec::new();
        let mut start = 0;
        for &size in &sizes {
            let mut nodes: Vec<usize> = (start..start + size).collect();
            nodes.sort_by(|&a, &b| x[b * C + 1].partial_cmp(&x[a * C + 1]).unwrap());
            for rank in 0..k {
                match nodes.get(rank) {
                    Some(&i) => want.extend_from_slice(&x[i * C..(i + 1) * C]),
                    None => want.extend_from_slice(&[0.0; C]),
                }
            }
            start += size;
        }
        for (name, device) in forward_devices() {
            let parts: Vec<_> = sizes.iter().map(|&n| graph(&[], &[], n, &device)).collect();
            let g = batch(&parts).unwrap();
            let out = global_sort_pool(floats(&x, [8, C], &device), &g, k);
            assert_eq!(out.dims(), [3, k * C], "{name}");
            let got = host(out);
            let same = got
                .iter()
                .zip(&want)
                .all(|(g, w)| g == w || (g.is_nan() && w.is_nan()));
            assert!(same, "k = {k} on {name}:\n got  {got:?}\n want {want:?}");
        }
    }
}

#[test]
fn sort_pool_gradients_reach_the_selected_rows() {
    for (name, device) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let g = batch(&[graph(&[], &[], 3, &device), graph(&[], &[], 2, &device)]).unwrap();
        let x = floats(&[1.0, 3.0, 2.0, 5.0, 4.0], [5, 1], &device).require_grad();
        let out = global_sort_pool(x.clone(), &g, 2); // [[3, 2], [5, 4]]
        let w = floats(&[1.0, 10.0, 100.0, 1000.0], [2, 2], &device);
        let grad = host(x.grad(&(out * w).sum().backward()).expect("a gradient"));
        assert_eq!(grad, [0.0, 1.0, 10.0, 100.0, 1000.0], "{name}");
    }
}
