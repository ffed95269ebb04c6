//! The figures a classification run reports: accuracy, and mean ± standard deviation over seeds.

use burn::tensor::{Int, Tensor};

/// The fraction of rows whose largest logit is at the row's target class.
///
/// # Shapes
/// `logits: [rows, classes]`, `targets: [rows]`; no rows give `NaN`.
pub fn accuracy(logits: Tensor<2>, targets: Tensor<1, Int>) -> f64 {
    let rows = targets.dims()[0];
    let predicted = logits.argmax(1).squeeze_dim::<1>(1);
    let right = predicted.equal(targets).int().sum().into_scalar::<i64>();
    right as f64 / rows as f64
}

/// Mean and population standard deviation of per-seed figures (papers' "mean ± std");
/// `(NaN, NaN)` for none.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::{Device, TensorData};

    #[test]
    fn accuracy_counts_rows_whose_argmax_is_the_target() {
        let device = Device::flex();
        let logits = Tensor::<2>::from_data(
            TensorData::new(vec![0.1f32, 0.9, 0.8, 0.2, 0.3, 0.7, 0.6, 0.4], [4, 2]),
            &device,
        );
        let targets =
            Tensor::<1, Int>::from_data(TensorData::new(vec![1i64, 0, 0, 0], [4]), &device);
        // Rows 0, 1 and 3 are right; row 2 predicts 1.
        assert_eq!(accuracy(logits, targets), 0.75);
    }

    #[test]
    fn mean_std_is_the_population_deviation() {
        // Mean 5; squared deviations 9, 1, 1, 1, 0, 0, 4, 16 sum to 32; / 8 (population, not 7).
        let (mean, std) = mean_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(mean, 5.0);
        assert_eq!(std, 2.0);
        assert!(mean_std(&[]).0.is_nan());
    }
}
