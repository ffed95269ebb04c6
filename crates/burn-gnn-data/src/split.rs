//! Stratified k-fold cross-validation splits for graph classification.

use std::collections::BTreeMap;

use crate::DataError;
use crate::synthetic::SplitMix64;

/// One fold of a k-fold split: indices of the dataset's items, each list ascending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The items to train on (every item not in `test`).
    pub train: Vec<usize>,
    /// The held-out items.
    pub test: Vec<usize>,
}

/// A seeded stratified k-fold split of items with classes `labels` (scikit-learn's
/// `StratifiedKFold(shuffle=True)` in spirit): each class is shuffled, then dealt to the folds
/// in turn, the turn carried over from one class to the next, so that
///
/// - the test sets are disjoint and together hold every item once;
/// - each class has, in every test set, its count divided by `k`, rounded down or up;
/// - the test sets' sizes differ by at most one.
///
/// The same `labels` and `seed` give the same folds on every machine.
///
/// # Errors
/// [`DataError::InvalidArgument`] when `k < 2` or `k` exceeds the number of items.
pub fn stratified_k_fold(labels: &[usize], k: usize, seed: u64) -> Result<Vec<Fold>, DataError> {
    if k < 2 || k > labels.len() {
        return Err(DataError::InvalidArgument(format!(
            "k-fold needs 2 <= k <= the number of items ({}), got k = {k}",
            labels.len()
        )));
    }
    let mut by_class: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, &c) in labels.iter().enumerate() {
        by_class.entry(c).or_default().push(i);
    }
    let mut rng = SplitMix64::new(seed);
    let mut tests = vec![Vec::new(); k];
    let mut turn = 0;
    for items in by_class.values_mut() {
        rng.shuffle(items);
        for &i in items.iter() {
            tests[turn].push(i);
            turn = (turn + 1) % k;
        }
    }
    let mut fold_of = vec![0; labels.len()];
    for (f, test) in tests.iter_mut().enumerate() {
        test.sort_unstable();
        for &i in test.iter() {
            fold_of[i] = f;
        }
    }
    Ok(tests
        .into_iter()
        .enumerate()
        .map(|(f, test)| Fold {
            train: (0..labels.len()).filter(|&i| fold_of[i] != f).collect(),
            test,
        })
        .collect())
}
