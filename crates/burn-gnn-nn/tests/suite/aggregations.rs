//! The statistics aggregations (`var:C`, `std:C`, `median`, `quantile:Q[:interp]`, `sort:K`)
//! against references on the host, with nodes that receive no message or fewer than `C + 1`.

use burn_gnn_nn::Aggregation;
use burn_segment::QuantileInterpolation;

use crate::common::*;

/// Each node's messages, column `c`, in message order.
fn column(x: &[f64], d: usize, r: &[i64], node: usize, c: usize) -> Vec<(usize, f64)> {
    (0..r.len())
        .filter(|&e| r[e] as usize == node)
        .map(|e| (e, x[e * d + c]))
        .collect()
}

/// The reference of one aggregation per (node, column), `[n, d]` (`sort:K` is laid out apart).
fn reference(aggr: &str, x: &[f64], d: usize, r: &[i64], n: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for node in 0..n {
        if let Some(k) = aggr
            .strip_prefix("sort:")
            .map(|k| k.parse::<usize>().unwrap())
        {
            // The k messages with the largest last feature, ties to the earlier message.
            let mut msgs: Vec<(usize, f64)> = column(x, d, r, node, d - 1);
            msgs.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
            for rank in 0..k {
                match msgs.get(rank) {
                    Some(&(e, _)) => out.extend_from_slice(&x[e * d..(e + 1) * d]),
                    None => out.extend(std::iter::repeat_n(0.0, d)),
                }
            }
            continue;
        }
        for c in 0..d {
            let mut v: Vec<f64> = column(x, d, r, node, c).into_iter().map(|m| m.1).collect();
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            let m = v.len();
            let mean = v.iter().sum::<f64>() / m.max(1) as f64;
            let squares: f64 = v.iter().map(|x| (x - mean).powi(2)).sum();
            let at = |q: f64| {
                let h = q * (m - 1) as f64;
                (
                    v[h.floor() as usize],
                    v[h.ceil() as usize],
                    h - h.floor(),
                    h.floor() as usize,
                )
            };
            out.push(match aggr {
                _ if m == 0 => 0.0,
                "var:1" if m < 2 => 0.0,
                "var:1" => squares / (m - 1) as f64,
                "std:1" if m < 2 => 0.0,
                "std:1" => {
                    let var = squares / (m - 1) as f64;
                    if var <= 1e-5 { 0.0 } else { var.sqrt() }
                }
                "median" => v[(m - 1) / 2],
                "quantile:0.75" => {
                    let (a, b, f, _) = at(0.75);
                    a + (b - a) * f
                }
                "quantile:0.5:nearest" => {
                    let (a, b, f, i) = at(0.5);
                    if f < 0.5 || (f == 0.5 && i % 2 == 0) {
                        a
                    } else {
                        b
                    }
                }
                other => panic!("no reference for {other}"),
            });
        }
    }
    out
}

#[test]
fn statistics_aggregations_match_their_references() {
    let mut rng = Rng(31);
    let (n, e, d) = (7, 20, 3);
    // Node 6 receives nothing; node 5 exactly one message.
    let r: Vec<i64> = (0..e)
        .map(|k| if k == 0 { 5 } else { rng.below(5) as i64 })
        .collect();
    for (name, dev) in forward_devices() {
        let (xv, x) = random_x(&mut rng, e, d, &dev);
        for aggr in [
            "var:1",
            "std:1",
            "median",
            "quantile:0.75",
            "quantile:0.5:nearest",
            "sort:2",
        ] {
            let a: Aggregation = aggr.parse().unwrap();
            let got = host(a.aggregate(x.clone(), ints(&r, &dev), n));
            let want = reference(aggr, &xv, d, &r, n);
            assert_close(&got, &want, 1e-5, &format!("{aggr} on {name}"));
        }
    }
}

#[test]
fn statistics_aggregations_parse_and_reject_bad_arguments() {
    let parse = |s: &str| s.parse::<Aggregation>();
    assert_eq!(parse("var:1").unwrap(), Aggregation::VarCorrected(1));
    assert_eq!(parse("std:0").unwrap(), Aggregation::StdCorrected(0));
    assert_eq!(parse("median").unwrap(), Aggregation::Median);
    assert_eq!(
        parse("quantile:0.9").unwrap(),
        Aggregation::Quantile(0.9, QuantileInterpolation::Linear)
    );
    assert_eq!(
        parse("quantile:0.5:midpoint").unwrap(),
        Aggregation::Quantile(0.5, QuantileInterpolation::Midpoint)
    );
    assert_eq!(parse("sort:4").unwrap(), Aggregation::Sort(4));
    assert_eq!(parse("sort:4").unwrap().width(), 4);
    for bad in [
        "quantile:1.5",
        "quantile:0.5:cubic",
        "quantile",
        "sort:0",
        "var:-1",
        "std:x",
    ] {
        assert!(parse(bad).is_err(), "{bad}");
    }
}

/// The weighted aggregations (edge weights) against their formulas in f64: `Σ w m`,
/// `Σ w m / Σ w`, the weighted variance over `Σ w − C` and its clamped square root, 0 for a
/// node whose weights total 0 (node 4: one message of weight 0), no message (node 6) or at
/// most `C`; a concatenation of them; a typed error for an aggregation without a weighted form.
#[test]
fn weighted_aggregations_match_their_formulas() {
    use burn_segment::{SegmentIds, SegmentWeights};
    let mut rng = Rng(47);
    let (n, e, d) = (7, 24, 2);
    let r: Vec<i64> = (0..e)
        .map(|k| if k == 0 { 4 } else { rng.below(4) as i64 })
        .collect();
    let w: Vec<f64> = (0..e)
        .map(|k| {
            if k == 0 {
                0.0
            } else {
                rng.below(5) as f64 * 0.5
            }
        })
        .collect();
    let reference = |aggr: &str, x: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for node in 0..n {
            for c in 0..d {
                let msgs: Vec<(f64, f64)> = (0..e)
                    .filter(|&k| r[k] as usize == node)
                    .map(|k| (w[k], x[k * d + c]))
                    .collect();
                let total: f64 = msgs.iter().map(|m| m.0).sum();
                let sum: f64 = msgs.iter().map(|(w, x)| w * x).sum();
                let mean = sum / total;
                let var = |corr: f64| {
                    let sq: f64 = msgs.iter().map(|(w, x)| w * (x - mean).powi(2)).sum();
                    if total <= corr {
                        0.0
                    } else {
                        sq / (total - corr)
                    }
                };
                out.push(match aggr {
                    "sum" => sum,
                    _ if total == 0.0 => 0.0,
                    "mean" => mean,
                    "var" => var(0.0),
                    "std:1" => {
                        let v = var(1.0);
                        if v <= 1e-5 { 0.0 } else { v.sqrt() }
                    }
                    other => panic!("no reference for {other}"),
                });
            }
        }
        out
    };
    for (name, dev) in forward_devices() {
        let (xv, x) = random_x(&mut rng, e, d, &dev);
        let index = SegmentIds::new(ints(&r, &dev), n);
        let weights = SegmentWeights::new(floats(&w, [e, 1], &dev).reshape([e])).unwrap();
        for aggr in ["sum", "mean", "var", "std:1"] {
            let a: Aggregation = aggr.parse().unwrap();
            let got = host(
                a.aggregate_weighted_with(x.clone(), &weights, &index)
                    .unwrap(),
            );
            assert_close(
                &got,
                &reference(aggr, &xv),
                1e-5,
                &format!("{aggr} on {name}"),
            );
        }
        let both = Aggregation::multi(&["sum", "mean"]).unwrap();
        let got = host(
            both.aggregate_weighted_with(x.clone(), &weights, &index)
                .unwrap(),
        );
        let (sum, mean) = (reference("sum", &xv), reference("mean", &xv));
        let want: Vec<f64> = (0..n)
            .flat_map(|node| {
                let row = |v: &[f64]| v[node * d..(node + 1) * d].to_vec();
                [row(&sum), row(&mean)].concat()
            })
            .collect();
        assert_close(&got, &want, 1e-5, &format!("sum + mean on {name}"));
        let max: Aggregation = "max".parse().unwrap();
        assert!(
            max.aggregate_weighted_with(x, &weights, &index).is_err(),
            "max has no weighted form ({name})"
        );
    }
}
