//! The CPU kernels run on their caller's rayon pool: inside `ThreadPool::install` they use that
//! pool's threads, not the global pool's, and give the same bits for any number of threads
//! (the segment ops, and `linear`'s products, which are split by shape).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use burn::tensor::{Device, Tensor};
use burn_segment::reference::{segment_reduce_reference, segment_softmax_reference};
use burn_segment::{
    SegmentReduction, segment_logsumexp, segment_max_with_indices, segment_mean, segment_prod,
    segment_softmax, segment_sum,
};

use crate::common::*;

/// Sum, mean, product, max, argmax, softmax and logsumexp as bits, over one segment of 10⁶
/// rows (reduced in chunks) and over segments of mixed sizes (chunked and not).
fn run(device: &Device) -> Vec<u64> {
    let rows = 1_000_000;
    let values = values(rows * 2);
    let x: Tensor<2> = f32s(&values, [rows, 2], device);
    let mixed: Vec<i64> = (0..rows as i64).map(|i| mixed_id(i as usize)).collect();
    let mut out = vec![];
    for (segment_ids, n) in [(vec![0i64; rows], 1), (mixed, 40)] {
        let ids = ids(&segment_ids, device, false);
        let (max, arg) = segment_max_with_indices(x.clone(), ids.clone(), n);
        for t in [
            segment_sum(x.clone(), ids.clone(), n),
            segment_mean(x.clone(), ids.clone(), n),
            segment_prod(x.clone(), ids.clone(), n),
            max,
            segment_softmax(x.clone(), ids.clone(), n),
            segment_logsumexp(x.clone(), ids.clone(), n),
        ] {
            out.extend(read(t).into_iter().map(f64::to_bits));
        }
        out.extend(read_int(arg).into_iter().map(|a| a as u64));
    }
    // A linear layer's product (in parts of rows) and its weight gradient (in partial sums).
    let train = device.clone().autodiff();
    let (rows, d) = (3000, 64);
    let x: Tensor<2> = f32s(&crate::linear::values(rows * d, 1), [rows, d], &train);
    let w = f32s(&crate::linear::values(d * d, 2), [d, d], &train).require_grad();
    let c: Tensor<2> = f32s(&crate::linear::values(rows * d, 3), [rows, d], &train);
    let y = burn_segment::linear(x, w.clone(), None);
    let grads = (y.clone() * c).sum().backward();
    out.extend(read(y).into_iter().map(f64::to_bits));
    out.extend(
        read(w.grad(&grads).expect("w is tracked"))
            .into_iter()
            .map(f64::to_bits),
    );
    out
}

/// Values near 1 (so that a product of 10⁶ of them stays finite), f32-exact.
fn values(len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| 1.0 + ((i * 37) % 101) as f64 / 4096.0 - 50.0 / 4096.0)
        .collect()
}

/// Segments of 0 to about 100,000 rows, interleaved: `i`'s segment among 40.
fn mixed_id(i: usize) -> i64 {
    ((i * 7919) % 1000).isqrt() as i64 + i.is_multiple_of(9) as i64
}

#[test]
fn ops_inside_install_run_on_that_pool_with_the_same_bits() {
    for target in targets()
        .into_iter()
        .filter(|t| matches!(t.name, "ndarray" | "flex"))
    {
        let want = run(&target.device);
        // Every thread of the global pool waits until released: an op that went to the global
        // pool would wait too, and the timeout below would catch it.
        let global = rayon::current_num_threads();
        let blocked = Arc::new(AtomicBool::new(true));
        let waiting = Arc::new(AtomicUsize::new(0));
        for _ in 0..global {
            let (blocked, waiting) = (blocked.clone(), waiting.clone());
            rayon::spawn(move || {
                waiting.fetch_add(1, Ordering::SeqCst);
                while blocked.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
        }
        while waiting.load(Ordering::SeqCst) < global {
            std::thread::sleep(Duration::from_millis(1));
        }
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let (tx, rx) = mpsc::channel();
            let device = target.device.clone();
            std::thread::spawn(move || {
                let seen = pool.install(|| (rayon::current_num_threads(), run(&device)));
                tx.send(seen).unwrap();
            });
            let got = rx.recv_timeout(Duration::from_secs(300));
            let Ok((seen_threads, bits)) = got else {
                blocked.store(false, Ordering::SeqCst);
                panic!("{}: the ops waited for the global pool", target.name);
            };
            assert_eq!(seen_threads, threads, "{}", target.name);
            assert!(
                bits == want,
                "{}: other bits on {threads} thread(s)",
                target.name
            );
        }
        blocked.store(false, Ordering::SeqCst);
        // The chunked single segment against the f64 references.
        let rows = 1_000_000;
        let data = values(rows * 2);
        let ids0 = vec![0i64; rows];
        let x: Tensor<2> = f32s(&data, [rows, 2], &target.device);
        let t_ids = ids(&ids0, &target.device, false);
        let sum = segment_reduce_reference(&data, 2, &ids0, 1, SegmentReduction::Sum);
        let got = read(segment_sum(x.clone(), t_ids.clone(), 1));
        assert_close("chunked sum", &got, &sum, 1e-5, 0.0);
        let softmax = segment_softmax_reference(&data, 2, &ids0, 1);
        let got = read(segment_softmax(x, t_ids, 1));
        assert_close("chunked softmax", &got, &softmax, 1e-4, 1e-12);
    }
}
