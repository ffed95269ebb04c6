//! `PnaConv` against an f64 reference written from the paper's formulas (PyG's layout of the
//! towers, aggregators and scalers) with the layer's own weights; and its conformance.

use burn::nn::Linear;
use burn_gnn_nn::{PnaConv, PnaConvConfig};

use crate::common::*;

/// One row through a linear layer.
fn linear(l: &Linear, x: &[f64]) -> Vec<f64> {
    let (w, b) = (host(l.weight.val()), host(l.bias.as_ref().unwrap().val()));
    let [d_in, d_out] = l.weight.dims();
    assert_eq!(x.len(), d_in);
    (0..d_out)
        .map(|j| b[j] + (0..d_in).map(|k| x[k] * w[k * d_out + j]).sum::<f64>())
        .collect()
}

/// A stack of linear layers with ReLU between them.
fn mlp(layers: &[Linear], x: &[f64]) -> Vec<f64> {
    let mut h = x.to_vec();
    for (l, layer) in layers.iter().enumerate() {
        if l > 0 {
            h.iter_mut().for_each(|v| *v = v.max(0.0));
        }
        h = linear(layer, &h);
    }
    h
}

/// The layer on the host: the paper's formulas with the default aggregators (mean, min, max,
/// clamped std; 0 without messages) and scalers (identity, amplification, attenuation).
#[allow(clippy::too_many_arguments)]
fn reference(
    layer: &PnaConv,
    x: &[f64],
    d: usize,
    s: &[i64],
    r: &[i64],
    e: Option<&[f64]>,
    d_e: usize,
    n: usize,
) -> Vec<f64> {
    let towers = layer.pre_nns.len();
    let f = if layer.divide_input { d / towers } else { d };
    let part = |v: &[f64], t: usize| -> Vec<f64> {
        if layer.divide_input {
            v[t * f..(t + 1) * f].to_vec()
        } else {
            v.to_vec()
        }
    };
    let row = |v: &[f64], i: usize, w: usize| v[i * w..(i + 1) * w].to_vec();
    let mut out = Vec::new();
    for i in 0..n {
        let incoming: Vec<usize> = (0..r.len()).filter(|&k| r[k] as usize == i).collect();
        let deg = (incoming.len() as f64).max(1.0);
        let amplify = (deg + 1.0).ln() / layer.avg_log_degree;
        let mut towers_out = Vec::new();
        for t in 0..towers {
            let messages: Vec<Vec<f64>> = incoming
                .iter()
                .map(|&k| {
                    let mut h = part(&row(x, i, d), t);
                    h.extend(part(&row(x, s[k] as usize, d), t));
                    if let (Some(e), Some(enc)) = (e, &layer.edge_encoder) {
                        h.extend(linear(enc, &row(e, k, d_e)));
                    }
                    mlp(&layer.pre_nns[t], &h)
                })
                .collect();
            let column = |c: usize| messages.iter().map(|m| m[c]).collect::<Vec<f64>>();
            let stat = |agg: usize, c: usize| -> f64 {
                let v = column(c);
                if v.is_empty() {
                    return 0.0;
                }
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                match agg {
                    0 => mean,
                    1 => v.iter().copied().fold(f64::INFINITY, f64::min),
                    2 => v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    _ => {
                        let var =
                            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
                        if var <= 1e-5 { 0.0 } else { var.sqrt() }
                    }
                }
            };
            let aggregated: Vec<f64> = (0..4)
                .flat_map(|a| (0..f).map(move |c| (a, c)))
                .map(|(a, c)| stat(a, c))
                .collect();
            let mut input = part(&row(x, i, d), t);
            for scale in [1.0, amplify, 1.0 / amplify] {
                input.extend(aggregated.iter().map(|v| v * scale));
            }
            towers_out.extend(mlp(&layer.post_nns[t], &input));
        }
        out.extend(linear(&layer.lin, &towers_out));
    }
    out
}

#[test]
fn pna_conv_matches_its_formulas() {
    let mut rng = Rng(41);
    let (n, d, d_e) = (7, 4, 2);
    // Node 6 receives nothing.
    let (s, r) = random_edges(&mut rng, 6, 16);
    for (name, device) in forward_devices() {
        let (xv, x) = random_x(&mut rng, n, d, &device);
        let (ev, e) = random_x(&mut rng, s.len(), d_e, &device);
        let g = graph(&s, &r, n, &device);
        let histogram = PnaConvConfig::in_degree_histogram(std::slice::from_ref(&g));
        let configs = [
            PnaConvConfig::new(d, 6, histogram.clone())
                .with_towers(2)
                .with_pre_layers(2)
                .with_edge_dim(Some(d_e)),
            PnaConvConfig::new(d, 4, histogram.clone())
                .with_towers(2)
                .with_post_layers(2)
                .with_divide_input(true),
        ];
        for config in configs {
            let layer = config.init(&device);
            let edges = config.edge_dim.map(|_| e.clone());
            let got = host(layer.forward(x.clone(), &g, edges));
            let edge_values = config.edge_dim.map(|_| ev.as_slice());
            let want = reference(&layer, &xv, d, &s, &r, edge_values, d_e, n);
            assert_close(&got, &want, 1e-4, &format!("PnaConv {config:?} on {name}"));
        }
    }
}

#[test]
fn pna_conv_rejects_bad_configurations() {
    let device = burn::tensor::Device::flex();
    let histogram = vec![1, 2, 3];
    for bad in [
        PnaConvConfig::new(4, 6, histogram.clone()).with_towers(4),
        PnaConvConfig::new(3, 4, histogram.clone())
            .with_towers(2)
            .with_divide_input(true),
        PnaConvConfig::new(4, 4, vec![]),
        PnaConvConfig::new(4, 4, histogram.clone()).with_scalers(vec![]),
        PnaConvConfig::new(4, 4, histogram).with_pre_layers(0),
        PnaConvConfig::new(4, 4, vec![5]),
    ] {
        assert!(bad.check().is_err(), "{bad:?}");
        assert!(crate::harness::panics(|| bad.init(&device)), "{bad:?}");
    }
}
