//! Top-k rows of each segment, per column: a sorted buffer of `k` per column, filled in row
//! order.

use rayon::prelude::*;

use super::plan::CsrPlan;

/// A value top-k orders: NaN above every number.
pub(crate) trait TopkKey: Copy + PartialOrd + Send + Sync {
    fn is_nan(self) -> bool;
}
impl TopkKey for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}
impl TopkKey for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// Whether `a` ranks strictly before `b`: for the largest, NaN first, then larger numbers; for
/// the smallest, smaller numbers first and NaN last. Equal values do not: the earlier row
/// keeps its rank.
#[inline(always)]
pub(crate) fn before<T: TopkKey>(a: T, b: T, largest: bool) -> bool {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => false,
        (true, false) => largest,
        (false, true) => !largest,
        (false, false) => {
            if largest {
                a > b
            } else {
                a < b
            }
        }
    }
}

/// Rows of the `k` largest (or smallest) values of each segment, per column, as `[N, k, d]`
/// (segment, rank, column), -1 past a segment's rows. Ties go to the smaller row, as the rows
/// are visited in row order and an equal value never passes an earlier one. One task per
/// segment (any thread count, the same result).
pub(crate) fn topk_rows<T: TopkKey>(
    data: &[T],
    d: usize,
    plan: &CsrPlan,
    k: usize,
    largest: bool,
) -> Vec<i64> {
    let mut out = vec![-1i64; plan.num_segments() * k * d];
    if k == 0 || d == 0 || data.is_empty() {
        return out;
    }
    out.par_chunks_mut(k * d).enumerate().for_each_init(
        || (Vec::with_capacity(k * d), vec![0usize; d]),
        |(values, len): &mut (Vec<T>, Vec<usize>), (s, rows)| {
            values.clear();
            values.resize(k * d, data[0]);
            len.iter_mut().for_each(|l| *l = 0);
            plan.for_rows(s, |r| {
                for c in 0..d {
                    let v = data[r * d + c];
                    // Column c's buffer: values[c * k..][..len[c]], best first.
                    let (buf, m) = (c * k, len[c]);
                    let mut p = m;
                    while p > 0 && before(v, values[buf + p - 1], largest) {
                        p -= 1;
                    }
                    if p == k {
                        continue;
                    }
                    let end = m.min(k - 1);
                    for j in (p..end).rev() {
                        values[buf + j + 1] = values[buf + j];
                        rows[(j + 1) * d + c] = rows[j * d + c];
                    }
                    values[buf + p] = v;
                    rows[p * d + c] = r as i64;
                    len[c] = (m + 1).min(k);
                }
            });
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_value_then_row_with_nan_first_among_the_largest() {
        // Segment 0: rows 0, 2, 4 (values 3, 3, NaN); segment 1: rows 1, 3 (values 5, -inf).
        let data = [3.0f32, 5.0, 3.0, f32::NEG_INFINITY, f32::NAN];
        let plan = CsrPlan::new(&[0i64, 1, 0, 1, 0], 3);
        assert_eq!(topk_rows(&data, 1, &plan, 2, true), [4, 0, 1, 3, -1, -1]);
        assert_eq!(topk_rows(&data, 1, &plan, 2, false), [0, 2, 3, 1, -1, -1]);
        assert_eq!(
            topk_rows(&data, 1, &plan, 4, false),
            [0, 2, 4, -1, 3, 1, -1, -1, -1, -1, -1, -1]
        );
    }
}
