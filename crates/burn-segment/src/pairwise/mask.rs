//! Pair masks: which pairs `(i, j)` of a pairwise expression a consumer sees, as a small
//! expression that the kernels evaluate per pair (never an `[N, M]` matrix).

use core::ops::{BitAnd, BitOr, Not};

/// A predicate over the pairs `(i, j)` (row `i` of `x`, row `j` of `y`) of a
/// [`Pairwise`](super::Pairwise) expression. Combine with `&`, `|` and `!`.
///
/// | mask | eligible when |
/// |---|---|
/// | [`same_group`](Self::same_group) | `labels_x[i] == labels_y[j]` |
/// | [`different_group`](Self::different_group) | `labels_x[i] != labels_y[j]` |
/// | [`diagonal`](Self::diagonal) | `i == j` |
/// | [`causal(o)`](Self::causal) | `j <= i + o` |
/// | [`band(l, u)`](Self::band) | `i - l <= j <= i + u` |
/// | [`within(r)`](Self::within) | `metric(x_i, y_j) < r` (NaN: never) |
///
/// The group masks need labels, given by [`Pairwise::groups`](super::Pairwise::groups).
#[derive(Clone, Debug, PartialEq)]
pub enum PairMask {
    /// `labels_x[i] == labels_y[j]` (`same = true`) or `!=` (`same = false`).
    Group {
        /// Whether the labels must be equal.
        same: bool,
    },
    /// `i - lower <= j <= i + upper` (saturating).
    Band {
        /// How far below the diagonal a pair may lie.
        lower: i64,
        /// How far above the diagonal a pair may lie.
        upper: i64,
    },
    /// `metric(x_i, y_j) < r`.
    Within(f64),
    /// Both.
    And(Box<PairMask>, Box<PairMask>),
    /// Either.
    Or(Box<PairMask>, Box<PairMask>),
    /// The complement.
    Not(Box<PairMask>),
}

impl PairMask {
    /// Pairs whose rows carry the same label (e.g. nodes of the same graph of a batch).
    pub fn same_group() -> Self {
        Self::Group { same: true }
    }

    /// Pairs whose rows carry different labels.
    pub fn different_group() -> Self {
        Self::Group { same: false }
    }

    /// The pairs `i == j`.
    pub fn diagonal() -> Self {
        Self::band(0, 0)
    }

    /// The pairs `j <= i + offset` (`causal(0)`: each query sees itself and the rows before it).
    pub fn causal(offset: i64) -> Self {
        Self::band(i64::MAX, offset)
    }

    /// The pairs `i - lower <= j <= i + upper`.
    pub fn band(lower: i64, upper: i64) -> Self {
        Self::Band { lower, upper }
    }

    /// The pairs whose metric is below `r` (strictly).
    pub fn within(r: f64) -> Self {
        Self::Within(r)
    }

    /// The mask of the transposed expression (rows of `y` against rows of `x`): `(j, i)` is
    /// eligible there exactly when `(i, j)` is here.
    pub fn transpose(&self) -> Self {
        match self {
            Self::Band { lower, upper } => Self::Band {
                lower: *upper,
                upper: *lower,
            },
            Self::And(a, b) => Self::And(Box::new(a.transpose()), Box::new(b.transpose())),
            Self::Or(a, b) => Self::Or(Box::new(a.transpose()), Box::new(b.transpose())),
            Self::Not(a) => Self::Not(Box::new(a.transpose())),
            other => other.clone(),
        }
    }

    /// Whether a group mask appears anywhere in the expression.
    pub fn uses_groups(&self) -> bool {
        match self {
            Self::Group { .. } => true,
            Self::And(a, b) | Self::Or(a, b) => a.uses_groups() || b.uses_groups(),
            Self::Not(a) => a.uses_groups(),
            _ => false,
        }
    }

    /// Whether every eligible pair has equal labels (the mask is `same_group`, or a conjunction
    /// with it): a query then only needs the rows of its own group.
    pub fn requires_same_group(&self) -> bool {
        match self {
            Self::Group { same } => *same,
            Self::And(a, b) => a.requires_same_group() || b.requires_same_group(),
            _ => false,
        }
    }

    /// Whether `(i, j)` with labels `(lx, ly)` and metric value `score` is eligible.
    pub(crate) fn eligible(&self, i: usize, j: usize, lx: i64, ly: i64, score: f64) -> bool {
        match self {
            Self::Group { same } => (lx == ly) == *same,
            Self::Band { lower, upper } => in_band(i, j, *lower, *upper),
            Self::Within(r) => score < *r,
            Self::And(a, b) => a.eligible(i, j, lx, ly, score) && b.eligible(i, j, lx, ly, score),
            Self::Or(a, b) => a.eligible(i, j, lx, ly, score) || b.eligible(i, j, lx, ly, score),
            Self::Not(a) => !a.eligible(i, j, lx, ly, score),
        }
    }
}

/// `i - lower <= j <= i + upper` without overflow.
pub(crate) fn in_band(i: usize, j: usize, lower: i64, upper: i64) -> bool {
    let d = j as i128 - i as i128;
    -(lower as i128) <= d && d <= upper as i128
}

impl BitAnd for PairMask {
    type Output = PairMask;
    fn bitand(self, rhs: Self) -> Self {
        Self::And(Box::new(self), Box::new(rhs))
    }
}

impl BitOr for PairMask {
    type Output = PairMask;
    fn bitor(self, rhs: Self) -> Self {
        Self::Or(Box::new(self), Box::new(rhs))
    }
}

impl Not for PairMask {
    type Output = PairMask;
    fn not(self) -> Self {
        Self::Not(Box::new(self))
    }
}
