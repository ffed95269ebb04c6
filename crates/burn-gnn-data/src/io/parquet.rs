//! Parquet tables (feature `parquet`): row groups decoded in parallel (arrow-rs), then read
//! through the same mapping as CSV: the numeric columns of a plain edge list straight into
//! their output, everything else a row at a time as text fields, so ids, features, vectors and
//! labels mean what they mean in a CSV file.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use rayon::prelude::*;

use crate::DataError;

/// Integer columns, then float columns, whole.
pub(crate) type NumericColumns = (Vec<Vec<i64>>, Vec<Vec<f32>>);

/// A Parquet file opened: its column names and row groups, read from its footer. The rows are
/// decoded when asked for.
pub(crate) struct ParquetRows {
    path: PathBuf,
    pub(crate) names: Vec<String>,
    /// Per row group: its first row (0-based) over the file, then the total.
    group_starts: Vec<usize>,
}

fn bad(path: &Path, reason: String) -> DataError {
    DataError::Table {
        file: path.display().to_string(),
        line: 0,
        column: None,
        reason,
    }
}

fn open(path: &Path) -> Result<std::fs::File, DataError> {
    std::fs::File::open(path).map_err(|source| DataError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A reader of row group `g`, of the columns `projection` (all when `None`).
fn group_reader(
    path: &Path,
    g: usize,
    projection: Option<&[usize]>,
) -> Result<ParquetRecordBatchReader, DataError> {
    let group_error = |e: &dyn std::fmt::Display| bad(path, format!("row group {g}: {e}"));
    let builder = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
        .map_err(|e| group_error(&e))?
        .with_row_groups(vec![g])
        .with_batch_size(1 << 16);
    let builder = match projection {
        Some(columns) => {
            let mask = ProjectionMask::roots(builder.parquet_schema(), columns.iter().copied());
            builder.with_projection(mask)
        }
        None => builder,
    };
    builder.build().map_err(|e| group_error(&e))
}

impl ParquetRows {
    /// Opens `path` and reads its footer (schema and row groups).
    pub(crate) fn read(path: &Path) -> Result<ParquetRows, DataError> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(open(path)?)
            .map_err(|e| bad(path, format!("not a Parquet file this reader reads: {e}")))?;
        let names = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let mut group_starts = vec![0usize];
        for group in builder.metadata().row_groups() {
            let last = *group_starts.last().expect("one");
            group_starts.push(last.saturating_add(group.num_rows().max(0) as usize));
        }
        Ok(ParquetRows {
            path: path.to_path_buf(),
            names,
            group_starts,
        })
    }

    fn num_groups(&self) -> usize {
        self.group_starts.len() - 1
    }

    /// The row group holding the 0-based `row`.
    pub(crate) fn group_of(&self, row: usize) -> usize {
        self.group_starts
            .partition_point(|&s| s <= row)
            .saturating_sub(1)
            .min(self.num_groups().saturating_sub(1))
    }

    /// Every row group decoded, in parallel, in row order.
    fn batches(&self) -> Result<Vec<RecordBatch>, DataError> {
        let groups: Vec<Vec<RecordBatch>> = (0..self.num_groups())
            .into_par_iter()
            .map(|g| {
                group_reader(&self.path, g, None)?
                    .map(|batch| batch.map_err(|e| bad(&self.path, format!("row group {g}: {e}"))))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        Ok(groups.into_iter().flatten().collect())
    }

    /// Calls `f` with each row's fields as text (see [`field`]) and its 1-based row number.
    pub(crate) fn for_each_row(
        &self,
        mut f: impl FnMut(&csv::ByteRecord, u64) -> Result<(), DataError>,
        error: impl Fn(u64, usize, String) -> DataError,
    ) -> Result<(), DataError> {
        let mut record = csv::ByteRecord::new();
        let mut text = Vec::new();
        let mut row = 0u64;
        for batch in &self.batches()? {
            for r in 0..batch.num_rows() {
                row += 1;
                record.clear();
                for (c, column) in batch.columns().iter().enumerate() {
                    text.clear();
                    field(column.as_ref(), r, &mut text).map_err(|e| error(row, c, e))?;
                    record.push_field(&text);
                }
                f(&record, row)?;
            }
        }
        Ok(())
    }

    /// The integer columns `ints` and float columns `floats` whole, when every asked column
    /// has a numeric type that converts exactly and no null; `None` otherwise (the row reader
    /// then reports what is wrong where). Each row group is decoded (only the asked columns)
    /// straight into its rows of the output, in parallel, so no more than the row groups in
    /// flight are held beside the result.
    pub(crate) fn numeric_columns(
        &self,
        ints: &[usize],
        floats: &[usize],
    ) -> Option<NumericColumns> {
        let total = *self.group_starts.last().expect("one");
        let mut projection: Vec<usize> = ints.iter().chain(floats).copied().collect();
        projection.sort_unstable();
        projection.dedup();
        // Where each asked column lands in a projected batch.
        let at = |c: usize| projection.binary_search(&c).expect("projected");
        let mut int_out: Vec<Vec<i64>> = ints.iter().map(|_| vec![0; total]).collect();
        let mut float_out: Vec<Vec<f32>> = floats.iter().map(|_| vec![0.0; total]).collect();
        let sizes: Vec<usize> = self.group_starts.windows(2).map(|w| w[1] - w[0]).collect();
        // Per row group: its slice of every output column.
        let int_parts = per_group(&mut int_out, &sizes);
        let float_parts = per_group(&mut float_out, &sizes);
        let parts = int_parts.into_iter().zip(float_parts);
        let ok = parts.collect::<Vec<_>>().into_par_iter().enumerate().all(
            |(g, (mut int_parts, mut float_parts))| {
                let Ok(reader) = group_reader(&self.path, g, Some(&projection)) else {
                    return false;
                };
                let mut offset = 0;
                for batch in reader {
                    let Ok(batch) = batch else { return false };
                    let n = batch.num_rows();
                    if offset + n > sizes[g] {
                        return false;
                    }
                    for (k, &c) in ints.iter().enumerate() {
                        let dst = &mut int_parts[k][offset..offset + n];
                        if fill_ints(batch.column(at(c)).as_ref(), dst).is_none() {
                            return false;
                        }
                    }
                    for (k, &c) in floats.iter().enumerate() {
                        let dst = &mut float_parts[k][offset..offset + n];
                        if fill_floats(batch.column(at(c)).as_ref(), dst).is_none() {
                            return false;
                        }
                    }
                    offset += n;
                }
                offset == sizes[g]
            },
        );
        ok.then_some((int_out, float_out))
    }
}

/// Each column cut into consecutive slices of `sizes`, grouped by slice: the `g`-th entry holds
/// every column's `g`-th slice.
fn per_group<'a, T>(columns: &'a mut [Vec<T>], sizes: &[usize]) -> Vec<Vec<&'a mut [T]>> {
    let mut groups: Vec<Vec<&mut [T]>> = sizes.iter().map(|_| Vec::new()).collect();
    for column in columns {
        let mut rest = column.as_mut_slice();
        for (group, &n) in groups.iter_mut().zip(sizes) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            group.push(head);
            rest = tail;
        }
    }
    groups
}

macro_rules! fill_primitive {
    ($array:expr, $dst:expr, $t:ty, $convert:expr) => {{
        let values = $array.as_primitive::<$t>().values();
        for (d, &v) in $dst.iter_mut().zip(values.iter()) {
            *d = $convert(v)?;
        }
        Some(())
    }};
}

/// Writes an integer column into `dst` (as long as the column), exactly, or `None`.
fn fill_ints(array: &dyn Array, dst: &mut [i64]) -> Option<()> {
    if array.null_count() > 0 || array.len() != dst.len() {
        return None;
    }
    match array.data_type() {
        DataType::Int64 => {
            dst.copy_from_slice(array.as_primitive::<Int64Type>().values());
            Some(())
        }
        DataType::Int32 => fill_primitive!(array, dst, Int32Type, |v: i32| Some(v as i64)),
        DataType::Int16 => fill_primitive!(array, dst, Int16Type, |v: i16| Some(v as i64)),
        DataType::Int8 => fill_primitive!(array, dst, Int8Type, |v: i8| Some(v as i64)),
        DataType::UInt64 => fill_primitive!(array, dst, UInt64Type, |v: u64| i64::try_from(v).ok()),
        DataType::UInt32 => fill_primitive!(array, dst, UInt32Type, |v: u32| Some(v as i64)),
        DataType::UInt16 => fill_primitive!(array, dst, UInt16Type, |v: u16| Some(v as i64)),
        DataType::UInt8 => fill_primitive!(array, dst, UInt8Type, |v: u8| Some(v as i64)),
        _ => None,
    }
}

/// Writes a numeric column into `dst` as `f32` (integers as the text reader parses them).
fn fill_floats(array: &dyn Array, dst: &mut [f32]) -> Option<()> {
    if array.null_count() > 0 || array.len() != dst.len() {
        return None;
    }
    match array.data_type() {
        DataType::Float32 => {
            dst.copy_from_slice(array.as_primitive::<Float32Type>().values());
            Some(())
        }
        DataType::Float64 => fill_primitive!(array, dst, Float64Type, |v: f64| Some(v as f32)),
        _ => {
            let mut ints = vec![0i64; dst.len()];
            fill_ints(array, &mut ints)?;
            for (d, v) in dst.iter_mut().zip(ints) {
                *d = v as f32;
            }
            Some(())
        }
    }
}

/// Writes `array[row]` as the text a CSV field would hold: integers and floats in decimal
/// (floats shortest round-trip), booleans as `1` / `0`, strings as their bytes, dictionary
/// entries resolved, lists as `[a,b,…]` (for [`Features::Vector`](super::Features::Vector)
/// with `','`), null as an empty field.
fn field(array: &dyn Array, row: usize, out: &mut Vec<u8>) -> Result<(), String> {
    if array.is_null(row) {
        return Ok(());
    }
    let mut text = String::new();
    macro_rules! number {
        ($t:ty) => {
            write!(text, "{}", array.as_primitive::<$t>().value(row)).expect("to a string")
        };
    }
    match array.data_type() {
        DataType::Int8 => number!(Int8Type),
        DataType::Int16 => number!(Int16Type),
        DataType::Int32 => number!(Int32Type),
        DataType::Int64 => number!(Int64Type),
        DataType::UInt8 => number!(UInt8Type),
        DataType::UInt16 => number!(UInt16Type),
        DataType::UInt32 => number!(UInt32Type),
        DataType::UInt64 => number!(UInt64Type),
        DataType::Float32 => number!(Float32Type),
        DataType::Float64 => number!(Float64Type),
        DataType::Boolean => text.push(if array.as_boolean().value(row) {
            '1'
        } else {
            '0'
        }),
        DataType::Utf8 => out.extend_from_slice(array.as_string::<i32>().value(row).as_bytes()),
        DataType::LargeUtf8 => {
            out.extend_from_slice(array.as_string::<i64>().value(row).as_bytes())
        }
        DataType::Utf8View => out.extend_from_slice(array.as_string_view().value(row).as_bytes()),
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            return field(dict.values().as_ref(), key, out);
        }
        DataType::List(_) => {
            return list(array.as_list::<i32>().value(row).as_ref(), out);
        }
        DataType::LargeList(_) => {
            return list(array.as_list::<i64>().value(row).as_ref(), out);
        }
        DataType::FixedSizeList(_, _) => {
            return list(array.as_fixed_size_list().value(row).as_ref(), out);
        }
        other => return Err(format!("a column of type {other} is not read")),
    }
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

fn list(values: &dyn Array, out: &mut Vec<u8>) -> Result<(), String> {
    out.push(b'[');
    for i in 0..values.len() {
        if i > 0 {
            out.push(b',');
        }
        if values.is_null(i) {
            return Err("a list holds a null".into());
        }
        field(values, i, out)?;
    }
    out.push(b']');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/parquet")
            .join(name)
    }

    /// The column path is taken (not left to the row reader) for numeric columns across row
    /// groups, and refused for a text column or one with a null.
    #[test]
    fn numeric_columns_fill_across_row_groups() {
        let rows = ParquetRows::read(&fixture("edges.parquet")).unwrap();
        assert_eq!(rows.num_groups(), 4);
        let (ints, floats) = rows.numeric_columns(&[1, 0], &[2]).unwrap();
        assert_eq!(ints[0], [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5, 0]);
        assert_eq!(ints[1], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 5]);
        assert_eq!(floats[0][..3], [0.5, 1.0, 1.5]);
        let nodes = ParquetRows::read(&fixture("nodes.parquet")).unwrap();
        assert!(nodes.numeric_columns(&[1], &[2]).is_some());
        assert!(nodes.numeric_columns(&[0], &[]).is_none()); // text ids
        assert!(nodes.numeric_columns(&[], &[4]).is_none()); // a label with a null
        assert_eq!((nodes.group_of(0), nodes.group_of(3)), (0, 1));
    }
}
