//! [`Table`]: where a delimited text table is and how it is written, and the strict record
//! reading shared by the edge and node tables.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use csv::{ByteRecord, ReaderBuilder};

use burn_gnn_graph::{FeatureData, FeatureValues};

use crate::DataError;

/// A column of a table: by its header name, or by its 0-based position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Column {
    /// The column under this header name (the table needs a header).
    Name(String),
    /// The column at this 0-based position.
    Position(usize),
}

impl From<&str> for Column {
    fn from(name: &str) -> Column {
        Column::Name(name.to_string())
    }
}

impl From<String> for Column {
    fn from(name: String) -> Column {
        Column::Name(name)
    }
}

impl From<usize> for Column {
    fn from(position: usize) -> Column {
        Column::Position(position)
    }
}

/// What a table's node ids are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdKind {
    /// Integers that are already the rows `0..num_nodes` (PyG's `edge_index`): no map is built;
    /// a node table must hold each of `0..rows` once.
    Index,
    /// Integers of any value (database keys), mapped to contiguous rows.
    #[default]
    Integer,
    /// Any text (names, UUIDs), mapped to contiguous rows; compared byte for byte.
    Text,
}

/// Which columns hold a table's numeric features (`f32`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Features {
    /// No features.
    #[default]
    None,
    /// These columns, in this order.
    Columns(Vec<Column>),
    /// Every column that no other role (id, endpoint, weight, label) takes, in table order.
    Rest,
    /// One column holding the whole vector, its values split at `separator`; surrounding
    /// brackets (`[...]`) are dropped, so `"[0.5, 1, 2]"` with `','` and `"0.5 1 2"` with `' '`
    /// both read as three values. Every row must hold as many values as the first.
    Vector {
        /// The column.
        column: Column,
        /// What separates the values.
        separator: char,
    },
}

impl Features {
    /// These columns, in this order.
    pub fn columns<C: Into<Column>>(columns: impl IntoIterator<Item = C>) -> Features {
        Features::Columns(columns.into_iter().map(Into::into).collect())
    }

    /// One column holding the vector, values separated by `separator`.
    pub fn vector(column: impl Into<Column>, separator: char) -> Features {
        Features::Vector {
            column: column.into(),
            separator,
        }
    }
}

#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    Bytes {
        name: String,
        bytes: Arc<[u8]>,
    },
    #[cfg(feature = "parquet")]
    Parquet(PathBuf),
}

/// A delimited text table (CSV, TSV, …): where it is and how it is written.
///
/// Defaults: a header line, no comment lines, fields may be quoted (`"a,b"`), every record has
/// as many fields as the first (a record of another length is an error, never padded or cut).
/// A gzip-compressed file (`.csv.gz`) is recognised by its first bytes and decompressed as it
/// is read.
#[derive(Clone, Debug)]
pub struct Table {
    source: Source,
    delimiter: u8,
    header: bool,
    comment: Option<u8>,
}

impl Table {
    /// A comma-separated file.
    pub fn csv(path: impl AsRef<Path>) -> Table {
        Table::file(path, b',')
    }

    /// A tab-separated file.
    pub fn tsv(path: impl AsRef<Path>) -> Table {
        Table::file(path, b'\t')
    }

    fn file(path: impl AsRef<Path>, delimiter: u8) -> Table {
        Table {
            source: Source::File(path.as_ref().to_path_buf()),
            delimiter,
            header: true,
            comment: None,
        }
    }

    /// A Parquet file (feature `parquet`): columns by their names or positions, as in a CSV
    /// file with a header; row groups are decoded in parallel. Integer, float, boolean (`1`/`0`),
    /// string and dictionary-encoded string columns, and lists of numbers (read by
    /// [`Features::Vector`] with `','`); a null is an empty field. In errors, `line` is the
    /// 1-based row and the reason names its row group. The delimiter, header and comment
    /// settings do not apply.
    #[cfg(feature = "parquet")]
    pub fn parquet(path: impl AsRef<Path>) -> Table {
        Table {
            source: Source::Parquet(path.as_ref().to_path_buf()),
            delimiter: b',',
            header: true,
            comment: None,
        }
    }

    /// A comma-separated table already in memory; `name` stands for a file name in errors.
    pub fn from_bytes(name: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Table {
        Table {
            source: Source::Bytes {
                name: name.into(),
                bytes: bytes.into().into(),
            },
            delimiter: b',',
            header: true,
            comment: None,
        }
    }

    /// The field delimiter (`b','` for [`Table::csv`], `b'\t'` for [`Table::tsv`]).
    pub fn delimiter(mut self, delimiter: u8) -> Table {
        self.delimiter = delimiter;
        self
    }

    /// Whether the first line names the columns (default `true`). Without a header, columns
    /// are taken by [`Column::Position`] only.
    pub fn header(mut self, header: bool) -> Table {
        self.header = header;
        self
    }

    /// Lines starting with this byte are skipped (`Some(b'#')`); default none.
    pub fn comment(mut self, comment: Option<u8>) -> Table {
        self.comment = comment;
        self
    }

    /// The file's path, or the name given to bytes in memory: how errors name the table.
    pub fn name(&self) -> String {
        match &self.source {
            Source::File(path) => path.display().to_string(),
            Source::Bytes { name, .. } => name.clone(),
            #[cfg(feature = "parquet")]
            Source::Parquet(path) => path.display().to_string(),
        }
    }

    /// Opens the table and reads its header.
    pub(crate) fn open(&self) -> Result<Records, DataError> {
        let name = self.name();
        #[cfg(feature = "parquet")]
        if let Source::Parquet(path) = &self.source {
            let rows = super::parquet::ParquetRows::read(path)?;
            return Ok(Records {
                name,
                gzip: false,
                last_line: 0,
                headers: Some(rows.names.clone()),
                input: Input::Parquet(rows),
                record: ByteRecord::new(),
                pending: false,
            });
        }
        let mut input: Box<dyn Read> = match &self.source {
            Source::File(path) => {
                let file = std::fs::File::open(path).map_err(|source| DataError::Io {
                    path: path.clone(),
                    source,
                })?;
                Box::new(std::io::BufReader::with_capacity(1 << 20, file))
            }
            Source::Bytes { bytes, .. } => Box::new(std::io::Cursor::new(bytes.clone())),
            #[cfg(feature = "parquet")]
            Source::Parquet(_) => unreachable!("opened above"),
        };
        // A gzip file (`.csv.gz`, as OGB ships its tables) is read through a decoder.
        let mut magic = [0u8; 2];
        let got = read_up_to(&mut input, &mut magic).map_err(|e| io_error(&name, e))?;
        let gzip = got == 2 && magic == GZIP_MAGIC;
        let input: Box<dyn Read> =
            Box::new(std::io::Cursor::new(magic[..got].to_vec()).chain(input));
        let input: Box<dyn Read> = match gzip {
            true => Box::new(flate2::read::MultiGzDecoder::new(input)),
            false => input,
        };
        let reader = ReaderBuilder::new()
            .delimiter(self.delimiter)
            .has_headers(false)
            .comment(self.comment)
            .flexible(false)
            .from_reader(input);
        let mut records = Records {
            name,
            gzip,
            last_line: 0,
            input: Input::Csv(reader),
            headers: None,
            record: ByteRecord::new(),
            pending: false,
        };
        if self.header {
            let mut header = ByteRecord::new();
            let got = records.csv().read_byte_record(&mut header);
            match got {
                Ok(true) => {
                    records.last_line = header.position().map_or(1, csv::Position::line);
                    // Spreadsheets often start a UTF-8 file with a byte-order mark.
                    let names = header
                        .iter()
                        .map(|f| {
                            String::from_utf8_lossy(f)
                                .trim_start_matches('\u{feff}')
                                .trim()
                                .to_string()
                        })
                        .collect();
                    records.headers = Some(names);
                }
                Ok(false) => records.headers = Some(Vec::new()),
                Err(e) => return Err(records.csv_error(e)),
            }
        } else {
            // The width comes from the first record: read it now, hand it out first.
            let mut first = ByteRecord::new();
            let got = records.csv().read_byte_record(&mut first);
            records.record = first;
            records.pending = got.map_err(|e| records.csv_error(e))?;
        }
        Ok(records)
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

fn io_error(name: &str, source: std::io::Error) -> DataError {
    DataError::Io {
        path: PathBuf::from(name),
        source,
    }
}

/// An open table: its header (if any) and its records, one at a time, with their line numbers.
pub(crate) struct Records {
    name: String,
    /// Whether the file is gzip-compressed (for the messages of read errors).
    gzip: bool,
    /// The line of the last record read (the header's is 1): where a read error without a
    /// position of its own (I/O, a broken gzip stream) happened, one line on.
    last_line: u64,
    input: Input,
    headers: Option<Vec<String>>,
    record: ByteRecord,
    /// A headerless table's first record, read to learn the width and not yet handed out.
    pending: bool,
}

/// Where an open table's records come from.
enum Input {
    Csv(csv::Reader<Box<dyn Read>>),
    #[cfg(feature = "parquet")]
    Parquet(super::parquet::ParquetRows),
}

impl Records {
    fn csv(&mut self) -> &mut csv::Reader<Box<dyn Read>> {
        match &mut self.input {
            Input::Csv(reader) => reader,
            #[cfg(feature = "parquet")]
            Input::Parquet(_) => unreachable!("a Parquet table has no text reader"),
        }
    }

    /// The table's name, for errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The number of columns: the header's, else the first record's (0 for an empty table).
    pub(crate) fn width(&self) -> usize {
        match &self.headers {
            Some(h) => h.len(),
            None => self.record.len(),
        }
    }

    /// A column's position, checked against the width.
    pub(crate) fn resolve(&self, column: &Column) -> Result<usize, DataError> {
        let width = self.width();
        match (column, &self.headers) {
            (Column::Name(name), Some(headers)) => headers
                .iter()
                .position(|h| h == name)
                .ok_or_else(|| DataError::Table {
                    file: self.name.clone(),
                    line: 1,
                    column: Some(name.clone()),
                    reason: format!("no such column; the header has: {}", headers.join(", ")),
                }),
            (Column::Name(name), None) => Err(DataError::Table {
                file: self.name.clone(),
                line: 1,
                column: Some(name.clone()),
                reason: "a column by name needs a header line; this table has none \
                         (take it by position, or set `header(true)`)"
                    .into(),
            }),
            // An empty table has no width to check a position against, and no rows to read.
            (Column::Position(p), _) if *p < width || self.is_empty_table() => Ok(*p),
            (Column::Position(p), _) => Err(DataError::Table {
                file: self.name.clone(),
                line: 1,
                column: Some(format!("#{p}")),
                reason: format!("the table has {width} columns (positions count from 0)"),
            }),
        }
    }

    fn is_empty_table(&self) -> bool {
        match &self.headers {
            Some(h) => h.is_empty(),
            None => !self.pending,
        }
    }

    /// The name of the column at `position`, for errors: its header, else `#position`.
    pub(crate) fn column_name(&self, position: usize) -> String {
        match self.headers.as_ref().and_then(|h| h.get(position)) {
            Some(name) => name.clone(),
            None => format!("#{position}"),
        }
    }

    /// An error at `line` in the column at `position`.
    pub(crate) fn error(&self, line: u64, position: usize, reason: impl Into<String>) -> DataError {
        #[allow(unused_mut)]
        let mut reason = reason.into();
        #[cfg(feature = "parquet")]
        if let Input::Parquet(rows) = &self.input {
            let group = rows.group_of(line.saturating_sub(1) as usize);
            reason = format!("{reason} (row group {group})");
        }
        DataError::Table {
            file: self.name.clone(),
            line,
            column: Some(self.column_name(position)),
            reason,
        }
    }

    fn csv_error(&self, e: csv::Error) -> DataError {
        let line = e.position().map_or(self.last_line + 1, csv::Position::line);
        let reason = match e.kind() {
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format!("{len} fields where the table's first line has {expected_len}"),
            csv::ErrorKind::Io(io) if self.gzip => format!("cannot read the gzip stream: {io}"),
            csv::ErrorKind::Io(io) => format!("cannot read: {io}"),
            _ => e.to_string(),
        };
        DataError::Table {
            file: self.name.clone(),
            line,
            column: None,
            reason,
        }
    }

    /// Calls `f` with each record and its 1-based line, in order; stops at the first error.
    pub(crate) fn for_each(
        &mut self,
        mut f: impl FnMut(&Records, &ByteRecord, u64) -> Result<(), DataError>,
    ) -> Result<(), DataError> {
        #[cfg(feature = "parquet")]
        if let Input::Parquet(rows) = &self.input {
            return rows.for_each_row(
                |record, row| f(self, record, row),
                |row, position, reason| self.error(row, position, reason),
            );
        }
        let mut record = std::mem::take(&mut self.record);
        if std::mem::take(&mut self.pending) {
            let line = record.position().map_or(1, csv::Position::line);
            f(self, &record, line)?;
        }
        loop {
            match self.csv().read_byte_record(&mut record) {
                Ok(true) => {
                    let line = record.position().map_or(0, csv::Position::line);
                    self.last_line = line;
                    f(self, &record, line)?;
                }
                Ok(false) => break,
                Err(e) => return Err(self.csv_error(e)),
            }
        }
        Ok(())
    }
}

/// The parsed columns of a plain table: integer columns, then float columns, as asked.
pub(crate) type PlainColumns = (Vec<Vec<i64>>, Vec<Vec<f32>>);

impl Table {
    /// Reads integer and float columns of a *plain* table in parallel parts: no quote and no
    /// comment byte anywhere, `\n` or `\r\n` line ends, no empty line, every line `width`
    /// fields, every asked field a number. `None` for anything else (the strict record reader
    /// then reads the table and reports where it fails): this path only ever succeeds, and
    /// gives what the record reader would.
    pub(crate) fn read_plain(
        &self,
        records: &Records,
        width: usize,
        ints: &[usize],
        floats: &[usize],
    ) -> Option<PlainColumns> {
        // A Parquet table is columnar already: its columns whole, if they convert exactly.
        #[cfg(feature = "parquet")]
        if let Input::Parquet(rows) = &records.input {
            return rows.numeric_columns(ints, floats);
        }
        let _ = records;
        let map;
        let all: &[u8] = match &self.source {
            Source::File(path) => {
                let file = std::fs::File::open(path).ok()?;
                // SAFETY: read-only; a file changed while mapped gives other bytes, which are
                // parsed like any others (every access is bounds-checked).
                map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
                &map
            }
            Source::Bytes { bytes, .. } => bytes,
            #[cfg(feature = "parquet")]
            Source::Parquet(_) => return None,
        };
        if all.starts_with(&GZIP_MAGIC)
            || all.contains(&b'"')
            || self.comment.is_some_and(|c| all.contains(&c))
        {
            return None;
        }
        let body = if self.header {
            let end = all.iter().position(|&b| b == b'\n')?;
            &all[end + 1..]
        } else {
            all
        };
        // Parts of at least 1 MiB ending at line ends, a few per thread: the bits do not
        // depend on the split, the parts are joined in order.
        let target = (body.len() / (4 * rayon::current_num_threads())).max(1 << 20);
        let mut parts = Vec::new();
        let mut start = 0;
        while start < body.len() {
            let mut end = (start + target).min(body.len());
            if end < body.len() {
                end += body[end..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(body.len() - end, |p| p + 1);
            }
            parts.push(&body[start..end]);
            start = end;
        }
        let mut role = vec![Role::Skip; width];
        for (k, &p) in ints.iter().enumerate() {
            *role.get_mut(p)? = Role::Int(k);
        }
        for (k, &p) in floats.iter().enumerate() {
            *role.get_mut(p)? = Role::Float(k);
        }
        use rayon::prelude::*;
        // Each part's records are counted first, so that every part parses straight into its
        // own rows of the output (no per-part vectors, no joins).
        let counts: Vec<usize> = parts
            .par_iter()
            .map(|part| {
                let ends = part.iter().filter(|&&b| b == b'\n').count();
                ends + usize::from(part.last().is_some_and(|&b| b != b'\n'))
            })
            .collect();
        let total: usize = counts.iter().sum();
        // Each column zeroed on its own (`vec![column; n]` would copy the first one's pages).
        let mut out: PlainColumns = (
            ints.iter().map(|_| vec![0; total]).collect(),
            floats.iter().map(|_| vec![0.0; total]).collect(),
        );
        let mut int_rest: Vec<&mut [i64]> = out.0.iter_mut().map(|c| c.as_mut_slice()).collect();
        let mut float_rest: Vec<&mut [f32]> = out.1.iter_mut().map(|c| c.as_mut_slice()).collect();
        let jobs: Vec<_> = parts
            .iter()
            .zip(&counts)
            .map(|(part, &count)| {
                let ints = take_rows(&mut int_rest, count);
                (*part, ints, take_rows(&mut float_rest, count))
            })
            .collect();
        let ok = jobs.into_par_iter().all(|(part, mut ints, mut floats)| {
            parse_plain(part, self.delimiter, &role, &mut ints, &mut floats)
        });
        ok.then_some(out)
    }
}

/// The next `count` rows of each column: split off the front of what is left of it.
fn take_rows<'a, T>(rest: &mut [&'a mut [T]], count: usize) -> Vec<&'a mut [T]> {
    rest.iter_mut()
        .map(|column| {
            let (head, tail) = std::mem::take(column).split_at_mut(count);
            *column = tail;
            head
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Role {
    Skip,
    Int(usize),
    Float(usize),
}

/// Parses one part's records into `ints` and `floats` (one value per record each); `false` for
/// anything the strict reader must see, including a record count other than the slots given.
fn parse_plain(
    part: &[u8],
    delimiter: u8,
    role: &[Role],
    ints: &mut [&mut [i64]],
    floats: &mut [&mut [f32]],
) -> bool {
    // One pass over the bytes: each field is scanned to its end once, integers accumulated on
    // the way; a field that is not plain digits goes through the strict field parsers.
    let slots = ints
        .first()
        .map(|c| c.len())
        .or(floats.first().map(|c| c.len()));
    let n = part.len();
    let (mut i, mut row) = (0, 0);
    while i < n {
        if slots.is_some_and(|s| row >= s) {
            return false;
        }
        for (column, r) in role.iter().enumerate() {
            let start = i;
            let negative = matches!(r, Role::Int(_)) && part.get(i) == Some(&b'-');
            i += usize::from(negative);
            let digits = i;
            let (mut value, mut plain) = (0i64, true);
            while i < n && part[i] != delimiter && part[i] != b'\n' {
                let d = part[i].wrapping_sub(b'0');
                plain &= d <= 9;
                value = value.wrapping_mul(10).wrapping_add(i64::from(d));
                i += 1;
            }
            let mut field = &part[start..i];
            let count = i - digits;
            if column + 1 == role.len() {
                // The line must end here (a delimiter would be a field too many).
                if i < n && part[i] != b'\n' {
                    return false;
                }
                if let Some(stripped) = field.strip_suffix(b"\r") {
                    field = stripped;
                    plain = false;
                }
            } else if i >= n || part[i] != delimiter {
                return false;
            }
            i += 1;
            match *r {
                Role::Skip => {}
                // Up to 18 digits cannot overflow.
                Role::Int(k) if plain && (1..=18).contains(&count) => {
                    ints[k][row] = if negative { -value } else { value };
                }
                Role::Int(k) => match parse_i64(field) {
                    Some(v) => ints[k][row] = v,
                    None => return false,
                },
                Role::Float(k) => match parse_f32(field) {
                    Some(v) => floats[k][row] = v,
                    None => return false,
                },
            }
        }
        row += 1;
    }
    slots.is_none_or(|s| row == s)
}

/// An integer field; surrounding ASCII spaces are allowed.
pub(crate) fn parse_i64(field: &[u8]) -> Option<i64> {
    std::str::from_utf8(field.trim_ascii()).ok()?.parse().ok()
}

/// A float field (`1`, `-2.5e-3`, `nan`, `inf`); surrounding ASCII spaces are allowed, an empty
/// field is not a number.
pub(crate) fn parse_f32(field: &[u8]) -> Option<f32> {
    std::str::from_utf8(field.trim_ascii()).ok()?.parse().ok()
}

/// What a field holds, shortened for an error message.
pub(crate) fn shown(field: &[u8]) -> String {
    let text = String::from_utf8_lossy(field);
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("`{}…`", &text[..cut]),
        None => format!("`{text}`"),
    }
}

impl Table {
    /// Reads every field as a number, as pandas' `read_csv(...).values` types a numeric table:
    /// integers (`[rows, columns]` `i64`) when every field is one, else `f32` with an empty
    /// field or `nan` read as NaN. OGB's raw tables (`edge.csv.gz`, `node-feat.csv.gz`, …) are
    /// read this way. An empty table is `[0, 0]` integers.
    ///
    /// # Errors
    /// [`DataError::Table`] for a field that is not a number (file, line and column), a
    /// record of another width, an unreadable file.
    pub fn read_matrix(&self) -> Result<FeatureData, DataError> {
        let mut records = self.open()?;
        let width = records.width();
        let mut ints: Option<Vec<i64>> = Some(Vec::new());
        let mut floats: Vec<f32> = Vec::new();
        let mut rows = 0usize;
        records.for_each(|records, record, line| {
            for (position, field) in record.iter().enumerate() {
                if let Some(values) = &mut ints {
                    match parse_i64(field) {
                        Some(v) => {
                            values.push(v);
                            continue;
                        }
                        // The first non-integer turns the whole table to floats.
                        None => floats = ints.take().unwrap().iter().map(|&v| v as f32).collect(),
                    }
                }
                let value = match field.trim_ascii() {
                    b"" => Some(f32::NAN),
                    _ => parse_f32(field),
                };
                match value {
                    Some(v) => floats.push(v),
                    None => {
                        return Err(records.error(
                            line,
                            position,
                            format!("{} is not a number", shown(field)),
                        ));
                    }
                }
            }
            rows += 1;
            Ok(())
        })?;
        let values = match ints {
            Some(v) => FeatureValues::I64(v),
            None => FeatureValues::F32(floats),
        };
        Ok(FeatureData {
            shape: vec![rows, if rows == 0 { 0 } else { width }],
            values,
        })
    }
}
