//! Link prediction: the inner-product decoder, the GAE/VGAE losses and their gradients against
//! f64 references on every device; ROC AUC and average precision against hand-worked values.

use burn::tensor::Tensor;
use burn_gnn_nn::{
    Gae, GcnConfig, InnerProductDecoder, NnError, Vgae, average_precision, kl_loss, recon_loss,
    roc_auc,
};

use crate::common::{Rng, assert_close, devices, graph, host, ints, random_edges, random_x};

fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

fn dot(z: &[f64], d: usize, i: i64, j: i64) -> f64 {
    (0..d)
        .map(|k| z[i as usize * d + k] * z[j as usize * d + k])
        .sum()
}

/// The reconstruction loss in f64 from embeddings `z: [N, d]`.
fn recon_reference(
    z: &[f64],
    d: usize,
    pos: &(Vec<i64>, Vec<i64>),
    neg: &(Vec<i64>, Vec<i64>),
) -> f64 {
    let mean = |pairs: &(Vec<i64>, Vec<i64>), sign: f64| {
        let sum: f64 = pairs
            .0
            .iter()
            .zip(&pairs.1)
            .map(|(&i, &j)| softplus(sign * dot(z, d, i, j)))
            .sum();
        sum / pairs.0.len() as f64
    };
    mean(pos, -1.0) + mean(neg, 1.0)
}

fn pairs(rng: &mut Rng, n: usize, e: usize) -> (Vec<i64>, Vec<i64>) {
    (0..e)
        .map(|_| (rng.below(n) as i64, rng.below(n) as i64))
        .unzip()
}

#[test]
fn decoder_and_recon_loss_match_the_reference_with_gradients() {
    let (n, d) = (9, 5);
    for (name, device) in devices() {
        let mut rng = Rng(21);
        let (zv, z) = random_x(&mut rng, n, d, &device);
        let (zv, z) = (
            zv.iter().map(|v| 3.0 * v).collect::<Vec<_>>(),
            z.mul_scalar(3.0),
        );
        let (pos, neg) = (pairs(&mut rng, n, 7), pairs(&mut rng, n, 11));
        let logits =
            InnerProductDecoder.forward(z.clone(), ints(&pos.0, &device), ints(&pos.1, &device));
        let want: Vec<f64> = pos
            .0
            .iter()
            .zip(&pos.1)
            .map(|(&i, &j)| dot(&zv, d, i, j))
            .collect();
        assert_close(&host(logits), &want, 1e-5, &format!("{name}: decoder"));

        let z = if device.is_autodiff() {
            z.require_grad()
        } else {
            z
        };
        let gae_loss = |z: Tensor<2>| {
            let p = InnerProductDecoder.forward(
                z.clone(),
                ints(&pos.0, &device),
                ints(&pos.1, &device),
            );
            let q = InnerProductDecoder.forward(z, ints(&neg.0, &device), ints(&neg.1, &device));
            recon_loss(p, q)
        };
        let loss = gae_loss(z.clone());
        let want = recon_reference(&zv, d, &pos, &neg);
        assert_close(
            &host(loss.clone()),
            &[want],
            1e-5,
            &format!("{name}: recon loss"),
        );
        if device.is_autodiff() {
            let grads = loss.backward();
            let got = host(z.grad(&grads).expect("z is tracked"));
            // Central differences of the f64 reference.
            let h = 1e-6;
            let fd: Vec<f64> = (0..n * d)
                .map(|k| {
                    let (mut up, mut down) = (zv.clone(), zv.clone());
                    up[k] += h;
                    down[k] -= h;
                    (recon_reference(&up, d, &pos, &neg) - recon_reference(&down, d, &pos, &neg))
                        / (2.0 * h)
                })
                .collect();
            assert_close(&got, &fd, 1e-4, &format!("{name}: d recon / d z"));
        }
    }
}

#[test]
fn recon_loss_stays_finite_for_extreme_logits() {
    for (name, device) in devices() {
        let pos = Tensor::<1>::from_floats([-200.0, 50.0], &device);
        let neg = Tensor::<1>::from_floats([300.0, -80.0], &device);
        let want =
            (softplus(200.0) + softplus(-50.0)) / 2.0 + (softplus(300.0) + softplus(-80.0)) / 2.0;
        assert_close(&host(recon_loss(pos, neg)), &[want], 1e-6, name);
    }
}

#[test]
fn kl_loss_matches_the_reference() {
    let (n, d) = (6, 4);
    for (name, device) in devices() {
        let mut rng = Rng(5);
        let (mu, mu_t) = random_x(&mut rng, n, d, &device);
        let (ls, ls_t) = random_x(&mut rng, n, d, &device);
        let mut ls = ls;
        // One entry past the clamp.
        ls[3] = 12.0;
        let ls_t = ls_t.slice_assign([0..1, 3..4], Tensor::<2>::full([1, 1], 12.0, &device));
        let per_node: f64 = (0..n)
            .map(|i| {
                (0..d)
                    .map(|k| {
                        let (m, l) = (mu[i * d + k], ls[i * d + k].min(10.0));
                        1.0 + 2.0 * l - m * m - (2.0 * l).exp()
                    })
                    .sum::<f64>()
            })
            .sum::<f64>()
            / n as f64;
        assert_close(&host(kl_loss(mu_t, ls_t)), &[-0.5 * per_node], 1e-5, name);
    }
}

/// A GCN encoder under GAE and VGAE: the losses equal the references computed from the
/// encoder's own outputs.
#[test]
fn gae_and_vgae_losses_match_the_reference() {
    let (n, d_in) = (12, 6);
    for (name, device) in devices() {
        let mut rng = Rng(8);
        let (s, r) = random_edges(&mut rng, n, 30);
        let g = graph(&s, &r, n, &device);
        let (_, x) = random_x(&mut rng, n, d_in, &device);
        let (pos, neg) = (pairs(&mut rng, n, 10), pairs(&mut rng, n, 10));
        let idx = |p: &(Vec<i64>, Vec<i64>)| (ints(&p.0, &device), ints(&p.1, &device));

        let gae = Gae::new(GcnConfig::new(d_in, 8, 4).init(&device));
        let z = gae.encode(x.clone(), &g);
        let want = recon_reference(&host(z.clone()), 4, &pos, &neg);
        let got = host(gae.recon_loss(z, idx(&pos), idx(&neg)));
        assert_close(&got, &[want], 1e-5, &format!("{name}: GAE loss"));

        let vgae = Vgae::new(GcnConfig::new(d_in, 8, 8).init(&device));
        let emb = vgae.encode(x.clone(), &g);
        let out = host(encoder_output(&vgae, x, &g));
        let (mu, ls): (Vec<f64>, Vec<f64>) = (
            (0..n * 4).map(|k| out[(k / 4) * 8 + k % 4]).collect(),
            (0..n * 4).map(|k| out[(k / 4) * 8 + 4 + k % 4]).collect(),
        );
        assert_close(&host(emb.mu.clone()), &mu, 1e-6, &format!("{name}: mu"));
        assert_close(
            &host(emb.logstd.clone()),
            &ls,
            1e-6,
            &format!("{name}: logstd"),
        );
        let z = host(emb.z.clone());
        let kl: f64 = -0.5
            * (0..n * 4)
                .map(|k| 1.0 + 2.0 * ls[k] - mu[k] * mu[k] - (2.0 * ls[k]).exp())
                .sum::<f64>()
            / n as f64;
        let want = recon_reference(&z, 4, &pos, &neg) + kl / n as f64;
        let got = host(vgae.loss(&emb, idx(&pos), idx(&neg)));
        assert_close(&got, &[want], 1e-5, &format!("{name}: VGAE loss"));
        if device.is_autodiff() {
            // z = mu + sigma * eps with eps drawn from N(0, 1), not mu.
            let eps: Vec<f64> = (0..n * 4).map(|k| (z[k] - mu[k]) / ls[k].exp()).collect();
            assert!(eps.iter().any(|e| e.abs() > 1e-3), "{name}: no noise");
            let mean = eps.iter().sum::<f64>() / eps.len() as f64;
            assert!(mean.abs() < 0.6, "{name}: noise mean {mean}");
        } else {
            assert_close(&z, &mu, 0.0, &format!("{name}: z is mu in evaluation"));
        }
    }
}

fn encoder_output(
    vgae: &Vgae<burn_gnn_nn::Gcn>,
    x: Tensor<2>,
    g: &burn_gnn_graph::GraphsTuple,
) -> Tensor<2> {
    vgae.encoder.forward(x, g)
}

#[test]
#[should_panic(expected = "2·D")]
fn vgae_rejects_an_odd_encoder_width() {
    let device = burn::tensor::Device::flex();
    let g = graph(&[0], &[1], 2, &device);
    let vgae = Vgae::new(GcnConfig::new(3, 4, 5).init(&device));
    vgae.encode(Tensor::<2>::ones([2, 3], &device), &g);
}

/// Hand-worked values; scikit-learn gives the same (`roc_auc_score`, `average_precision_score`).
#[test]
fn auc_and_ap_by_hand() {
    // No ties: positives at 0.35 and 0.8, negatives at 0.1 and 0.4. Pairs won: 0.8 beats both,
    // 0.35 beats 0.1: 3 of 4. AP: thresholds 0.8 (P 1, R 1/2), 0.4 (P 1/2), 0.35 (P 2/3, R 1).
    let (s, y) = ([0.1, 0.4, 0.35, 0.8], [false, false, true, true]);
    assert!((roc_auc(&s, &y).unwrap() - 0.75).abs() < 1e-12);
    assert!((average_precision(&s, &y).unwrap() - (0.5 + 0.5 * 2.0 / 3.0)).abs() < 1e-12);
    // Ties: scores [0.9 (+), 0.5 (+), 0.5 (-), 0.5 (-), 0.2 (+), 0.2 (-)].
    // AUC: 0.9 beats 3; each 0.5-positive beats 1 and ties 2 (2); 0.2-positive ties 1 (0.5):
    // 5.5 of 9. AP: 0.9 (R 1/3, P 1), 0.5 (R 2/3, P 2/4), 0.2 (R 1, P 3/6).
    let s = [0.9, 0.5, 0.5, 0.5, 0.2, 0.2];
    let y = [true, true, false, false, true, false];
    assert!((roc_auc(&s, &y).unwrap() - 5.5 / 9.0).abs() < 1e-12);
    let ap = (1.0 + 0.5 + 0.5) / 3.0;
    assert!((average_precision(&s, &y).unwrap() - ap).abs() < 1e-12);
    // All scores tied: AUC 1/2, AP the positive rate.
    assert!((roc_auc(&[1.0; 4], &[true, false, false, false]).unwrap() - 0.5).abs() < 1e-12);
    assert!(
        (average_precision(&[1.0; 4], &[true, false, false, false]).unwrap() - 0.25).abs() < 1e-12
    );
    // Perfect and inverted rankings.
    assert_eq!(
        roc_auc(&[3.0, 2.0, 1.0], &[true, false, false]).unwrap(),
        1.0
    );
    assert_eq!(
        roc_auc(&[1.0, 2.0, 3.0], &[true, false, false]).unwrap(),
        0.0
    );
}

#[test]
fn metrics_reject_what_they_cannot_score() {
    assert!(matches!(
        roc_auc(&[0.1, 0.2], &[true]),
        Err(NnError::Shape(_))
    ));
    assert!(matches!(
        roc_auc(&[0.1, 0.2], &[true, true]),
        Err(NnError::InvalidInput(_))
    ));
    assert!(matches!(
        average_precision(&[f64::NAN, 0.2], &[true, false]),
        Err(NnError::InvalidInput(_))
    ));
    assert!(matches!(
        average_precision(&[], &[]),
        Err(NnError::InvalidInput(_))
    ));
}
