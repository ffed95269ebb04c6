//! Parquet tables (feature `parquet`): row groups decoded in parallel into Arrow record batches
//! (arrow-rs), then read through the same mapping as CSV: numeric columns of a plain edge list
//! column by column, everything else a row at a time as text fields, so ids, features, vectors
//! and labels mean what they mean in a CSV file.

use std::fmt::Write as _;
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rayon::prelude::*;

use crate::DataError;

/// Integer columns, then float columns, whole.
pub(crate) type NumericColumns = (Vec<Vec<i64>>, Vec<Vec<f32>>);

/// A Parquet file decoded: its column names and its record batches in row order, with the first
/// row of each row group.
pub(crate) struct ParquetRows {
    pub(crate) names: Vec<String>,
    batches: Vec<RecordBatch>,
    /// Per row group: its first row (0-based) over the file.
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

impl ParquetRows {
    /// Opens `path` and decodes its row groups in parallel.
    pub(crate) fn read(path: &Path) -> Result<ParquetRows, DataError> {
        let open = || {
            std::fs::File::open(path).map_err(|source| DataError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        let builder = ParquetRecordBatchReaderBuilder::try_new(open()?)
            .map_err(|e| bad(path, format!("not a Parquet file this reader reads: {e}")))?;
        let names = builder
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        let sizes: Vec<usize> = builder
            .metadata()
            .row_groups()
            .iter()
            .map(|g| g.num_rows().max(0) as usize)
            .collect();
        let mut group_starts = Vec::with_capacity(sizes.len());
        let mut start = 0usize;
        for size in &sizes {
            group_starts.push(start);
            start = start.saturating_add(*size);
        }
        let groups: Vec<Vec<RecordBatch>> = (0..sizes.len())
            .into_par_iter()
            .map(|g| {
                let group_error =
                    |e: &dyn std::fmt::Display| bad(path, format!("row group {g}: {e}"));
                let reader = ParquetRecordBatchReaderBuilder::try_new(open()?)
                    .and_then(|b| b.with_row_groups(vec![g]).with_batch_size(1 << 16).build())
                    .map_err(|e| group_error(&e))?;
                reader
                    .map(|batch| batch.map_err(|e| group_error(&e)))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<_, _>>()?;
        Ok(ParquetRows {
            names,
            batches: groups.into_iter().flatten().collect(),
            group_starts,
        })
    }

    /// The row group holding the 0-based `row`.
    pub(crate) fn group_of(&self, row: usize) -> usize {
        self.group_starts
            .partition_point(|&s| s <= row)
            .saturating_sub(1)
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
        for batch in &self.batches {
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
    /// then reports what is wrong where).
    pub(crate) fn numeric_columns(
        &self,
        ints: &[usize],
        floats: &[usize],
    ) -> Option<NumericColumns> {
        let int_columns = ints
            .par_iter()
            .map(|&c| {
                let mut out = Vec::new();
                for batch in &self.batches {
                    append_ints(batch.columns().get(c)?.as_ref(), &mut out)?;
                }
                Some(out)
            })
            .collect::<Option<Vec<_>>>()?;
        let float_columns = floats
            .par_iter()
            .map(|&c| {
                let mut out = Vec::new();
                for batch in &self.batches {
                    append_floats(batch.columns().get(c)?.as_ref(), &mut out)?;
                }
                Some(out)
            })
            .collect::<Option<Vec<_>>>()?;
        Some((int_columns, float_columns))
    }
}

macro_rules! extend_primitive {
    ($array:expr, $out:expr, $t:ty, $convert:expr) => {{
        let values = $array.as_primitive::<$t>().values();
        for &v in values.iter() {
            $out.push($convert(v)?);
        }
        Some(())
    }};
}

fn append_ints(array: &dyn Array, out: &mut Vec<i64>) -> Option<()> {
    if array.null_count() > 0 {
        return None;
    }
    out.reserve(array.len());
    match array.data_type() {
        DataType::Int64 => {
            out.extend_from_slice(array.as_primitive::<Int64Type>().values());
            Some(())
        }
        DataType::Int32 => extend_primitive!(array, out, Int32Type, |v: i32| Some(v as i64)),
        DataType::Int16 => extend_primitive!(array, out, Int16Type, |v: i16| Some(v as i64)),
        DataType::Int8 => extend_primitive!(array, out, Int8Type, |v: i8| Some(v as i64)),
        DataType::UInt64 => {
            extend_primitive!(array, out, UInt64Type, |v: u64| i64::try_from(v).ok())
        }
        DataType::UInt32 => extend_primitive!(array, out, UInt32Type, |v: u32| Some(v as i64)),
        DataType::UInt16 => extend_primitive!(array, out, UInt16Type, |v: u16| Some(v as i64)),
        DataType::UInt8 => extend_primitive!(array, out, UInt8Type, |v: u8| Some(v as i64)),
        _ => None,
    }
}

fn append_floats(array: &dyn Array, out: &mut Vec<f32>) -> Option<()> {
    if array.null_count() > 0 {
        return None;
    }
    out.reserve(array.len());
    match array.data_type() {
        DataType::Float32 => {
            out.extend_from_slice(array.as_primitive::<Float32Type>().values());
            Some(())
        }
        DataType::Float64 => extend_primitive!(array, out, Float64Type, |v: f64| Some(v as f32)),
        _ => {
            // Integers read as floats the way the text reader parses them.
            let mut ints = Vec::new();
            append_ints(array, &mut ints)?;
            out.extend(ints.into_iter().map(|v| v as f32));
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
