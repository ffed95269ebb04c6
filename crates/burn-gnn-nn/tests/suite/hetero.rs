//! The heterogeneous layers through one harness: output shapes, type-wise node permutation
//! equivariance, batch == per-graph, an absent relation == an empty one, node types without
//! incoming relations, node types without nodes, finite gradients; plus RGCN against an f64
//! reference and the max merge's empty cases.

use std::collections::BTreeMap;

use burn::module::Module;
use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{EDGE_TYPE, EdgeType, FeatureSetKind, HeteroGraph};
use burn_gnn_nn::{
    GatConvConfig, GraphConvConfig, HanConvConfig, HeteroConv, HeteroMerge, HeteroSageConfig,
    HgtConvConfig, NodeFeatures, RgcnConv, RgcnConvConfig,
};

use crate::common::*;
use crate::harness::FiniteGrads;

pub const D: usize = 4;
const TYPES: [&str; 4] = ["author", "lonely", "paper", "venue"];

pub fn relations() -> Vec<EdgeType> {
    vec![
        EdgeType::new("author", "writes", "paper"),
        EdgeType::new("paper", "cites", "paper"),
        EdgeType::new("paper", "published_in", "venue"),
        EdgeType::new("venue", "sponsors", "author"),
    ]
}

/// A heterogeneous graph on the host: node counts, edges per relation, features `[n, D]`.
#[derive(Clone, Debug)]
pub struct Host {
    sizes: BTreeMap<String, usize>,
    edges: BTreeMap<EdgeType, (Vec<i64>, Vec<i64>)>,
    pub x: BTreeMap<String, Vec<f64>>,
}

pub fn random_host(rng: &mut Rng, sizes: [usize; 4], sponsors: bool) -> Host {
    let sizes: BTreeMap<String, usize> = TYPES.iter().map(|t| t.to_string()).zip(sizes).collect();
    let mut edges = BTreeMap::new();
    for et in relations() {
        let (ns, nd) = (sizes[&et.src], sizes[&et.dst]);
        let e = if ns == 0 || nd == 0 || (et.rel == "sponsors" && !sponsors) {
            0
        } else {
            1 + rng.below(2 * nd + 2)
        };
        let s = (0..e).map(|_| rng.below(ns) as i64).collect();
        let r = (0..e).map(|_| rng.below(nd) as i64).collect();
        edges.insert(et, (s, r));
    }
    let x = sizes
        .iter()
        .map(|(t, &n)| (t.clone(), (0..n * D).map(|_| rng.float()).collect()))
        .collect();
    Host { sizes, edges, x }
}

pub fn build(h: &Host, device: &Device, skip: Option<&EdgeType>) -> (HeteroGraph, NodeFeatures) {
    let mut b = HeteroGraph::builder(device);
    for (t, &n) in &h.sizes {
        b = b.node_set(t.clone(), n);
    }
    for (et, (s, r)) in &h.edges {
        if Some(et) != skip {
            b = b.edge_list(et.clone(), s, r);
        }
    }
    let x =
        h.x.iter()
            .map(|(t, v)| (t.clone(), floats(v, [h.sizes[t], D], device)))
            .collect();
    (b.build().expect("a valid graph"), x)
}

/// Relabels every node type's nodes by a random permutation and shuffles every edge list.
fn permute(h: &Host, rng: &mut Rng) -> (Host, BTreeMap<String, Vec<usize>>) {
    let mut perms = BTreeMap::new();
    let mut out = h.clone();
    for (t, &n) in &h.sizes {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, rng.below(i + 1));
        }
        // Node i moves to p[i].
        let mut x = vec![0.0; n * D];
        for i in 0..n {
            x[p[i] * D..(p[i] + 1) * D].copy_from_slice(&h.x[t][i * D..(i + 1) * D]);
        }
        out.x.insert(t.clone(), x);
        perms.insert(t.clone(), p);
    }
    for (et, (s, r)) in &h.edges {
        let mut pairs: Vec<(i64, i64)> = s
            .iter()
            .zip(r)
            .map(|(&a, &b)| {
                (
                    perms[&et.src][a as usize] as i64,
                    perms[&et.dst][b as usize] as i64,
                )
            })
            .collect();
        for i in (1..pairs.len()).rev() {
            pairs.swap(i, rng.below(i + 1));
        }
        out.edges.insert(et.clone(), pairs.into_iter().unzip());
    }
    (out, perms)
}

type Layer = Box<dyn Fn(&NodeFeatures, &HeteroGraph) -> NodeFeatures>;

/// RGCN on a heterogeneous graph: through its homogeneous form and back.
fn rgcn_hetero(conv: &RgcnConv, x: &NodeFeatures, g: &HeteroGraph) -> NodeFeatures {
    let h = g.to_homogeneous().unwrap();
    let xh = g.nodes_to_homogeneous(x).unwrap();
    let et = h
        .feature(FeatureSetKind::Edges, EDGE_TYPE)
        .unwrap()
        .int::<1>()
        .unwrap();
    g.nodes_from_homogeneous(conv.forward(xh, &h, et)).unwrap()
}

/// Every heterogeneous layer, built on `device`, with its name and whether it passes node types
/// without incoming relations through unchanged.
fn layers(device: &Device) -> Vec<(&'static str, Layer, bool)> {
    let (types, rels) = (
        TYPES.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        relations(),
    );
    let sage = HeteroSageConfig::new(D, D, rels.clone()).init(device);
    let gat = HeteroConv::new(
        rels.iter()
            .map(|et| {
                (
                    et.clone(),
                    GatConvConfig::new(D, 2).with_heads(2).init(device),
                )
            })
            .collect(),
        HeteroMerge::Max,
    );
    let graph_conv = HeteroConv::new(
        rels.iter()
            .map(|et| (et.clone(), GraphConvConfig::new(D, 3).init(device)))
            .collect(),
        HeteroMerge::Cat,
    );
    let hgt = HgtConvConfig::new(D, D, types.clone(), rels.clone())
        .with_heads(2)
        .init(device);
    let han = HanConvConfig::new(D, D, types, rels.clone())
        .with_heads(2)
        .init(device);
    let rgcn = RgcnConvConfig::new(D, D, rels.len())
        .with_num_bases(Some(2))
        .init(device);
    let rgcn_blocks = RgcnConvConfig::new(D, D, rels.len())
        .with_num_blocks(Some(2))
        .init(device);
    vec![
        (
            "HeteroSage(sum)",
            Box::new(move |x, g| sage.forward(x, g).unwrap()),
            true,
        ),
        (
            "HeteroConv<GatConv>(max)",
            Box::new(move |x, g| gat.forward(x, g).unwrap()),
            true,
        ),
        (
            "HeteroConv<GraphConv>(cat)",
            Box::new(move |x, g| graph_conv.forward(x, g).unwrap()),
            true,
        ),
        (
            "HgtConv",
            Box::new(move |x, g| hgt.forward(x, g).unwrap()),
            false,
        ),
        (
            "HanConv",
            Box::new(move |x, g| han.forward(x, g).unwrap()),
            false,
        ),
        (
            "RgcnConv(bases)",
            Box::new(move |x, g| rgcn_hetero(&rgcn, x, g)),
            false,
        ),
        (
            "RgcnConv(blocks)",
            Box::new(move |x, g| rgcn_hetero(&rgcn_blocks, x, g)),
            false,
        ),
    ]
}

fn host_dict(out: &NodeFeatures) -> BTreeMap<String, (Vec<usize>, Vec<f64>)> {
    out.iter()
        .map(|(t, x)| (t.clone(), (x.dims().to_vec(), host(x.clone()))))
        .collect()
}

#[test]
fn hetero_layers_conform() {
    let mut rng = Rng(17);
    let base = random_host(&mut rng, [3, 2, 5, 2], true);
    let (permuted, perms) = permute(&base, &mut rng);
    let parts: Vec<Host> = vec![
        random_host(&mut rng, [2, 1, 3, 2], true),
        random_host(&mut rng, [1, 0, 4, 1], false),
        base.clone(),
    ];
    let no_sponsors = random_host(&mut rng, [2, 1, 3, 2], false);
    let no_venues = random_host(&mut rng, [2, 1, 3, 0], true);
    for (dev_name, device) in forward_devices() {
        for (name, layer, passes_through) in layers(&device) {
            let what = format!("{dev_name} {name}");
            let (g, x) = build(&base, &device, None);
            let out = host_dict(&layer(&x, &g));
            // Shapes and finiteness.
            for t in TYPES {
                let (dims, v) = &out[t];
                assert_eq!(dims[0], base.sizes[t], "{what}: rows of {t}");
                assert!(v.iter().all(|x| x.is_finite()), "{what}: non-finite {t}");
            }
            if passes_through {
                assert_eq!(
                    out["lonely"].1,
                    host(x["lonely"].clone()),
                    "{what}: a type without relations keeps its input"
                );
            }
            // Type-wise permutation equivariance.
            let (gp, xp) = build(&permuted, &device, None);
            let outp = host_dict(&layer(&xp, &gp));
            for t in TYPES {
                let (dims, v) = &out[t];
                let w = dims[1];
                let mut want = vec![0.0; v.len()];
                for (i, &p) in perms[t].iter().enumerate() {
                    want[p * w..(p + 1) * w].copy_from_slice(&v[i * w..(i + 1) * w]);
                }
                assert_close(
                    &outp[t].1,
                    &want,
                    1e-4,
                    &format!("{what}: permutation of {t}"),
                );
            }
            // A batch gives each graph's own result.
            let graphs: Vec<(HeteroGraph, NodeFeatures)> =
                parts.iter().map(|h| build(h, &device, None)).collect();
            let gb = HeteroGraph::batch(&graphs.iter().map(|(g, _)| g.clone()).collect::<Vec<_>>())
                .unwrap();
            let xb: NodeFeatures = TYPES
                .iter()
                .map(|t| {
                    (
                        t.to_string(),
                        Tensor::cat(graphs.iter().map(|(_, x)| x[*t].clone()).collect(), 0),
                    )
                })
                .collect();
            let outb = host_dict(&layer(&xb, &gb));
            for t in TYPES {
                let want: Vec<f64> = graphs
                    .iter()
                    .flat_map(|(g, x)| host_dict(&layer(x, g))[t].1.clone())
                    .collect();
                assert_close(&outb[t].1, &want, 1e-4, &format!("{what}: batch, {t}"));
            }
            // A relation absent from the graph is a relation without edges.
            let (g1, x1) = build(&no_sponsors, &device, None);
            let (g2, x2) = build(&no_sponsors, &device, Some(&relations()[3]));
            let (a, b) = (host_dict(&layer(&x1, &g1)), host_dict(&layer(&x2, &g2)));
            for t in TYPES {
                assert_close(
                    &a[t].1,
                    &b[t].1,
                    1e-5,
                    &format!("{what}: absent vs empty relation, {t}"),
                );
            }
            // A node type without nodes.
            let (g3, x3) = build(&no_venues, &device, None);
            let c = host_dict(&layer(&x3, &g3));
            assert_eq!(c["venue"].0[0], 0, "{what}: no venues");
            assert!(
                c.values().all(|(_, v)| v.iter().all(|x| x.is_finite())),
                "{what}: finite without venues"
            );
        }
    }
}

#[test]
fn hetero_layers_give_finite_gradients() {
    let mut rng = Rng(5);
    let h = random_host(&mut rng, [3, 2, 4, 2], true);
    for (dev_name, device) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let (types, rels) = (
            TYPES.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            relations(),
        );
        let (g, x) = build(&h, &device, None);
        let x: NodeFeatures = x.into_iter().map(|(t, v)| (t, v.require_grad())).collect();
        let loss = |out: NodeFeatures| {
            out.into_values()
                .map(|t| t.powi_scalar(2).sum())
                .reduce(|a, b| a + b)
                .unwrap()
        };
        let hgt = HgtConvConfig::new(D, D, types.clone(), rels.clone())
            .with_heads(2)
            .init(&device);
        let grads = loss(hgt.forward(&x, &g).unwrap()).backward();
        let mut v = FiniteGrads {
            grads: &grads,
            seen: 0,
            what: format!("{dev_name} HgtConv"),
            require_all: false,
        };
        hgt.visit(&mut v);
        assert!(v.seen > 0, "{dev_name}: HgtConv parameters got gradients");
        let han = HanConvConfig::new(D, D, types, rels.clone())
            .with_heads(2)
            .init(&device);
        let grads = loss(han.forward(&x, &g).unwrap()).backward();
        let mut v = FiniteGrads {
            grads: &grads,
            seen: 0,
            what: format!("{dev_name} HanConv"),
            require_all: false,
        };
        han.visit(&mut v);
        assert!(v.seen > 0);
        let sage = HeteroSageConfig::new(D, D, rels.clone())
            .with_merge(HeteroMerge::Max)
            .init(&device);
        let grads = loss(sage.forward(&x, &g).unwrap()).backward();
        let mut v = FiniteGrads {
            grads: &grads,
            seen: 0,
            what: format!("{dev_name} HeteroSage"),
            require_all: false,
        };
        sage.visit(&mut v);
        assert!(v.seen > 0);
        let rgcn = RgcnConvConfig::new(D, D, rels.len())
            .with_num_bases(Some(2))
            .init(&device);
        let grads = loss(rgcn_hetero(&rgcn, &x, &g)).backward();
        let mut v = FiniteGrads {
            grads: &grads,
            seen: 0,
            what: format!("{dev_name} RgcnConv"),
            require_all: true,
        };
        rgcn.visit(&mut v);
        assert_eq!(
            v.seen, 4,
            "{dev_name}: RGCN bases, coefficients, root and bias"
        );
        for (t, xt) in &x {
            let gx = xt.grad(&grads).map(host).unwrap_or_default();
            assert!(
                gx.iter().all(|v| v.is_finite()),
                "{dev_name}: input gradient of {t}"
            );
        }
    }
}

/// RGCN and HGT aggregate through a receiver plan (`RelationEdges::Received`), their senders
/// being rows no plan is kept for: forward and backward plan ids per call once in RGCN (its
/// (receiver, relation) edge counts) and never in HGT (counted on the CPU kernels).
#[test]
fn rgcn_and_hgt_aggregate_through_a_receiver_plan() {
    let mut rng = Rng(9);
    let h = random_host(&mut rng, [3, 2, 4, 2], true);
    let device = Device::flex().autodiff();
    let (types, rels) = (
        TYPES.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
        relations(),
    );
    let (g, x) = build(&h, &device, None);
    let homogeneous = g.to_homogeneous().unwrap();
    let xh = g.nodes_to_homogeneous(&x).unwrap().require_grad();
    let edge_type = homogeneous
        .feature(FeatureSetKind::Edges, EDGE_TYPE)
        .unwrap()
        .int::<1>()
        .unwrap();
    let rgcn = RgcnConvConfig::new(D, D, rels.len()).init(&device);
    homogeneous.receiver_plan();
    let before = burn_segment::cpu::unplanned_calls_on_this_thread();
    let out = rgcn.forward(xh.clone(), &homogeneous, edge_type);
    let _ = out.powi_scalar(2).sum().backward();
    let rgcn_calls = burn_segment::cpu::unplanned_calls_on_this_thread() - before;
    assert_eq!(
        rgcn_calls, 1,
        "RGCN: only its edge counts plan ids per call"
    );

    let hgt = HgtConvConfig::new(D, D, types, rels)
        .with_heads(2)
        .init(&device);
    let x: NodeFeatures = x.into_iter().map(|(t, v)| (t, v.require_grad())).collect();
    let before = burn_segment::cpu::unplanned_calls_on_this_thread();
    let out = hgt.forward(&x, &g).unwrap();
    let loss = out
        .values()
        .map(|t| t.clone().powi_scalar(2).sum())
        .reduce(|a, b| a + b);
    let _ = loss.unwrap().backward();
    let hgt_calls = burn_segment::cpu::unplanned_calls_on_this_thread() - before;
    assert_eq!(
        hgt_calls, 0,
        "HGT: every segment op through its receiver plan"
    );
}
