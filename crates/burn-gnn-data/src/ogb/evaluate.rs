//! OGB's evaluators: the metrics with `ogb` 1.3.6's semantics and input checks (its
//! `nodeproppred`, `linkproppred` and `graphproppred` `evaluate.py`, scikit-learn's
//! `roc_auc_score` and `average_precision_score` for the two curve metrics), computed in f64.
//!
//! Where OGB would raise (a task without labelled rows, empty input) or return NaN with a
//! warning, these return a [`DataError::InvalidArgument`] instead.

use crate::DataError;

use super::info::{OgbInfo, OgbMetric};

/// The evaluator of one OGB dataset: its metric and number of tasks, OGB's `Evaluator(name)`.
///
/// ```
/// use burn_gnn_data::ogb::Evaluator;
/// let evaluator = Evaluator::new("ogbn-arxiv").unwrap();
/// // Four nodes, one task: true classes and predicted classes.
/// let acc = evaluator.eval(&[3., 1., 0., 2.], &[3., 1., 2., 2.], [4, 1]).unwrap();
/// assert_eq!(acc, 0.75);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluator {
    /// The dataset's name.
    pub name: String,
    /// The metric it reports.
    pub metric: OgbMetric,
    /// The number of tasks (columns of `y_true`) it expects.
    pub num_tasks: usize,
}

/// Per positive: its rank among its own negatives, OGB's `mrr` evaluation. Ties count half:
/// `rank = 1 + #(neg > pos) + #(neg == pos) / 2`, the mean of the optimistic and the pessimistic
/// rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Ranking {
    /// The rank of each positive, 1 for the best.
    pub ranks: Vec<f64>,
}

impl Ranking {
    /// The mean reciprocal rank (OGB's `mrr_list.mean()`).
    pub fn mrr(&self) -> f64 {
        mean(self.ranks.iter().map(|r| 1.0 / r))
    }

    /// The fraction of positives ranked `k` or better (OGB's `hits@k_list.mean()` for k = 1,
    /// 3, 10).
    pub fn hits(&self, k: usize) -> f64 {
        mean(self.ranks.iter().map(|&r| (r <= k as f64) as u8 as f64))
    }
}

/// Sub-token prediction scores (`ogbg-code2`), each averaged over the samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SubtokenScores {
    /// Mean precision.
    pub precision: f64,
    /// Mean recall.
    pub recall: f64,
    /// Mean F1.
    pub f1: f64,
}

impl Evaluator {
    /// The evaluator of the OGB dataset `name`.
    ///
    /// # Errors
    /// [`DataError::UnknownDataset`] for a name OGB does not list.
    pub fn new(name: &str) -> Result<Evaluator, DataError> {
        Ok(Evaluator::from_info(&OgbInfo::get(name)?))
    }

    /// The evaluator a dataset description asks for (a dataset of the user's own).
    pub fn from_info(info: &OgbInfo) -> Evaluator {
        Evaluator {
            name: info.name.clone(),
            metric: info.metric,
            num_tasks: info.num_tasks,
        }
    }

    /// Node and graph datasets (`acc`, `rocauc`, `ap`, `rmse`): `y_true` and `y_pred` are
    /// `[rows, num_tasks]`, row-major; NaN in `y_true` marks a missing label. For `acc`,
    /// `y_pred` holds predicted classes; for `rocauc` and `ap`, scores.
    ///
    /// # Errors
    /// [`DataError::InvalidArgument`] as OGB's checks: lengths that are not `shape`, a width
    /// other than `num_tasks`, a metric of another input kind; and as each metric function.
    pub fn eval(
        &self,
        y_true: &[f64],
        y_pred: &[f64],
        shape: [usize; 2],
    ) -> Result<f64, DataError> {
        // The lengths are checked by each metric function (`check_shape`).
        let tasks = shape[1];
        if tasks != self.num_tasks {
            return Err(invalid(format!(
                "{}: number of tasks should be {} but {tasks} given",
                self.name, self.num_tasks
            )));
        }
        match self.metric {
            OgbMetric::Accuracy => accuracy(y_true, y_pred, shape),
            OgbMetric::RocAuc => roc_auc(y_true, y_pred, shape),
            OgbMetric::AveragePrecision => average_precision(y_true, y_pred, shape),
            OgbMetric::Rmse => rmse(y_true, y_pred, shape),
            other => Err(self.wrong_input(other, "eval")),
        }
    }

    /// Link datasets scored against one shared set of negatives (`hits@K`; `rocauc` as
    /// `ogbl-vessel`): `pos` scores the positive edges, `neg` the negative ones.
    ///
    /// # Errors
    /// As [`hits_at_k`] and [`roc_auc`]; a metric of another input kind.
    pub fn eval_link(&self, pos: &[f64], neg: &[f64]) -> Result<f64, DataError> {
        match self.metric {
            OgbMetric::HitsAt(k) => hits_at_k(pos, neg, k),
            OgbMetric::RocAuc => {
                let y_true: Vec<f64> = std::iter::repeat_n(1.0, pos.len())
                    .chain(std::iter::repeat_n(0.0, neg.len()))
                    .collect();
                let y_score: Vec<f64> = pos.iter().chain(neg).copied().collect();
                roc_auc(&y_true, &y_score, [y_true.len(), 1])
            }
            other => Err(self.wrong_input(other, "eval_link")),
        }
    }

    /// Link datasets where each positive has its own negatives (`mrr`): `pos` `[n]`, `neg`
    /// `[n, num_neg]` row-major.
    ///
    /// # Errors
    /// As [`ranking`]; a metric of another input kind.
    pub fn eval_ranking(
        &self,
        pos: &[f64],
        neg: &[f64],
        num_neg: usize,
    ) -> Result<Ranking, DataError> {
        match self.metric {
            OgbMetric::Mrr => ranking(pos, neg, num_neg),
            other => Err(self.wrong_input(other, "eval_ranking")),
        }
    }

    /// Sub-token prediction (`F1`, `ogbg-code2`): the reference and predicted sub-tokens of
    /// each sample.
    ///
    /// # Errors
    /// As [`subtoken_f1`]; a metric of another input kind.
    pub fn eval_subtokens(
        &self,
        references: &[Vec<String>],
        predictions: &[Vec<String>],
    ) -> Result<SubtokenScores, DataError> {
        match self.metric {
            OgbMetric::F1 => subtoken_f1(references, predictions),
            other => Err(self.wrong_input(other, "eval_subtokens")),
        }
    }

    fn wrong_input(&self, metric: OgbMetric, called: &str) -> DataError {
        let right = match metric {
            OgbMetric::Accuracy
            | OgbMetric::RocAuc
            | OgbMetric::AveragePrecision
            | OgbMetric::Rmse => "eval",
            OgbMetric::HitsAt(_) => "eval_link",
            OgbMetric::Mrr => "eval_ranking",
            OgbMetric::F1 => "eval_subtokens",
        };
        invalid(format!(
            "{}: its metric is {}, evaluated by `{right}`, not `{called}`",
            self.name,
            metric.name()
        ))
    }
}

fn invalid(reason: String) -> DataError {
    DataError::InvalidArgument(reason)
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    sum / n as f64
}

/// Checks `shape` against the lengths, for the metric functions called directly.
fn check_shape(
    name: &str,
    y_true: &[f64],
    y_pred: &[f64],
    shape: [usize; 2],
) -> Result<(), DataError> {
    let n = shape[0] * shape[1];
    if y_true.len() != n || y_pred.len() != n {
        return Err(invalid(format!(
            "{name}: y_true has {} values and y_pred {}, shape {shape:?} needs {n}",
            y_true.len(),
            y_pred.len()
        )));
    }
    if shape[1] == 0 {
        return Err(invalid(format!("{name}: no tasks (shape {shape:?})")));
    }
    Ok(())
}

/// Per task: the (label, prediction) pairs of the rows whose label is not NaN.
fn labelled(
    y_true: &[f64],
    y_pred: &[f64],
    shape: [usize; 2],
    task: usize,
) -> (Vec<f64>, Vec<f64>) {
    (0..shape[0])
        .map(|r| r * shape[1] + task)
        .filter(|&i| !y_true[i].is_nan())
        .map(|i| (y_true[i], y_pred[i]))
        .unzip()
}

/// Accuracy averaged over tasks, OGB's `acc`: per task, the fraction of labelled rows (label
/// not NaN) whose prediction equals the label.
///
/// # Errors
/// [`DataError::InvalidArgument`] for lengths other than `shape`, or a task without a
/// labelled row (OGB divides by zero).
pub fn accuracy(y_true: &[f64], y_pred: &[f64], shape: [usize; 2]) -> Result<f64, DataError> {
    check_shape("acc", y_true, y_pred, shape)?;
    let mut per_task = Vec::with_capacity(shape[1]);
    for task in 0..shape[1] {
        let (t, p) = labelled(y_true, y_pred, shape, task);
        if t.is_empty() {
            return Err(invalid(format!("acc: task {task} has no labelled row")));
        }
        per_task.push(mean(t.iter().zip(&p).map(|(a, b)| (a == b) as u8 as f64)));
    }
    Ok(mean(per_task.into_iter()))
}

/// Root mean squared error averaged over tasks, OGB's `rmse`, over the labelled rows of each.
///
/// # Errors
/// [`DataError::InvalidArgument`] for lengths other than `shape`, or a task without a
/// labelled row (OGB returns NaN).
pub fn rmse(y_true: &[f64], y_pred: &[f64], shape: [usize; 2]) -> Result<f64, DataError> {
    check_shape("rmse", y_true, y_pred, shape)?;
    let mut per_task = Vec::with_capacity(shape[1]);
    for task in 0..shape[1] {
        let (t, p) = labelled(y_true, y_pred, shape, task);
        if t.is_empty() {
            return Err(invalid(format!("rmse: task {task} has no labelled row")));
        }
        per_task.push(mean(t.iter().zip(&p).map(|(a, b)| (a - b) * (a - b))).sqrt());
    }
    Ok(mean(per_task.into_iter()))
}

/// One task's labelled rows: labels and scores.
type LabelledTask = (Vec<f64>, Vec<f64>);

/// The binary tasks OGB scores: those with at least one label 1 and one label 0; per task,
/// the labelled rows' (label, score), checked.
fn binary_tasks(
    name: &str,
    y_true: &[f64],
    y_score: &[f64],
    shape: [usize; 2],
) -> Result<Vec<LabelledTask>, DataError> {
    check_shape(name, y_true, y_score, shape)?;
    let mut tasks = Vec::new();
    for task in 0..shape[1] {
        let (t, s) = labelled(y_true, y_score, shape, task);
        if let Some(bad) = t.iter().find(|&&v| v != 0.0 && v != 1.0) {
            return Err(invalid(format!(
                "{name}: task {task} has the label {bad}; labels are 0, 1 or NaN"
            )));
        }
        if s.iter().any(|v| !v.is_finite()) {
            return Err(invalid(format!(
                "{name}: task {task} has a NaN or infinite score at a labelled row"
            )));
        }
        if t.contains(&1.0) && t.contains(&0.0) {
            tasks.push((t, s));
        }
    }
    if tasks.is_empty() {
        return Err(invalid(format!(
            "{name}: no task has both a positive and a negative label (OGB: \"No positively \
             labeled data available\")"
        )));
    }
    Ok(tasks)
}

/// Indices of `score` sorted by descending score, with the end of each group of equal scores.
fn tie_groups(score: &[f64]) -> (Vec<usize>, Vec<usize>) {
    let mut order: Vec<usize> = (0..score.len()).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
    let mut ends = Vec::new();
    for i in 0..order.len() {
        if i + 1 == order.len() || score[order[i + 1]] != score[order[i]] {
            ends.push(i + 1);
        }
    }
    (order, ends)
}

/// ROC-AUC of one binary task: the trapezoidal area under the ROC curve with tied scores as
/// one threshold (scikit-learn's `roc_auc_score`), which is the probability that a random
/// positive outscores a random negative, ties counting half.
fn auc_of(label: &[f64], score: &[f64]) -> f64 {
    let (order, ends) = tie_groups(score);
    let (positives, negatives) = {
        let p = label.iter().filter(|&&v| v == 1.0).count();
        (p as f64, (label.len() - p) as f64)
    };
    // Sum over positives of (negatives strictly below + half of the tied negatives).
    let (mut area, mut negatives_above, mut start) = (0.0, 0.0, 0);
    for &end in &ends {
        let group = &order[start..end];
        let p = group.iter().filter(|&&i| label[i] == 1.0).count() as f64;
        let n = group.len() as f64 - p;
        let below = negatives - negatives_above - n;
        area += p * (below + n / 2.0);
        negatives_above += n;
        start = end;
    }
    area / (positives * negatives)
}

/// Average precision of one binary task: `Σ (R_k − R_{k−1}) P_k` over the distinct scores,
/// highest first (scikit-learn's `average_precision_score`).
fn ap_of(label: &[f64], score: &[f64]) -> f64 {
    let (order, ends) = tie_groups(score);
    let positives = label.iter().filter(|&&v| v == 1.0).count() as f64;
    let (mut ap, mut tp, mut fp, mut recall, mut start) = (0.0, 0.0, 0.0, 0.0, 0);
    for &end in &ends {
        for &i in &order[start..end] {
            if label[i] == 1.0 {
                tp += 1.0;
            } else {
                fp += 1.0;
            }
        }
        let r = tp / positives;
        ap += (r - recall) * tp / (tp + fp);
        recall = r;
        start = end;
    }
    ap
}

/// ROC-AUC averaged over the tasks with at least one positive and one negative label, OGB's
/// `rocauc`; rows whose label is NaN are skipped per task. Ties count half (scikit-learn's
/// `roc_auc_score`).
///
/// # Errors
/// [`DataError::InvalidArgument`] for lengths other than `shape`, a label other than 0, 1 or
/// NaN, a non-finite score at a labelled row, or no task with both labels.
pub fn roc_auc(y_true: &[f64], y_score: &[f64], shape: [usize; 2]) -> Result<f64, DataError> {
    let tasks = binary_tasks("rocauc", y_true, y_score, shape)?;
    Ok(mean(tasks.iter().map(|(t, s)| auc_of(t, s))))
}

/// Average precision averaged over the tasks with at least one positive and one negative
/// label, OGB's `ap` (molpcba, molmuv); rows whose label is NaN are skipped per task.
///
/// # Errors
/// As [`roc_auc`].
pub fn average_precision(
    y_true: &[f64],
    y_score: &[f64],
    shape: [usize; 2],
) -> Result<f64, DataError> {
    let tasks = binary_tasks("ap", y_true, y_score, shape)?;
    Ok(mean(tasks.iter().map(|(t, s)| ap_of(t, s))))
}

/// Hits@K, OGB's `hits@K` (collab, ddi, ppa): the fraction of positives scored strictly above
/// the K-th highest negative; 1 when there are fewer than K negatives.
///
/// # Errors
/// [`DataError::InvalidArgument`] for `k = 0`, no positives, or a NaN score.
pub fn hits_at_k(pos: &[f64], neg: &[f64], k: usize) -> Result<f64, DataError> {
    if k == 0 {
        return Err(invalid("hits@K: K must be at least 1".into()));
    }
    if pos.is_empty() {
        return Err(invalid("hits@K: no positive scores".into()));
    }
    if pos.iter().chain(neg).any(|v| v.is_nan()) {
        return Err(invalid("hits@K: a score is NaN".into()));
    }
    if neg.len() < k {
        return Ok(1.0);
    }
    let mut sorted = neg.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let kth = sorted[k - 1];
    Ok(mean(pos.iter().map(|&p| (p > kth) as u8 as f64)))
}

/// The rank of each positive among its own `num_neg` negatives (`neg` `[n, num_neg]`
/// row-major), OGB's `mrr` evaluation (citation2, wikikg2, biokg): see [`Ranking`].
///
/// # Errors
/// [`DataError::InvalidArgument`] if `neg` is not `pos.len() × num_neg`, there are no
/// positives, or a score is NaN.
pub fn ranking(pos: &[f64], neg: &[f64], num_neg: usize) -> Result<Ranking, DataError> {
    if pos.is_empty() {
        return Err(invalid("mrr: no positive scores".into()));
    }
    if neg.len() != pos.len() * num_neg {
        return Err(invalid(format!(
            "mrr: y_pred_neg has {} values, {} positives × {num_neg} negatives need {}",
            neg.len(),
            pos.len(),
            pos.len() * num_neg
        )));
    }
    if pos.iter().chain(neg).any(|v| v.is_nan()) {
        return Err(invalid("mrr: a score is NaN".into()));
    }
    let ranks = pos
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let row = &neg[i * num_neg..(i + 1) * num_neg];
            let above = row.iter().filter(|&&n| n > p).count() as f64;
            let at_least = row.iter().filter(|&&n| n >= p).count() as f64;
            0.5 * (above + at_least) + 1.0
        })
        .collect();
    Ok(Ranking { ranks })
}

/// Precision, recall and F1 of predicted sub-token *sets* against the references, averaged over
/// samples, OGB's `F1` (`ogbg-code2`); a sample with nothing predicted (or nothing to predict)
/// scores 0 where the ratio is undefined.
///
/// # Errors
/// [`DataError::InvalidArgument`] for lists of different lengths or no samples.
pub fn subtoken_f1(
    references: &[Vec<String>],
    predictions: &[Vec<String>],
) -> Result<SubtokenScores, DataError> {
    use std::collections::BTreeSet;
    if references.len() != predictions.len() {
        return Err(invalid(format!(
            "F1: {} references and {} predictions",
            references.len(),
            predictions.len()
        )));
    }
    if references.is_empty() {
        return Err(invalid("F1: no samples".into()));
    }
    let ratio = |a: usize, b: usize| if b > 0 { a as f64 / b as f64 } else { 0.0 };
    let (mut precision, mut recall, mut f1) = (Vec::new(), Vec::new(), Vec::new());
    for (r, p) in references.iter().zip(predictions) {
        let label: BTreeSet<&String> = r.iter().collect();
        let predicted: BTreeSet<&String> = p.iter().collect();
        let tp = label.intersection(&predicted).count();
        let (fp, fn_) = (predicted.len() - tp, label.len() - tp);
        let (pr, re) = (ratio(tp, tp + fp), ratio(tp, tp + fn_));
        precision.push(pr);
        recall.push(re);
        f1.push(if pr + re > 0.0 {
            2.0 * pr * re / (pr + re)
        } else {
            0.0
        });
    }
    Ok(SubtokenScores {
        precision: mean(precision.into_iter()),
        recall: mean(recall.into_iter()),
        f1: mean(f1.into_iter()),
    })
}
