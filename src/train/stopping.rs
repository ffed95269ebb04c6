//! Early stopping as the papers' reference code does it: when to stop, and which epoch's model
//! to keep.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

/// When to stop training and which epoch's model to keep, given each epoch's validation
/// accuracy and loss.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum StoppingRule {
    /// The GAT reference code ([Veličković et al. 2018](https://arxiv.org/abs/1710.10903)):
    /// patience restarts whenever validation accuracy reaches its maximum so far or validation
    /// loss its minimum (ties count); a model is kept when both are at least as good as ever;
    /// training stops after `patience` epochs without either.
    GatReference {
        /// Epochs without a new best accuracy or loss before stopping.
        patience: usize,
    },
    /// The GCN reference code ([Kipf & Welling 2017](https://arxiv.org/abs/1609.02907)): stop
    /// once validation loss exceeds the mean of the previous `window` epochs' losses; keep the
    /// last model.
    KipfWindow {
        /// Epochs in the mean the loss is compared with.
        window: usize,
    },
    /// PyG's examples: never stop early; keep the first model with the highest validation
    /// accuracy.
    BestValAcc,
    /// Never stop early; keep the last model (Xu et al.'s GIN protocol, which reads the test
    /// accuracy of every epoch instead of selecting one).
    LastEpoch,
}

/// What [`EarlyStopping::observe`] decides about an epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Keep this epoch's model (it replaces the one kept before).
    pub keep: bool,
    /// Stop training after this epoch.
    pub stop: bool,
}

/// The state of a [`StoppingRule`] over one training run: fed each epoch's validation figures
/// in order, it says whether to keep that epoch's model and whether to stop. It serialises, so
/// that a resumed run continues with the same decisions.
///
/// ```
/// use burn_gnn::train::{EarlyStopping, StoppingRule, Verdict};
///
/// let mut rule = EarlyStopping::new(StoppingRule::GatReference { patience: 2 });
/// let v = |keep, stop| Verdict { keep, stop };
/// assert_eq!(rule.observe(0.70, 1.0), v(true, false)); // first epoch: best in both
/// assert_eq!(rule.observe(0.75, 1.1), v(false, false)); // accuracy up, loss not: no keep
/// assert_eq!(rule.observe(0.74, 1.2), v(false, false)); // neither: 1 epoch without
/// assert_eq!(rule.observe(0.73, 1.3), v(false, true)); // 2 epochs without: stop
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlyStopping {
    rule: StoppingRule,
    best_acc: Option<f64>,
    best_loss: Option<f64>,
    since_best: usize,
    /// The last `window` validation losses, oldest first (`KipfWindow` only).
    recent_losses: VecDeque<f64>,
}

impl EarlyStopping {
    /// The state before the first epoch.
    pub fn new(rule: StoppingRule) -> Self {
        EarlyStopping {
            rule,
            best_acc: None,
            best_loss: None,
            since_best: 0,
            recent_losses: VecDeque::new(),
        }
    }

    /// The rule this state follows.
    pub fn rule(&self) -> StoppingRule {
        self.rule
    }

    /// Takes the next epoch's validation accuracy and loss; says whether to keep its model and
    /// whether to stop.
    pub fn observe(&mut self, val_acc: f64, val_loss: f64) -> Verdict {
        match self.rule {
            // ANCHOR: gat_reference
            StoppingRule::GatReference { patience } => {
                let acc_best = self.best_acc.is_none_or(|best| val_acc >= best);
                let loss_best = self.best_loss.is_none_or(|best| val_loss <= best);
                if acc_best || loss_best {
                    self.best_acc = Some(self.best_acc.map_or(val_acc, |b| b.max(val_acc)));
                    self.best_loss = Some(self.best_loss.map_or(val_loss, |b| b.min(val_loss)));
                    self.since_best = 0;
                    Verdict {
                        keep: acc_best && loss_best,
                        stop: false,
                    }
                } else {
                    self.since_best += 1;
                    Verdict {
                        keep: false,
                        stop: self.since_best >= patience,
                    }
                }
            }
            // ANCHOR_END: gat_reference
            StoppingRule::KipfWindow { window } => {
                let losses = &mut self.recent_losses;
                // Summed oldest first, as the reference code's `np.mean` over the list does.
                let stop = window > 0
                    && losses.len() == window
                    && val_loss > losses.iter().sum::<f64>() / window as f64;
                losses.push_back(val_loss);
                if losses.len() > window {
                    losses.pop_front();
                }
                Verdict { keep: true, stop }
            }
            StoppingRule::BestValAcc => {
                let keep = self.best_acc.is_none_or(|best| val_acc > best);
                if keep {
                    self.best_acc = Some(val_acc);
                }
                Verdict { keep, stop: false }
            }
            StoppingRule::LastEpoch => Verdict {
                keep: true,
                stop: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `(acc, loss)` pairs; returns (kept epochs, 1-based; the epoch it stopped after).
    fn run(rule: StoppingRule, epochs: &[(f64, f64)]) -> (Vec<usize>, Option<usize>) {
        let mut state = EarlyStopping::new(rule);
        let mut kept = vec![];
        for (i, &(acc, loss)) in epochs.iter().enumerate() {
            let v = state.observe(acc, loss);
            if v.keep {
                kept.push(i + 1);
            }
            if v.stop {
                return (kept, Some(i + 1));
            }
        }
        (kept, None)
    }

    #[test]
    fn last_epoch_keeps_every_epoch_and_never_stops() {
        let epochs = [(0.9, 0.1), (0.1, 9.0), (0.5, 1.0)];
        assert_eq!(run(StoppingRule::LastEpoch, &epochs), (vec![1, 2, 3], None));
    }

    #[test]
    fn gat_reference_restarts_patience_on_either_best_and_keeps_on_both() {
        let rule = StoppingRule::GatReference { patience: 2 };
        // 1: best both (keep). 2: acc tie, loss better (keep). 3: acc up only (no keep, reset).
        // 4, 5: neither: stop after 5.
        let epochs = [
            (0.5, 1.0),
            (0.5, 0.9),
            (0.6, 0.95),
            (0.55, 0.92),
            (0.59, 0.91),
        ];
        assert_eq!(run(rule, &epochs), (vec![1, 2], Some(5)));
        // A loss-only improvement resets patience too.
        let epochs = [(0.5, 1.0), (0.4, 1.1), (0.4, 0.99), (0.4, 1.0), (0.4, 1.0)];
        assert_eq!(run(rule, &epochs), (vec![1], Some(5)));
        // Patience 1 stops at the first epoch without a best.
        let rule = StoppingRule::GatReference { patience: 1 };
        assert_eq!(run(rule, &[(0.5, 1.0), (0.4, 1.1)]), (vec![1], Some(2)));
    }

    #[test]
    fn kipf_window_compares_with_the_mean_of_the_previous_losses() {
        let rule = StoppingRule::KipfWindow { window: 3 };
        // Losses 1, 2, 3 fill the window (no check yet); 4: 2.5 > mean(1,2,3) = 2: stop.
        let epochs = [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0), (0.0, 2.5)];
        assert_eq!(run(rule, &epochs), (vec![1, 2, 3, 4], Some(4)));
        // 4: 2.0 is not above 2.0; 5: window (2, 3, 2) has mean 7/3; 2.4 > 2.333: stop.
        let epochs = [(0.0, 1.0), (0.0, 2.0), (0.0, 3.0), (0.0, 2.0), (0.0, 2.4)];
        assert_eq!(run(rule, &epochs), (vec![1, 2, 3, 4, 5], Some(5)));
        // Falling losses never stop.
        let falling: Vec<_> = (0..50).map(|i| (0.0, 10.0 - i as f64 * 0.1)).collect();
        assert_eq!(run(rule, &falling).1, None);
    }

    #[test]
    fn best_val_acc_keeps_the_first_of_equal_maxima_and_never_stops() {
        let epochs = [
            (0.3, 9.0),
            (0.5, 9.0),
            (0.5, 1.0),
            (0.4, 0.1),
            (0.6, 9.0),
            (0.6, 0.0),
        ];
        assert_eq!(
            run(StoppingRule::BestValAcc, &epochs),
            (vec![1, 2, 5], None)
        );
    }

    #[test]
    fn the_state_resumes_through_serde() {
        let rule = StoppingRule::KipfWindow { window: 2 };
        let mut whole = EarlyStopping::new(rule);
        let mut first = EarlyStopping::new(rule);
        let epochs = [(0.1, 3.0), (0.2, 2.0), (0.3, 1.0), (0.3, 1.6), (0.3, 1.2)];
        for &(a, l) in &epochs[..3] {
            whole.observe(a, l);
            first.observe(a, l);
        }
        let text = serde_json::to_string(&first).unwrap();
        let mut resumed: EarlyStopping = serde_json::from_str(&text).unwrap();
        assert_eq!(resumed, whole);
        for &(a, l) in &epochs[3..] {
            assert_eq!(resumed.observe(a, l), whole.observe(a, l));
        }
    }
}
