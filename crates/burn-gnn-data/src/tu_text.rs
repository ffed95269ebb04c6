//! The TU text format: one row per line, comma-separated numbers, every error naming its file
//! and line.

use crate::DataError;

/// The widest one-hot column accepted (TU label columns have at most a few hundred values); a
/// wider one is a corrupt file, not a reason to allocate gigabytes.
const MAX_ONE_HOT: i64 = 1 << 16;

/// The most one-hot values built for one file (`rows × width`, 1 GiB of `f32`).
const MAX_ONE_HOT_VALUES: usize = 1 << 28;

/// A parsed file: rows of equally many comma-separated cells, blank lines skipped.
pub(crate) struct Table {
    file: String,
    /// The file's 1-based line of each row.
    lines: Vec<usize>,
    cols: usize,
    /// Each cell, trimmed, row-major.
    cells: Vec<String>,
}

/// Splits `bytes` (UTF-8; LF or CRLF line ends) into a [`Table`].
pub(crate) fn read_table(file: &str, bytes: &[u8]) -> Result<Table, DataError> {
    let text = std::str::from_utf8(bytes).map_err(|e| DataError::Parse {
        file: file.to_string(),
        line: 1 + bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count(),
        reason: "not UTF-8 text".into(),
    })?;
    let mut table = Table {
        file: file.to_string(),
        lines: Vec::new(),
        cols: 0,
        cells: Vec::new(),
    };
    for (i, line) in text.split('\n').enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let before = table.cells.len();
        table
            .cells
            .extend(line.split(',').map(|c| c.trim().to_string()));
        let cols = table.cells.len() - before;
        table.lines.push(i + 1);
        if table.lines.len() == 1 {
            table.cols = cols;
        } else if cols != table.cols {
            return Err(table.error(
                table.lines.len() - 1,
                format!(
                    "{cols} columns, but line {} has {}",
                    table.lines[0], table.cols
                ),
            ));
        }
    }
    Ok(table)
}

impl Table {
    /// Rows (non-blank lines).
    pub(crate) fn rows(&self) -> usize {
        self.lines.len()
    }

    /// The file's line of `row` (one past the last line for a row past the end).
    pub(crate) fn line_of(&self, row: usize) -> usize {
        self.lines
            .get(row)
            .copied()
            .unwrap_or_else(|| self.lines.last().map_or(1, |l| l + 1))
    }

    /// A [`DataError::Parse`] at `row`.
    pub(crate) fn error(&self, row: usize, reason: String) -> DataError {
        DataError::Parse {
            file: self.file.clone(),
            line: self.line_of(row),
            reason,
        }
    }

    /// Checks the table has `rows` rows (and `cols` columns when given; `what` says what a row
    /// is); returns the column count.
    pub(crate) fn expect_shape(
        &self,
        rows: usize,
        cols: Option<usize>,
        what: &str,
    ) -> Result<usize, DataError> {
        if let Some(cols) = cols.filter(|&c| self.rows() > 0 && c != self.cols) {
            return Err(self.error(0, format!("{} columns, expected {cols}", self.cols)));
        }
        if self.rows() != rows {
            let reason = if self.rows() > rows {
                format!("more than the {rows} lines expected ({what})")
            } else {
                format!(
                    "the file ends after {} lines, expected {rows} ({what})",
                    self.rows()
                )
            };
            return Err(self.error(rows.min(self.rows()), reason));
        }
        Ok(self.cols)
    }

    /// Every cell as an integer.
    pub(crate) fn ints(&self) -> Result<Vec<i64>, DataError> {
        self.parse(|c| c.parse::<i64>().ok(), "an integer")
    }

    /// Every cell as a finite `f32`.
    pub(crate) fn floats(&self) -> Result<Vec<f32>, DataError> {
        self.parse(
            |c| c.parse::<f32>().ok().filter(|v| v.is_finite()),
            "a finite number",
        )
    }

    fn parse<T>(&self, f: impl Fn(&str) -> Option<T>, what: &str) -> Result<Vec<T>, DataError> {
        let cols = self.cols.max(1);
        self.cells
            .iter()
            .enumerate()
            .map(|(i, c)| f(c).ok_or_else(|| self.error(i / cols, format!("`{c}` is not {what}"))))
            .collect()
    }
}

/// Each integer column one-hot over `min..=max` of its values, the columns side by side (PyG's
/// `TUDataset`); returns the total width and the row-major values.
pub(crate) fn one_hot(table: &Table) -> Result<(usize, Vec<f32>), DataError> {
    let values = table.ints()?;
    let (rows, cols) = (table.rows(), table.cols);
    let mut ranges = Vec::with_capacity(cols);
    for c in 0..cols {
        let column = values.iter().skip(c).step_by(cols);
        let (lo, hi) = column.fold((i64::MAX, i64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let width = if lo > hi {
            0
        } else {
            hi.checked_sub(lo)
                .and_then(|d| d.checked_add(1))
                .unwrap_or(i64::MAX)
        };
        if width > MAX_ONE_HOT {
            return Err(table.error(
                0,
                format!(
                    "labels of column {} span {lo}..={hi}, over {MAX_ONE_HOT} values",
                    c + 1
                ),
            ));
        }
        ranges.push((lo, width as usize));
    }
    let width: usize = ranges.iter().map(|(_, w)| w).sum();
    if rows.saturating_mul(width) > MAX_ONE_HOT_VALUES {
        return Err(table.error(
            0,
            format!("{rows} rows of {width} one-hot labels is too many"),
        ));
    }
    let mut out = vec![0f32; rows * width];
    for (r, row) in values.chunks_exact(cols.max(1)).enumerate() {
        let mut offset = r * width;
        for (&v, &(lo, w)) in row.iter().zip(&ranges) {
            out[offset + (v - lo) as usize] = 1.0;
            offset += w;
        }
    }
    Ok((width, out))
}
