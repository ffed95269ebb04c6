//! Top-k rows of each segment, per column: a sorted buffer of `k` per column, filled in row
//! order.

use rayon::prelude::*;

use super::plan::CsrPlan;

/// A value top-k orders: NaN above every number.
pub(crate) trait TopkKey: Copy + PartialOrd + Send + Sync {
    fn is_nan(self) -> bool;
    /// An integer with the order top-k ranks by: every NaN above `+inf`, `-0` equal to `+0`,
    /// numbers in their order. Comparing these is one integer compare, where [`before`]
    /// branches on NaN.
    fn rank_key(self) -> u64;
}
impl TopkKey for f32 {
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn rank_key(self) -> u64 {
        ordered_bits(u64::from(self.to_bits()), self.is_nan(), self == 0.0, 31)
    }
}
impl TopkKey for f64 {
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn rank_key(self) -> u64 {
        ordered_bits(self.to_bits(), self.is_nan(), self == 0.0, 63)
    }
}

/// The IEEE bits of a float (sign at bit `sign`) mapped to an unsigned order: negatives
/// flipped below the positives, NaN to the top, both zeros to `+0`.
#[inline(always)]
fn ordered_bits(bits: u64, nan: bool, zero: bool, sign: u32) -> u64 {
    let all = u64::MAX >> (63 - sign);
    match (nan, zero) {
        (true, _) => all,
        (_, true) => 1 << sign,
        _ if bits >> sign & 1 == 1 => !bits & all,
        _ => bits | 1 << sign,
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
    // Larger keys rank first: the smallest values are the largest flipped keys (NaN, the top
    // key, becoming the last).
    let flip = if largest { 0 } else { u64::MAX };
    out.par_chunks_mut(k * d).enumerate().for_each_init(
        || (Vec::with_capacity(k * d), vec![0usize; d]),
        |(values, len): &mut (Vec<u64>, Vec<usize>), (s, rows)| {
            values.clear();
            values.resize(k * d, 0);
            len.iter_mut().for_each(|l| *l = 0);
            plan.for_rows(s, |r| {
                for c in 0..d {
                    let v = data[r * d + c].rank_key() ^ flip;
                    // Column c's buffer: values[c * k..][..len[c]], best first.
                    let (buf, m) = (c * k, len[c]);
                    let mut p = m;
                    while p > 0 && v > values[buf + p - 1] {
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
    fn rank_keys_order_as_before_does() {
        let values = [
            f32::NEG_INFINITY,
            -3.5,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::from_bits(1),
            2.0,
            f32::MAX,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        for &a in &values {
            for &b in &values {
                for largest in [true, false] {
                    let flip = if largest { 0 } else { u64::MAX };
                    let by_key = a.rank_key() ^ flip > b.rank_key() ^ flip;
                    assert_eq!(by_key, before(a, b, largest), "{a} {b} {largest}");
                    let (a, b) = (a as f64, b as f64);
                    let by_key = a.rank_key() ^ flip > b.rank_key() ^ flip;
                    assert_eq!(by_key, before(a, b, largest), "f64 {a} {b} {largest}");
                }
            }
        }
    }

    #[test]
    fn ranks_as_a_stable_sort_does() {
        // Small integers (many ties), NaN, infinities; segments shorter and longer than k.
        let (d, n) = (5usize, 7usize);
        let mut next = crate::cpu::kernels::testing::lcg(9);
        let e = 300;
        let ids: Vec<i64> = (0..e).map(|_| (next() % n) as i64).collect();
        let data: Vec<f64> = (0..e * d)
            .map(|_| match next() % 20 {
                0 => f64::NAN,
                1 => f64::INFINITY,
                2 => f64::NEG_INFINITY,
                3 => -0.0,
                v => (v % 6) as f64 - 2.0,
            })
            .collect();
        let plan = CsrPlan::new(&ids, n + 1); // segment n is empty
        for k in [1, 3, 8, 60] {
            for largest in [true, false] {
                let got = topk_rows(&data, d, &plan, k, largest);
                for s in 0..=n {
                    for c in 0..d {
                        let mut rows: Vec<usize> = (0..e).filter(|&r| ids[r] == s as i64).collect();
                        // A stable sort by rank keeps the earlier row first among equals.
                        rows.sort_by(|&a, &b| {
                            let (x, y) = (data[a * d + c], data[b * d + c]);
                            match (before(x, y, largest), before(y, x, largest)) {
                                (true, _) => std::cmp::Ordering::Less,
                                (_, true) => std::cmp::Ordering::Greater,
                                _ => std::cmp::Ordering::Equal,
                            }
                        });
                        let want: Vec<i64> = (0..k)
                            .map(|j| rows.get(j).map_or(-1, |&r| r as i64))
                            .collect();
                        let have: Vec<i64> = (0..k).map(|j| got[(s * k + j) * d + c]).collect();
                        assert_eq!(have, want, "k {k} largest {largest} segment {s} col {c}");
                    }
                }
            }
        }
    }

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
