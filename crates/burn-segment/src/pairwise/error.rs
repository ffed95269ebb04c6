//! The typed error of a pairwise expression's construction.

/// What can be wrong with a pairwise expression.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairwiseError {
    /// `x` and `y` have rows of different widths.
    #[error("x has rows of width {x} but y of width {y}")]
    WidthMismatch {
        /// Width of `x`.
        x: usize,
        /// Width of `y`.
        y: usize,
    },
    /// A label tensor has the wrong length.
    #[error("labels_{side} has {got} entries for {expected} rows")]
    LabelLength {
        /// `"x"` or `"y"`.
        side: &'static str,
        /// Rows of that side.
        expected: usize,
        /// Entries given.
        got: usize,
    },
    /// A group mask was given before [`Pairwise::groups`](super::Pairwise::groups).
    #[error("a same_group / different_group mask needs labels: call Pairwise::groups first")]
    MissingGroups,
    /// [`Pairwise::sorted_groups`](super::Pairwise::sorted_groups) was given labels that decrease somewhere.
    #[error("labels_{side} are not sorted: entry {position} is below the one before it")]
    UnsortedGroups {
        /// `"x"` or `"y"`.
        side: &'static str,
        /// The first entry below its predecessor.
        position: usize,
    },
    /// The values of `softmax_matmul` do not have one row per row of `y`.
    #[error("v has {got} rows, y has {expected}")]
    ValueRows {
        /// Rows of `y`.
        expected: usize,
        /// Rows of `v`.
        got: usize,
    },
}
