//! A planned op never plans again: forward and backward, no id of a `SegmentPlan` reaches the
//! CPU plan cache (its lookups are counted process-wide, so this test has a process of its
//! own).

use burn::tensor::{Device, Int, Tensor, TensorData};
use burn_segment::cpu::plan_cache_stats;
use burn_segment::{SegmentPlan, Segments, attention_softmax_planned, spmm_planned};

fn lookups() -> u64 {
    let stats = plan_cache_stats();
    stats.hits + stats.misses
}

#[test]
fn planned_forward_and_backward_passes_never_consult_the_plan_cache() {
    let device = Device::flex().autodiff();
    let ids =
        |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), &device);
    let (senders, receivers) = (ids(&[0, 2, 1, 2, 0]), ids(&[1, 0, 1, 2, 1]));
    let senders = SegmentPlan::new(senders, 3).unwrap();
    let receivers = SegmentPlan::new(receivers, 3).unwrap();
    let x = Tensor::<2>::from_floats([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], &device).require_grad();
    let scores = Tensor::<2>::from_floats([[0.1], [0.7], [-0.3]], &device).require_grad();

    let before = lookups();
    let messages = receivers.gather(x.clone()) * 2.0;
    let alpha = attention_softmax_planned(
        scores.clone(),
        scores.clone(),
        &senders,
        &receivers,
        None,
        0.2,
    );
    let h = spmm_planned(x.clone(), &senders, &receivers, Some(alpha));
    let pooled = receivers.sum(messages.clone())
        + receivers.max(messages.clone())
        + receivers.mean(messages.clone())
        + receivers.logsumexp(messages.clone())
        + receivers.prod(messages.clone());
    let loss = (h + pooled).sum() + receivers.softmax(messages).sum();
    let grads = loss.backward();
    let (gx, gs) = (x.grad(&grads).unwrap(), scores.grad(&grads).unwrap());
    assert!(gx.into_data().iter::<f32>().all(f32::is_finite));
    assert!(gs.into_data().iter::<f32>().all(f32::is_finite));
    assert_eq!(
        lookups(),
        before,
        "a planned op looked its ids up in the plan cache"
    );

    // The check can fail: the same ops unplanned do consult the cache.
    let before = lookups();
    let rows = receivers.gather(x);
    let _ = burn_segment::segment_sum(rows, receivers.segment_ids().clone(), 3);
    assert!(lookups() > before);
}
