//! The CPU kernels run on their caller's rayon pool: inside `ThreadPool::install` they use that
//! pool's threads, not the global pool's, and give the same bits for any number of threads.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use burn::tensor::{Device, Tensor};
use burn_segment::{segment_max, segment_softmax, segment_sum};

use crate::common::*;

/// Sum, max and softmax of 300k rows × 4 over 2,000 unsorted segments, as bits.
fn run(device: &Device) -> Vec<u64> {
    let rows = 300_000;
    let values: Vec<f64> = (0..rows * 4)
        .map(|i| ((i * 37) % 101) as f64 / 16.0 - 3.0)
        .collect();
    let segment_ids: Vec<i64> = (0..rows as i64).map(|i| (i * 7919) % 2000).collect();
    let x: Tensor<2> = f32s(&values, [rows, 4], device);
    let ids = ids(&segment_ids, device, false);
    [
        segment_sum(x.clone(), ids.clone(), 2000),
        segment_max(x.clone(), ids.clone(), 2000),
        segment_softmax(x, ids, 2000),
    ]
    .into_iter()
    .flat_map(read)
    .map(f64::to_bits)
    .collect()
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
    }
}
