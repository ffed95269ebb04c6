//! Ranking metrics of link prediction, exact and with scikit-learn's handling of ties.

use crate::NnError;

/// Scores sorted by decreasing value, cut into groups of equal score: `(positives, negatives)`
/// per group.
fn tie_groups(scores: &[f64], labels: &[bool]) -> Result<Vec<(u64, u64)>, NnError> {
    if scores.len() != labels.len() {
        return Err(NnError::Shape(format!(
            "{} scores but {} labels",
            scores.len(),
            labels.len()
        )));
    }
    if let Some(i) = scores.iter().position(|s| s.is_nan()) {
        return Err(NnError::InvalidInput(format!("score {i} is NaN")));
    }
    let positives = labels.iter().filter(|&&l| l).count();
    if positives == 0 || positives == labels.len() {
        return Err(NnError::InvalidInput(format!(
            "{positives} of {} pairs are positive: the metric needs both classes",
            labels.len()
        )));
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let mut groups: Vec<(u64, u64)> = Vec::new();
    let mut last = None;
    for i in order {
        if last != Some(scores[i]) {
            groups.push((0, 0));
            last = Some(scores[i]);
        }
        let g = groups.last_mut().expect("pushed above");
        if labels[i] { g.0 += 1 } else { g.1 += 1 }
    }
    Ok(groups)
}

/// The area under the ROC curve: the probability that a random positive scores above a random
/// negative, a tie counting one half (scikit-learn's `roc_auc_score`, whose trapezoids over
/// tied scores give the same value).
///
/// # Errors
/// [`NnError::Shape`] if the lengths differ; [`NnError::InvalidInput`] for a NaN score or
/// labels of one class only.
pub fn roc_auc(scores: &[f64], labels: &[bool]) -> Result<f64, NnError> {
    let groups = tie_groups(scores, labels)?;
    let (p, n) = groups.iter().fold((0, 0), |a, g| (a.0 + g.0, a.1 + g.1));
    // Walking down the scores: each positive beats the negatives still below it.
    let (mut negatives_above, mut wins) = (0u64, 0.0f64);
    for &(pos, neg) in &groups {
        wins += pos as f64 * ((n - negatives_above - neg) as f64 + 0.5 * neg as f64);
        negatives_above += neg;
    }
    Ok(wins / (p as f64 * n as f64))
}

/// Average precision: `Σ_k (R_k − R_{k−1}) · P_k` over the distinct scores in decreasing order,
/// where `P_k` and `R_k` are the precision and recall of predicting positive every pair scored
/// at least the `k`-th score (scikit-learn's `average_precision_score`: no interpolation, tied
/// scores one threshold).
///
/// # Errors
/// As [`roc_auc`].
pub fn average_precision(scores: &[f64], labels: &[bool]) -> Result<f64, NnError> {
    let groups = tie_groups(scores, labels)?;
    let p: u64 = groups.iter().map(|g| g.0).sum();
    let (mut tp, mut fp, mut ap) = (0u64, 0u64, 0.0f64);
    for &(pos, neg) in &groups {
        tp += pos;
        fp += neg;
        ap += (pos as f64 / p as f64) * (tp as f64 / (tp + fp) as f64);
    }
    Ok(ap)
}
