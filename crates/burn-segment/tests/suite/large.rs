//! Outputs large enough to come from the CPU output pool (`burn_segment::cpu`), computed twice so
//! that the second round runs on recycled blocks that still hold the first round's values.

use burn::tensor::{Int, Tensor};
use burn_segment::reference::*;
use burn_segment::{SegmentExtreme, SegmentReduction};

use crate::common::*;

/// Rows (edges) and segments (receivers, and senders' nodes): every `[N, 1]` or `[E, 1]` f32
/// output is over `POOLED_OUTPUT_BYTES`.
const E: usize = 1_100_000;
const N: usize = 1_500_000;

/// A well-mixed index in `0..n`: segments of 0 to a few rows, about half of them empty.
fn spread(i: usize, salt: u64, n: usize) -> i64 {
    ((((i as u64) ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % n as u64) as i64
}

fn values(len: usize, salt: usize) -> Vec<f64> {
    // f32-exact values, so the references see what the backends see.
    (0..len)
        .map(|i| ((i * 37 + salt) % 101) as f64 / 16.0 - 3.0)
        .collect()
}

#[test]
fn large_outputs_match_the_references_on_fresh_and_recycled_blocks() {
    const {
        assert!(
            N * 4 > burn_segment::cpu::POOLED_OUTPUT_BYTES
                && E * 4 > burn_segment::cpu::POOLED_OUTPUT_BYTES
        )
    };
    let x = values(E, 1);
    let receivers: Vec<i64> = (0..E).map(|i| spread(i, 1, N)).collect();
    let senders: Vec<i64> = (0..E).map(|i| spread(i, 2, N)).collect();
    let nodes = values(N, 2);
    let nodes_b = values(N, 3);
    let weights = values(E, 4);
    // The segments of the owned softmax below: the sums' rows, grouped in threes.
    let groups: Vec<i64> = (0..N).map(|i| (i / 3) as i64).collect();

    let sum = segment_reduce_reference(&x, 1, &receivers, N, SegmentReduction::Sum);
    let (max, arg) = segment_extreme_reference(&x, 1, &receivers, N, SegmentExtreme::Max);
    let softmax = segment_softmax_reference(&x, 1, &receivers, N);
    let softmax_of_sum = segment_softmax_reference(&as_f32(&sum), 1, &groups, N / 3);
    let spmm = spmm_reference(&nodes, 1, &weights, 1, &senders, &receivers, N);
    let sddmm = sddmm_reference(&nodes, &nodes_b, 1, 1, &senders, &receivers);
    let attention = attention_softmax_reference(
        &nodes,
        &nodes_b,
        1,
        &senders,
        &receivers,
        &vec![0.0; E],
        1,
        0.2,
    );

    for t in targets()
        .into_iter()
        .filter(|t| t.path == Path::Public && !t.is_autodiff())
    {
        let dev = &t.device;
        let ids_t = |v: &[i64]| ids(v, dev, false);
        let hits = burn_segment::cpu::output_pool_stats().hits;
        for round in 0..2 {
            let what = |op: &str| format!("{} round {round}: {op}", t.name);
            let data = f32s(&x, [E, 1], dev);
            let total = burn_segment::segment_sum(data.clone(), ids_t(&receivers), N);
            let (m, a) = burn_segment::segment_max_with_indices(data.clone(), ids_t(&receivers), N);
            assert_close(&what("max"), &read(m), &max, 0.0, 0.0);
            assert_eq!(read_int(a), arg, "{}", what("argmax"));
            let s = burn_segment::segment_softmax(data, ids_t(&receivers), N);
            assert_close(&what("softmax"), &read(s), &softmax, 1e-5, 1e-7);
            assert_close(&what("sum"), &read(total.clone()), &sum, 1e-6, 1e-5);
            // The sum's own output, overwritten in place (its caller holds no other handle).
            let s = burn_segment::segment_softmax(total, ids_t(&groups), N / 3);
            assert_close(
                &what("softmax of the sum"),
                &read(s),
                &softmax_of_sum,
                1e-5,
                1e-7,
            );

            let (src, dst) = (f32s(&nodes, [N, 1], dev), f32s(&nodes_b, [N, 1], dev));
            let w = f32s(&weights, [E, 1], dev);
            let out =
                burn_segment::spmm(src.clone(), ids_t(&senders), ids_t(&receivers), Some(w), N);
            assert_close(&what("spmm"), &read(out), &spmm, 1e-5, 1e-5);
            let out = burn_segment::sddmm(
                src.clone(),
                dst.clone(),
                ids_t(&senders),
                ids_t(&receivers),
                1,
            );
            assert_close(&what("sddmm"), &read(out), &sddmm, 1e-6, 1e-6);
            let out = burn_segment::attention_softmax(
                src,
                dst,
                ids_t(&senders),
                ids_t(&receivers),
                None,
                0.2,
            );
            assert_close(&what("attention"), &read(out), &attention, 1e-5, 1e-7);
        }
        if t.name == "flex" && cfg!(target_os = "linux") {
            assert!(
                burn_segment::cpu::output_pool_stats().hits > hits,
                "the second round reused blocks"
            );
        }
    }
}

/// Gradients through the fused ops with outputs from the pool (autodiff over Flex) equal those
/// with `Vec` outputs (autodiff over NdArray), which the gradient suite checks against finite
/// differences at small sizes.
#[test]
fn large_gradients_from_the_pool_equal_the_vec_path() {
    let receivers: Vec<i64> = (0..E).map(|i| spread(i, 5, N)).collect();
    let senders: Vec<i64> = (0..E).map(|i| spread(i, 6, N)).collect();
    let (nodes, nodes_b, probe) = (values(N, 7), values(N, 8), values(N, 9));
    let grads = |t: &Target| {
        let dev = &t.device;
        let ids_t = |v: &[i64]| -> Tensor<1, Int> { ids(v, dev, true) };
        let src = f32s(&nodes, [N, 1], dev).require_grad();
        let dst = f32s(&nodes_b, [N, 1], dev).require_grad();
        let alpha = burn_segment::attention_softmax(
            src.clone(),
            dst.clone(),
            ids_t(&senders),
            ids_t(&receivers),
            None,
            0.2,
        );
        let scores = burn_segment::sddmm(
            src.clone(),
            dst.clone(),
            ids_t(&senders),
            ids_t(&receivers),
            1,
        );
        let out = burn_segment::spmm(
            dst.clone(),
            ids_t(&senders),
            ids_t(&receivers),
            Some(alpha + scores),
            N,
        );
        let loss = (out * f32s(&probe, [N, 1], dev)).sum();
        let g = loss.backward();
        (
            read(src.grad(&g).expect("src is tracked")),
            read(dst.grad(&g).expect("dst is tracked")),
        )
    };
    let [ndarray, flex] = ["autodiff<ndarray>", "autodiff<flex>"].map(|name| {
        let t = autodiff_targets()
            .into_iter()
            .find(|t| t.name == name)
            .expect("a CPU autodiff target");
        grads(&t)
    });
    assert_close("d loss / d src", &flex.0, &ndarray.0, 1e-6, 1e-6);
    assert_close("d loss / d dst", &flex.1, &ndarray.1, 1e-6, 1e-6);
}
