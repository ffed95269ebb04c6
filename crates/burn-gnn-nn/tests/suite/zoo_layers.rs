//! The rest of the zoo against plain-Rust f64 references: the propagation layers (SGC, APPNP,
//! ChebConv, GraphConv), the edge-MLP layers (GINE, EdgeConv) and the attention layers (GATv2,
//! TransformerConv, bipartite GAT), on the graphs and conventions of `paper_layers.rs`.

use burn::tensor::Tensor;
use burn_gnn_nn::{
    AppnpConfig, ChebConvConfig, EdgeConvConfig, GatV2ConvConfig, GineConvConfig, GraphConvConfig,
    SgConvConfig, TransformerConvConfig,
};

use crate::common::*;
use crate::paper_layers::{add_bias, gcn_dense, looped_graph, matmul, relooped, test_graph};

fn lin(x: &[f64], l: &burn::nn::Linear, rows: usize) -> Vec<f64> {
    let [d_in, d_out] = l.weight.dims();
    let mut out = matmul(x, &host(l.weight.val()), rows, d_in, d_out);
    if let Some(b) = &l.bias {
        add_bias(&mut out, &host(b.val()));
    }
    out
}

#[test]
fn propagation_layers_match_dense_references() {
    for (name, d) in forward_devices() {
        let (s, r, n) = test_graph();
        let g = graph(&s, &r, n, &d);
        let mut rng = Rng(21);
        let (xv, x) = random_x(&mut rng, n, 3, &d);
        // SGC and APPNP propagate with GCN's normalisation: also on duplicated self loops.
        for (s, r, n) in [test_graph(), looped_graph()] {
            let g = graph(&s, &r, n, &d);
            let a = gcn_dense(&s, &r, &vec![1.0; s.len()], n, 1.0);
            // SGC, K = 2.
            let sg = SgConvConfig::new(3, 2).with_k(2).init(&d);
            let ax = matmul(&a, &matmul(&a, &xv, n, n, 3), n, n, 3);
            assert_close(
                &host(sg.forward(x.clone(), &g)),
                &lin(&ax, &sg.lin, n),
                1e-4,
                &format!("SgConv on {name}, {} edges", s.len()),
            );
            // APPNP, K = 3, alpha = 0.1.
            let appnp = AppnpConfig::new(3, 0.1).init();
            let mut h = xv.clone();
            for _ in 0..3 {
                h = matmul(&a, &h, n, n, 3)
                    .iter()
                    .zip(&xv)
                    .map(|(p, x0)| 0.9 * p + 0.1 * x0)
                    .collect();
            }
            assert_close(
                &host(appnp.forward(x.clone(), &g)),
                &h,
                1e-4,
                &format!("Appnp on {name}, {} edges", s.len()),
            );
        }
        // Chebyshev, K = 3: L̃ = -D^-1/2 A D^-1/2 without loops, degrees over senders.
        let cheb = ChebConvConfig::new(3, 2, 3).init(&d);
        let mut l = vec![0.0; n * n];
        let mut deg = vec![0.0; n];
        (0..s.len())
            .filter(|&e| s[e] != r[e])
            .for_each(|e| deg[s[e] as usize] += 1.0);
        let dinv: Vec<f64> = deg
            .iter()
            .map(|&x| if x > 0.0 { 1.0 / f64::sqrt(x) } else { 0.0 })
            .collect();
        for e in (0..s.len()).filter(|&e| s[e] != r[e]) {
            l[r[e] as usize * n + s[e] as usize] -= dinv[s[e] as usize] * dinv[r[e] as usize];
        }
        let t1 = matmul(&l, &xv, n, n, 3);
        let t2: Vec<f64> = matmul(&l, &t1, n, n, 3)
            .iter()
            .zip(&xv)
            .map(|(a, b)| 2.0 * a - b)
            .collect();
        let mut want = vec![0.0; n * 2];
        for (t, layer) in [&xv, &t1, &t2].into_iter().zip(&cheb.lins) {
            want.iter_mut()
                .zip(lin(t, layer, n))
                .for_each(|(w, v)| *w += v);
        }
        assert_close(
            &host(cheb.forward(x.clone(), &g)),
            &want,
            1e-4,
            &format!("ChebConv on {name}"),
        );
        // GraphConv (sum): W_1 x_i + W_2 Σ_j x_j.
        let gc = GraphConvConfig::new(3, 2).init(&d);
        let mut agg = vec![0.0; n * 3];
        for e in 0..s.len() {
            (0..3).for_each(|c| agg[r[e] as usize * 3 + c] += xv[s[e] as usize * 3 + c]);
        }
        let want: Vec<f64> = lin(&agg, &gc.lin_rel, n)
            .iter()
            .zip(lin(&xv, &gc.lin_root, n))
            .map(|(a, b)| a + b)
            .collect();
        assert_close(
            &host(gc.forward(x, &g)),
            &want,
            1e-4,
            &format!("GraphConv on {name}"),
        );
    }
}

#[test]
fn edge_mlp_layers_match_references() {
    for (name, d) in forward_devices() {
        let (s, r, n) = test_graph();
        let g = graph(&s, &r, n, &d);
        let mut rng = Rng(22);
        let (xv, x) = random_x(&mut rng, n, 3, &d);
        let relu = |v: Vec<f64>| v.into_iter().map(|x| x.max(0.0)).collect::<Vec<_>>();
        // GINE with 2-wide edge features mapped to 3.
        let gine = GineConvConfig::new(3, 4, 2, 2).with_eps(0.5).init(&d);
        let (ev, e) = random_x(&mut rng, s.len(), 2, &d);
        let ew = lin(&ev, gine.lin_edge.as_ref().unwrap(), s.len());
        let mut h: Vec<f64> = xv.iter().map(|v| 1.5 * v).collect();
        for k in 0..s.len() {
            (0..3).for_each(|c| {
                h[r[k] as usize * 3 + c] += (xv[s[k] as usize * 3 + c] + ew[k * 3 + c]).max(0.0)
            });
        }
        let want = lin(&relu(lin(&h, &gine.mlp_in, n)), &gine.mlp_out, n);
        assert_close(
            &host(gine.forward(x.clone(), &g, e)),
            &want,
            1e-4,
            &format!("GineConv on {name}"),
        );
        // EdgeConv (max): max_j h([x_i, x_j - x_i]), 0 without incoming edges.
        let ec = EdgeConvConfig::new(3, 4, 2).init(&d);
        let mut want = vec![f64::NEG_INFINITY; n * 2];
        for k in 0..s.len() {
            let (i, j) = (r[k] as usize, s[k] as usize);
            let input: Vec<f64> = (0..3)
                .map(|c| xv[i * 3 + c])
                .chain((0..3).map(|c| xv[j * 3 + c] - xv[i * 3 + c]))
                .collect();
            let out = lin(&relu(lin(&input, &ec.mlp_in, 1)), &ec.mlp_out, 1);
            (0..2).for_each(|c| want[i * 2 + c] = want[i * 2 + c].max(out[c]));
        }
        want.iter_mut()
            .filter(|v| v.is_infinite())
            .for_each(|v| *v = 0.0);
        assert_close(
            &host(ec.forward(x, &g)),
            &want,
            1e-4,
            &format!("EdgeConv on {name}"),
        );
    }
}

/// Multi-head attention by hand: `score(h, j, i)` is head `h`'s logit of edge `j -> i`, `value`
/// the `[N, heads * c]` rows mixed. Returns `[N, heads * c]`.
fn attend(
    edges: &[(usize, usize)],
    n: usize,
    heads: usize,
    c: usize,
    score: impl Fn(usize, usize, usize) -> f64,
    value: &[f64],
) -> Vec<f64> {
    let mut out = vec![0.0; n * heads * c];
    for h in 0..heads {
        for i in 0..n {
            let inc: Vec<usize> = edges.iter().filter(|e| e.1 == i).map(|e| e.0).collect();
            let z: Vec<f64> = inc.iter().map(|&j| score(h, j, i)).collect();
            let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = z.iter().map(|v| (v - m).exp()).sum();
            for (&j, v) in inc.iter().zip(&z) {
                let a = (v - m).exp() / total;
                (0..c).for_each(|k| {
                    out[i * heads * c + h * c + k] += a * value[j * heads * c + h * c + k]
                });
            }
        }
    }
    out
}

#[test]
fn attention_layers_match_references() {
    for (name, d) in forward_devices() {
        let (s, r, n) = test_graph();
        let g = graph(&s, &r, n, &d);
        let mut rng = Rng(23);
        let (xv, x) = random_x(&mut rng, n, 3, &d);
        let (heads, c) = (2, 2);
        // GATv2: loops replaced, a · LeakyReLU(W_s x_j + W_t x_i).
        let v2 = GatV2ConvConfig::new(3, c).with_heads(heads).init(&d);
        let add = |m: Vec<f64>, b: &burn::module::Param<Tensor<1>>| {
            let mut m = m;
            add_bias(&mut m, &host(b.val()));
            m
        };
        let xs = add(
            matmul(&xv, &host(v2.weight_src.val()), n, 3, heads * c),
            &v2.bias_src,
        );
        let xd = add(
            matmul(
                &xv,
                &host(v2.weight_dst.as_ref().unwrap().val()),
                n,
                3,
                heads * c,
            ),
            v2.bias_dst.as_ref().unwrap(),
        );
        let att = host(v2.att.val());
        let edges = relooped(&s, &r, n);
        let score = |h: usize, j: usize, i: usize| {
            (0..c)
                .map(|k| {
                    let z = xs[j * heads * c + h * c + k] + xd[i * heads * c + h * c + k];
                    att[h * c + k] * if z > 0.0 { z } else { 0.2 * z }
                })
                .sum::<f64>()
        };
        let want = attend(&edges, n, heads, c, score, &xs);
        assert_close(
            &host(v2.forward(x.clone(), &g)),
            &want,
            1e-4,
            &format!("GatV2Conv on {name}"),
        );
        // TransformerConv: no loops added, q_i · k_j / sqrt(c), plus the skip term.
        let t = TransformerConvConfig::new(3, c).with_heads(heads).init(&d);
        let (q, k, v) = (
            lin(&xv, &t.query, n),
            lin(&xv, &t.key, n),
            lin(&xv, &t.value, n),
        );
        let edges: Vec<(usize, usize)> = s
            .iter()
            .zip(&r)
            .map(|(&a, &b)| (a as usize, b as usize))
            .collect();
        let score = |h: usize, j: usize, i: usize| {
            (0..c)
                .map(|m| q[i * heads * c + h * c + m] * k[j * heads * c + h * c + m])
                .sum::<f64>()
                / (c as f64).sqrt()
        };
        let want: Vec<f64> = attend(&edges, n, heads, c, score, &v)
            .iter()
            .zip(lin(&xv, t.skip.as_ref().unwrap(), n))
            .map(|(a, b)| a + b)
            .collect();
        assert_close(
            &host(t.forward(x, &g)),
            &want,
            1e-4,
            &format!("TransformerConv on {name}"),
        );
    }
}

#[test]
fn bipartite_gat_matches_reference() {
    use burn_gnn_nn::{BipartiteConv, GatConvConfig, RelationEdges};
    use burn_segment::SegmentPlan;
    for (name, d) in forward_devices() {
        let (heads, c, ns, nd) = (2, 2, 4, 3);
        let conv = GatConvConfig::new(3, c).with_heads(heads).init(&d);
        let mut rng = Rng(24);
        let (xsv, xs) = random_x(&mut rng, ns, 3, &d);
        let (xdv, xd) = random_x(&mut rng, nd, 3, &d);
        let (s, r) = (vec![0i64, 1, 3, 3, 2], vec![0i64, 0, 0, 2, 2]);
        let (si, ri) = (ints(&s, &d), ints(&r, &d));
        // Every relation form: ids, plans on both sides, sender ids beside a receiver plan.
        let (sp, rp) = (
            SegmentPlan::new(si.clone(), ns).unwrap(),
            SegmentPlan::new(ri.clone(), nd).unwrap(),
        );
        let forms = [
            ("ids", RelationEdges::Ids(&si, &ri)),
            ("plans", RelationEdges::Plans(&sp, &rp)),
            ("received", RelationEdges::Received(&si, &rp)),
        ];
        let w = host(conv.weight.val());
        let (ws, wd) = (
            matmul(&xsv, &w, ns, 3, heads * c),
            matmul(&xdv, &w, nd, 3, heads * c),
        );
        let (a_src, a_dst) = (host(conv.att_src.val()), host(conv.att_dst.val()));
        let edges: Vec<(usize, usize)> = s
            .iter()
            .zip(&r)
            .map(|(&a, &b)| (a as usize, b as usize))
            .collect();
        let score = |h: usize, j: usize, i: usize| {
            let z: f64 = (0..c)
                .map(|k| {
                    ws[j * heads * c + h * c + k] * a_src[h * c + k]
                        + wd[i * heads * c + h * c + k] * a_dst[h * c + k]
                })
                .sum();
            if z > 0.0 { z } else { 0.2 * z }
        };
        let mut want = attend(&edges, nd, heads, c, score, &ws);
        add_bias(&mut want, &host(conv.bias.as_ref().unwrap().val()));
        for (form, edges) in forms {
            let got = host(conv.forward_bipartite(xs.clone(), xd.clone(), edges));
            let what = format!("GatConv bipartite over {form} on {name}");
            assert_close(&got, &want, 1e-4, &what);
        }
    }
}
