//! Top-k rows of each segment, per column: a sorted buffer of `k` per column, filled in row
//! order.

use rayon::prelude::*;

use super::csr::CsrPlan;

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

/// Segments of at most this many rows are ranked by counting: every pair of rows compared, the
/// columns as vector lanes (`m²` compares a column, branch-free), where a sorted buffer would
/// shift slots for almost every row (with `N = E / 10` a segment holds about 10 rows, and
/// `k = 8` keeps most of them). Longer segments keep the buffer (`m · k` at most).
const COUNT_RANKS_UP_TO: usize = 48;

/// A segment's scratch: its rows, their keys `[m, d]`, and a rank per column.
#[derive(Default)]
struct Scratch {
    rows: Vec<usize>,
    keys: Vec<u64>,
    ranks: Vec<u32>,
    len: Vec<usize>,
}

/// Rows of the `k` largest (or smallest) values of each segment, per column, as `[N, k, d]`
/// (segment, rank, column), -1 past a segment's rows. Ties go to the smaller row: a row's rank
/// is the number of rows before it in the order, which an equal value at an earlier row is
/// and at a later row is not. One task per segment (any thread count, the same result).
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
    let job = Job {
        data,
        d,
        plan,
        k,
        flip,
    };
    out.par_chunks_mut(k * d).enumerate().for_each_init(
        Scratch::default,
        |scratch: &mut Scratch, (s, rows)| {
            let m = plan.offsets[s + 1] - plan.offsets[s];
            if m <= COUNT_RANKS_UP_TO {
                job.count_ranks(s, scratch, rows);
            } else {
                job.insert_ranks(s, scratch, rows);
            }
        },
    );
    out
}

/// What every segment's ranking reads: the data `[E, d]`, the plan, `k` and the key flip.
struct Job<'a, T> {
    data: &'a [T],
    d: usize,
    plan: &'a CsrPlan<'a>,
    k: usize,
    flip: u64,
}

impl<T: TopkKey> Job<'_, T> {
    /// [`topk_rows`] of segment `s` by counting: the rank of row `a` in column `c` is the number of
    /// rows whose key is greater, or equal and earlier.
    fn count_ranks(&self, s: usize, scratch: &mut Scratch, rows: &mut [i64]) {
        let Job {
            data,
            d,
            plan,
            k,
            flip,
        } = *self;
        let Scratch {
            rows: members,
            keys,
            ranks,
            ..
        } = scratch;
        members.clear();
        keys.clear();
        plan.for_rows(s, |r| {
            members.push(r);
            keys.extend(data[r * d..(r + 1) * d].iter().map(|v| v.rank_key() ^ flip));
        });
        ranks.resize(d, 0);
        for (a, &row) in members.iter().enumerate() {
            ranks.fill(0);
            let ka = &keys[a * d..(a + 1) * d];
            for b in 0..a {
                let kb = &keys[b * d..(b + 1) * d];
                for ((rank, &x), &y) in ranks.iter_mut().zip(ka).zip(kb) {
                    *rank += u32::from(y >= x);
                }
            }
            for b in a + 1..members.len() {
                let kb = &keys[b * d..(b + 1) * d];
                for ((rank, &x), &y) in ranks.iter_mut().zip(ka).zip(kb) {
                    *rank += u32::from(y > x);
                }
            }
            for (c, &rank) in ranks.iter().enumerate() {
                if (rank as usize) < k {
                    rows[rank as usize * d + c] = row as i64;
                }
            }
        }
    }

    /// [`topk_rows`] of segment `s` through a sorted buffer of `k` per column, filled in row order.
    fn insert_ranks(&self, s: usize, scratch: &mut Scratch, rows: &mut [i64]) {
        let Job {
            data,
            d,
            plan,
            k,
            flip,
        } = *self;
        let Scratch {
            keys: values, len, ..
        } = scratch;
        values.clear();
        values.resize(k * d, 0);
        len.clear();
        len.resize(d, 0);
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
    }
}

/// `data[rows[i]]` of column `i % c` for every entry of `rows` (`[N, k, c]`), `fill` at -1.
pub(crate) fn picked_values<T: Copy + Send + Sync>(
    data: &[T],
    rows: &[i64],
    c: usize,
    fill: T,
) -> Vec<T> {
    let mut out = vec![fill; rows.len()];
    out.par_chunks_mut(c)
        .zip(rows.par_chunks(c))
        .with_min_len(1024)
        .for_each(|(out, rows)| {
            for (col, (o, &r)) in out.iter_mut().zip(rows).enumerate() {
                if r >= 0 {
                    *o = data[r as usize * c + col];
                }
            }
        });
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
        // Segments of about 43 rows (ranked by counting) and of about 150 (by insertion).
        for n in [7usize, 2] {
            ranks_as_a_stable_sort_with(n);
        }
    }

    fn ranks_as_a_stable_sort_with(n: usize) {
        let d = 5usize;
        let mut next = crate::host::testing::lcg(9);
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
