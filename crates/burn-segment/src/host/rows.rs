//! [`Rows`]: the strided row view every kernel reads through.

use core::ops::Range;

use super::csr::prefetch_bytes;

/// The rows a kernel reads: `len` rows of `width` values, row `r` starting at `r * stride` in
/// `data`. A column-sliced tensor (`x.slice([.., a..b])`) is read in place with its parent's
/// row stride; a contiguous one has `stride == width`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rows<'a, T> {
    data: &'a [T],
    len: usize,
    width: usize,
    stride: usize,
}

impl<'a, T> Rows<'a, T> {
    /// Contiguous rows of `width`: `data.len() / width` of them (none when `width` is 0).
    #[cfg(test)]
    pub(crate) fn new(data: &'a [T], width: usize) -> Self {
        let len = data.len().checked_div(width).unwrap_or(0);
        Self::strided(data, len, width, width)
    }

    /// `len` rows of `width` values `stride` apart (any stride, 0 included: the kernels only
    /// read rows, so they may overlap).
    ///
    /// # Panics
    /// If `data` is too short to hold the last row.
    pub(crate) fn strided(data: &'a [T], len: usize, width: usize, stride: usize) -> Self {
        let needed = match len {
            0 => 0,
            len => (len - 1) * stride + width,
        };
        assert!(
            data.len() >= needed,
            "burn-segment: {} values cannot hold {len} rows of {width} at a stride of {stride}",
            data.len()
        );
        Self {
            data,
            len,
            width,
            stride,
        }
    }

    /// Values per row.
    #[inline(always)]
    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Rows `range` (at most [`len`](Self::len)) as rows of their own: row 0 is `range.start`.
    pub(crate) fn slice(&self, range: Range<usize>) -> Self {
        assert!(range.start <= range.end && range.end <= self.len);
        let data = match range.len() {
            0 => &self.data[..0],
            _ => &self.data[range.start * self.stride..],
        };
        Self::strided(data, range.len(), self.width, self.stride)
    }

    /// Row `r`.
    #[inline(always)]
    pub(crate) fn row(&self, r: usize) -> &'a [T] {
        let start = r * self.stride;
        &self.data[start..start + self.width]
    }

    /// Rows `range` as one contiguous slice, if the rows are contiguous (`stride == width`):
    /// a loop over `chunks_exact(width)` of it checks no bounds per row.
    #[inline(always)]
    pub(crate) fn span(&self, range: Range<usize>) -> Option<&'a [T]> {
        (self.stride == self.width)
            .then(|| &self.data[range.start * self.width..range.end * self.width])
    }

    /// Values `cols` of row `r` (one bounds check, where `row(r)[cols]` takes two).
    #[inline(always)]
    pub(crate) fn cols(&self, r: usize, cols: Range<usize>) -> &'a [T] {
        let start = r * self.stride;
        debug_assert!(cols.end <= self.width);
        &self.data[start + cols.start..start + cols.end]
    }

    /// Hints the CPU to load row `r` with x86's hint `HINT` ([`TO_L1`](super::csr::TO_L1) or
    /// [`TO_L2`](super::csr::TO_L2)); touches no memory.
    #[inline(always)]
    pub(crate) fn prefetch<const HINT: i32>(&self, r: usize) {
        prefetch_bytes::<HINT>(
            self.data.as_ptr().wrapping_add(r * self.stride) as *const u8,
            self.width * core::mem::size_of::<T>(),
        );
    }
}
