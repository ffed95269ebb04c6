//! Heterogeneous layers against references: RGCN's three weight layouts against an f64
//! reference, and the max / min merge against the separate convs (no implicit 0).

use burn::nn::{Initializer, LinearConfig};
use burn::tensor::Device;
use burn_gnn_nn::{
    Aggregation, BipartiteConv, HeteroConv, HeteroMerge, RelationEdges, RgcnConvConfig, SageConv,
};

use crate::common::*;
use crate::hetero::{D, build, random_host, relations};

/// RGCN against a plain f64 reference, for each decomposition.
#[test]
fn rgcn_matches_reference() {
    let mut rng = Rng(23);
    let (n, d_in, d_out, r) = (6, 4, 6, 3);
    let (s, rc) = random_edges(&mut rng, n, 14);
    let types: Vec<i64> = (0..s.len()).map(|_| rng.below(r) as i64).collect();
    for (dev_name, device) in forward_devices() {
        let g = graph(&s, &rc, n, &device);
        let (xv, x) = random_x(&mut rng, n, d_in, &device);
        for (name, cfg) in [
            ("none", RgcnConvConfig::new(d_in, d_out, r)),
            (
                "bases",
                RgcnConvConfig::new(d_in, d_out, r).with_num_bases(Some(2)),
            ),
            (
                "blocks",
                RgcnConvConfig::new(d_in, d_out, r).with_num_blocks(Some(2)),
            ),
        ] {
            let conv = cfg.init(&device);
            let got = host(conv.forward(x.clone(), &g, ints(&types, &device)));
            // W_r as dense [d_in, d_out] host matrices.
            let w: Vec<Vec<f64>> = match name {
                "none" => {
                    let v = host(conv.weight.as_ref().unwrap().val());
                    v.chunks(d_in * d_out).map(<[f64]>::to_vec).collect()
                }
                "bases" => {
                    let (v, a) = (
                        host(conv.weight.as_ref().unwrap().val()),
                        host(conv.comp.as_ref().unwrap().val()),
                    );
                    (0..r)
                        .map(|ri| {
                            (0..d_in * d_out)
                                .map(|k| {
                                    (0..2)
                                        .map(|b| a[ri * 2 + b] * v[b * d_in * d_out + k])
                                        .sum()
                                })
                                .collect()
                        })
                        .collect()
                }
                _ => {
                    let q = host(conv.blocks.as_ref().unwrap().val()); // [r, 2, 2, 3]
                    (0..r)
                        .map(|ri| {
                            let mut m = vec![0.0; d_in * d_out];
                            for b in 0..2 {
                                for i in 0..2 {
                                    for o in 0..3 {
                                        m[(b * 2 + i) * d_out + b * 3 + o] =
                                            q[((ri * 2 + b) * 2 + i) * 3 + o];
                                    }
                                }
                            }
                            m
                        })
                        .collect()
                }
            };
            let root = host(conv.root.as_ref().unwrap().val());
            let mv = |m: &[f64], row: &[f64]| {
                (0..d_out)
                    .map(|o| (0..d_in).map(|i| row[i] * m[i * d_out + o]).sum::<f64>())
                    .collect::<Vec<_>>()
            };
            let mut want = vec![0.0; n * d_out];
            for i in 0..n {
                let mut acc = mv(&root, &xv[i * d_in..(i + 1) * d_in]);
                for (ri, wr) in w.iter().enumerate() {
                    let nb: Vec<usize> = (0..s.len())
                        .filter(|&e| rc[e] == i as i64 && types[e] == ri as i64)
                        .map(|e| s[e] as usize)
                        .collect();
                    for &j in &nb {
                        let m = mv(wr, &xv[j * d_in..(j + 1) * d_in]);
                        for o in 0..d_out {
                            acc[o] += m[o] / nb.len() as f64;
                        }
                    }
                }
                want[i * d_out..(i + 1) * d_out].copy_from_slice(&acc);
            }
            assert_close(&got, &want, 1e-4, &format!("{dev_name} RGCN {name}"));
        }
        let bad = RgcnConvConfig::new(5, 6, 2).with_num_blocks(Some(2));
        assert!(bad.check().is_err(), "blocks must divide the widths");
        assert!(crate::harness::panics(|| bad.init(&device)));
    }
}

/// Max / min over relations reduce the relations' outputs only: all-negative outputs stay
/// negative (an implicit 0 would win), and equal the elementwise max of the separate convs.
#[test]
fn hetero_max_merge_never_reduces_over_an_implicit_zero() {
    let mut rng = Rng(31);
    let mut h = random_host(&mut rng, [3, 1, 4, 2], true);
    for v in h.x.values_mut() {
        v.iter_mut().for_each(|x| *x = x.abs());
    }
    for (dev_name, device) in forward_devices() {
        let (g, x) = build(&h, &device, None);
        let negative = |device: &Device| SageConv {
            lin_neighbors: LinearConfig::new(D, 2)
                .with_initializer(Initializer::Constant { value: -1.0 })
                .init(device),
            lin_root: Some(
                LinearConfig::new(D, 2)
                    .with_bias(false)
                    .with_initializer(Initializer::Constant { value: -0.5 })
                    .init(device),
            ),
            aggr: Aggregation::Mean,
            normalize: false,
        };
        let rels = relations();
        for (merge, pick) in [
            (HeteroMerge::Max, f64::max as fn(f64, f64) -> f64),
            (HeteroMerge::Min, f64::min),
        ] {
            let conv = HeteroConv::new(
                rels.iter()
                    .map(|et| (et.clone(), negative(&device)))
                    .collect(),
                merge,
            );
            let out = conv.forward(&x, &g).unwrap();
            let paper = host(out["paper"].clone());
            assert!(
                paper.iter().all(|&v| v < 0.0),
                "{dev_name} {merge:?}: {paper:?}"
            );
            let each: Vec<Vec<f64>> = rels
                .iter()
                .filter(|et| et.dst == "paper")
                .map(|et| {
                    let set = g.edge_set(et).unwrap();
                    host(negative(&device).forward_bipartite(
                        x[&et.src].clone(),
                        x["paper"].clone(),
                        RelationEdges::Ids(set.senders(), set.receivers()),
                    ))
                })
                .collect();
            let want: Vec<f64> = (0..paper.len())
                .map(|i| pick(each[0][i], each[1][i]))
                .collect();
            assert_close(&paper, &want, 1e-5, &format!("{dev_name} {merge:?} merge"));
        }
    }
}
