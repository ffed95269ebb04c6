//! The fused paths against the unfused ones they replace: `Aggregation::aggregate_gathered`
//! against gather-then-`aggregate` for every aggregation, and the sparse first layer of `Gat`
//! and `Gcn` (`forward_sparse`) against the dense `forward`, values and gradients.

use burn::tensor::{Device, Tensor};
use burn_gnn_graph::{SparseMatrix, gather_rows};
use burn_gnn_nn::{Aggregation, GatConfig, GcnConfig};

use crate::common::*;

#[test]
fn fused_aggregations_match_gather_then_aggregate() {
    let mut rng = Rng(11);
    let (n, e, d) = (9, 30, 4);
    let (s, r) = random_edges(&mut rng, n, e);
    for (name, dev) in forward_devices() {
        let (_, x) = random_x(&mut rng, n, d, &dev);
        for aggr in ["sum", "mean", "max", "std"] {
            let a: Aggregation = aggr.parse().unwrap();
            let fused = a.aggregate_gathered(x.clone(), ints(&s, &dev), ints(&r, &dev), n);
            let plain = a.aggregate(gather_rows(x.clone(), ints(&s, &dev)), ints(&r, &dev), n);
            assert_close(&host(fused), &host(plain), 1e-5, &format!("{name} {aggr}"));
        }
    }
}

/// A bag-of-words-like input: about one entry in five non-zero.
fn sparse_x(rng: &mut Rng, n: usize, f: usize, device: &Device) -> Tensor<2> {
    let values: Vec<f64> = (0..n * f)
        .map(|_| if rng.below(5) == 0 { rng.float() } else { 0.0 })
        .collect();
    floats(&values, [n, f], device)
}

#[test]
fn sparse_first_layer_matches_the_dense_forward_and_gradients() {
    let mut rng = Rng(12);
    let (n, e, f) = (12, 40, 10);
    let (s, r) = random_edges(&mut rng, n, e);
    for (name, dev) in devices() {
        let g = graph(&s, &r, n, &dev);
        let x = sparse_x(&mut rng, n, f, &dev);
        let sparse = SparseMatrix::from_dense(&x);
        assert_eq!(
            host(sparse.to_dense()),
            host(x.clone()),
            "{name}: round trip"
        );
        let gat = GatConfig::new(f, 8, 3).with_heads(2).init(&dev);
        let gcn = GcnConfig::new(f, 8, 3).init(&dev);
        let pairs = [
            (
                gat.forward(x.clone(), &g),
                gat.forward_sparse(&sparse, &g),
                "gat",
            ),
            (
                gcn.forward(x.clone(), &g),
                gcn.forward_sparse(&sparse, &g),
                "gcn",
            ),
        ];
        for (dense, sparse, model) in pairs {
            assert_close(
                &host(sparse.clone()),
                &host(dense.clone()),
                1e-5,
                &format!("{name} {model}"),
            );
            if name.starts_with("autodiff") {
                let (gd, gs) = (dense.sum().backward(), sparse.sum().backward());
                let w = if model == "gat" {
                    gat.convs[0].weight.clone()
                } else {
                    gcn.convs[0].weight.clone()
                };
                let (wd, ws) = (w.grad(&gd).unwrap(), w.grad(&gs).unwrap());
                assert_close(
                    &host(ws),
                    &host(wd),
                    1e-4,
                    &format!("{name} {model} first weight gradient"),
                );
            }
        }
    }
}

#[test]
fn sparse_matrix_rejects_entries_outside_its_shape() {
    let dev = Device::flex();
    let err = SparseMatrix::from_coo(&[0, 2], &[1, 0], &[1.0, 2.0], [2, 2], &dev).unwrap_err();
    assert!(err.to_string().contains("entry 1 at (2, 0)"), "{err}");
    assert!(SparseMatrix::from_coo(&[0], &[1, 0], &[1.0], [2, 2], &dev).is_err());
    let m = SparseMatrix::from_coo(&[1, 0, 1], &[1, 0, 1], &[1.0, 2.0, 3.0], [2, 2], &dev).unwrap();
    // Duplicates add up; entries come sorted by row.
    assert_eq!(host(m.to_dense()), vec![2.0, 0.0, 0.0, 4.0]);
    assert_eq!(m.nnz(), 3);
}

#[test]
fn dropout_keeps_each_entry_with_probability_one_minus_p_and_rescales() {
    let d = burn::nn::DropoutConfig::new(0.6).init();
    for (name, dev) in devices()
        .into_iter()
        .filter(|(n, _)| n.starts_with("autodiff"))
    {
        let n = 100_000;
        let x = Tensor::<1>::ones([n], &dev).require_grad();
        dev.seed(7);
        let y = burn_gnn_nn::dropout(&d, x.clone());
        let values = host(y.clone().unsqueeze_dim::<2>(0));
        let kept = values.iter().filter(|&&v| v != 0.0).count() as f64;
        // Binomial(n, 0.4): 5 standard deviations.
        let sd = (n as f64 * 0.4 * 0.6).sqrt();
        assert!(
            (kept - 0.4 * n as f64).abs() < 5.0 * sd,
            "{name}: kept {kept}"
        );
        assert!(
            values.iter().all(|&v| v == 0.0 || (v - 2.5).abs() < 1e-6),
            "{name}: scale"
        );
        // The gradient is the mask itself.
        let g = x.grad(&y.clone().sum().backward()).unwrap();
        assert_eq!(host(g.unsqueeze_dim::<2>(0)), values, "{name}: gradient");
        // The device's seed makes the mask repeatable.
        dev.seed(7);
        let again =
            host(burn_gnn_nn::dropout(&d, Tensor::<1>::ones([n], &dev)).unsqueeze_dim::<2>(0));
        assert_eq!(again, values, "{name}: seeded");
        // Without autodiff (evaluation) it is the identity.
        let inner = dev.clone().inner();
        let plain = burn_gnn_nn::dropout(&d, Tensor::<1>::ones([4], &inner));
        assert_eq!(
            host(plain.unsqueeze_dim::<2>(0)),
            vec![1.0; 4],
            "{name}: evaluation"
        );
    }
}
