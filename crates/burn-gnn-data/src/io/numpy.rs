//! NumPy arrays (`.npy`, memory-mapped; `.npz` archives) and graphs stored in them under PyG's
//! names.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use burn_gnn_graph::{FeatureData, FeatureSetData, FeatureValues};
use memmap2::Mmap;
use npyz::{DType, Endianness, NpyHeader, Order, TypeChar};

use super::graph::{EDGE_WEIGHT, LABELS, TableGraph, one_graph};
use super::node_index::NodeIndex;
use crate::DataError;

/// The element types the NumPy reader holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NpyDType {
    /// `bool` (`|b1`).
    Bool,
    /// `uint8` (`|u1`), as masks are often saved.
    U8,
    /// `int32` (`<i4`, `>i4`).
    I32,
    /// `int64` (`<i8`, `>i8`).
    I64,
    /// `float32` (`<f4`, `>f4`).
    F32,
    /// `float64` (`<f8`, `>f8`).
    F64,
}

impl NpyDType {
    fn size(self) -> usize {
        match self {
            NpyDType::Bool | NpyDType::U8 => 1,
            NpyDType::I32 | NpyDType::F32 => 4,
            NpyDType::I64 | NpyDType::F64 => 8,
        }
    }
}

#[derive(Clone, Debug)]
enum Bytes {
    Mapped(Arc<Mmap>),
    Owned(Arc<[u8]>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Owned(bytes) => bytes,
        }
    }
}

/// A NumPy array: its shape, element type and values, from a `.npy` file (memory-mapped, not
/// read) or an `.npz` member.
///
/// Values come out in C (row-major) order whatever the file's order, converted from the file's
/// byte order. A little-endian C-order array of the asked type is handed out in place
/// ([`Cow::Borrowed`]) on a little-endian machine; anything else is converted into a new vector.
#[derive(Clone, Debug)]
pub struct NpyArray {
    name: String,
    shape: Vec<usize>,
    dtype: NpyDType,
    swap: bool,
    fortran: bool,
    bytes: Bytes,
    offset: usize,
}

impl NpyArray {
    /// Maps a `.npy` file and reads its header; the data stays in the file until asked for.
    ///
    /// # Errors
    /// [`DataError::Io`] when the file cannot be opened or mapped; [`DataError::Array`] for a
    /// header that does not parse, a type the reader does not hold, or data of the wrong length.
    pub fn open(path: impl AsRef<Path>) -> Result<NpyArray, DataError> {
        let path = path.as_ref();
        let io = |source| DataError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only; a file changed by another process while mapped can give
        // other values (as a read would) but not unsoundness in this reader, which copies every
        // value it hands out by value or as plain integers and floats.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        NpyArray::parse(path.display().to_string(), Bytes::Mapped(Arc::new(map)))
    }

    /// Reads a `.npy` file's bytes already in memory; `name` stands for the file in errors.
    ///
    /// # Errors
    /// As [`NpyArray::open`].
    pub fn from_bytes(
        name: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Result<NpyArray, DataError> {
        NpyArray::parse(name.into(), Bytes::Owned(bytes.into().into()))
    }

    fn parse(name: String, bytes: Bytes) -> Result<NpyArray, DataError> {
        let all = bytes.as_slice();
        if shape_overflows(all) {
            return Err(DataError::Array {
                file: name,
                reason: "the header's shape overflows".into(),
            });
        }
        let mut rest = all;
        let header = NpyHeader::from_reader(&mut rest).map_err(|e| DataError::Array {
            file: name.clone(),
            reason: format!("not a readable .npy header: {e}"),
        })?;
        let offset = all.len() - rest.len();
        let bad = |reason: String| DataError::Array {
            file: name.clone(),
            reason,
        };
        let DType::Plain(ty) = header.dtype() else {
            return Err(bad(format!(
                "a structured dtype ({}); the reader holds bool, uint8, int32, int64, float32 and float64 arrays",
                header.dtype().descr()
            )));
        };
        let dtype = match (ty.type_char(), ty.size_field()) {
            (TypeChar::Bool, 1) => NpyDType::Bool,
            (TypeChar::Uint, 1) => NpyDType::U8,
            (TypeChar::Int, 4) => NpyDType::I32,
            (TypeChar::Int, 8) => NpyDType::I64,
            (TypeChar::Float, 4) => NpyDType::F32,
            (TypeChar::Float, 8) => NpyDType::F64,
            _ => {
                return Err(bad(format!(
                    "dtype `{ty}` is not held; the reader holds bool, uint8, int32, int64, float32 and float64 arrays"
                )));
            }
        };
        let shape = header
            .shape()
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| bad("a dimension past this machine's address space".into()))?;
        let len = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .ok_or_else(|| bad(format!("shape {shape:?} overflows")))?;
        let data = all.len() - offset;
        if data != len {
            return Err(bad(format!(
                "{data} bytes of data where shape {shape:?} of {dtype:?} needs {len} (a truncated or corrupted file)"
            )));
        }
        let native = Endianness::of_machine();
        let swap = matches!(
            (ty.endianness(), native),
            (Endianness::Little, Endianness::Big) | (Endianness::Big, Endianness::Little)
        );
        Ok(NpyArray {
            name,
            fortran: header.order() == Order::Fortran && shape.len() > 1,
            shape,
            dtype,
            swap,
            bytes,
            offset,
        })
    }

    /// The file (or `archive:member`) the array came from.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shape (empty for a 0-d array).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The element type.
    pub fn dtype(&self) -> NpyDType {
        self.dtype
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array holds no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn data(&self) -> &[u8] {
        &self.bytes.as_slice()[self.offset..]
    }

    fn wrong_type(&self, want: &str) -> DataError {
        DataError::Array {
            file: self.name.clone(),
            reason: format!("{:?} values where {want} are needed", self.dtype),
        }
    }

    /// The values as `i64`, from integer arrays (`int32`, `int64`, `uint8`) and `bool` (0, 1).
    ///
    /// # Errors
    /// [`DataError::Array`] for a float array.
    pub fn to_i64(&self) -> Result<Cow<'_, [i64]>, DataError> {
        match self.dtype {
            NpyDType::I64 => Ok(self.values(i64::from_le_bytes, i64::from_be_bytes)),
            NpyDType::I32 => Ok(self.convert(i32::from_le_bytes, i32::from_be_bytes, i64::from)),
            NpyDType::U8 | NpyDType::Bool => {
                Ok(self.convert(u8::from_le_bytes, u8::from_be_bytes, i64::from))
            }
            NpyDType::F32 | NpyDType::F64 => Err(self.wrong_type("integers")),
        }
    }

    /// The values as `f32`: `float64` rounded to nearest, integers converted (exactly up to
    /// 2^24 in magnitude), as `torch.Tensor.float()` does.
    ///
    /// # Errors
    /// [`DataError::Array`] for a `bool` array.
    pub fn to_f32(&self) -> Result<Cow<'_, [f32]>, DataError> {
        match self.dtype {
            NpyDType::F32 => Ok(self.values(f32::from_le_bytes, f32::from_be_bytes)),
            NpyDType::F64 => Ok(self.convert(f64::from_le_bytes, f64::from_be_bytes, |v| v as f32)),
            NpyDType::I32 => Ok(self.convert(i32::from_le_bytes, i32::from_be_bytes, |v| v as f32)),
            NpyDType::I64 => Ok(self.convert(i64::from_le_bytes, i64::from_be_bytes, |v| v as f32)),
            NpyDType::U8 => Ok(self.convert(u8::from_le_bytes, u8::from_be_bytes, f32::from)),
            NpyDType::Bool => Err(self.wrong_type("numbers")),
        }
    }

    /// The values as `bool`, from `bool` arrays and integer arrays of 0 and 1 only.
    ///
    /// # Errors
    /// [`DataError::Array`] for a float array, or an integer other than 0 and 1.
    pub fn to_bool(&self) -> Result<Vec<bool>, DataError> {
        if matches!(self.dtype, NpyDType::F32 | NpyDType::F64) {
            return Err(self.wrong_type("booleans"));
        }
        let values = self.to_i64()?;
        values
            .iter()
            .map(|&v| match v {
                0 => Ok(false),
                1 => Ok(true),
                other => Err(DataError::Array {
                    file: self.name.clone(),
                    reason: format!("{other} in a mask (0 or 1 only)"),
                }),
            })
            .collect()
    }

    /// Values of the array's own type: in place when they can be, else decoded.
    fn values<T, const N: usize>(&self, le: fn([u8; N]) -> T, be: fn([u8; N]) -> T) -> Cow<'_, [T]>
    where
        T: bytemuck::Pod,
    {
        if !self.swap
            && !self.fortran
            && let Ok(values) = bytemuck::try_cast_slice(self.data())
        {
            return Cow::Borrowed(values);
        }
        self.convert(le, be, |v| v)
    }

    /// Decoded and converted values, in C order.
    fn convert<S, T, const N: usize>(
        &self,
        le: fn([u8; N]) -> S,
        be: fn([u8; N]) -> S,
        to: impl Fn(S) -> T,
    ) -> Cow<'_, [T]>
    where
        T: Clone,
    {
        // The file's byte order decides; `swap` says whether it differs from this machine's.
        let little = cfg!(target_endian = "little") != self.swap;
        let decode = if little { le } else { be };
        let values = self
            .data()
            .chunks_exact(N)
            .map(|c| to(decode(c.try_into().expect("chunks of N"))))
            .collect();
        Cow::Owned(self.ordered(values))
    }

    /// Values in file order put in C order.
    fn ordered<T: Clone>(&self, values: Vec<T>) -> Vec<T> {
        if self.fortran {
            fortran_to_c(&values, &self.shape)
        } else {
            values
        }
    }
}

/// Whether the shape in a `.npy` header has a product (or a stride) past `u64`, which npyz 0.9
/// computes unchecked (a panic in debug builds, a wrapped length in release builds) before any
/// check of its own. Anything this scan does not recognise is left to npyz's parser.
fn shape_overflows(bytes: &[u8]) -> bool {
    let Some(text) = bytes.get(8..bytes.len().min(8 + 4 + (1 << 16))) else {
        return false;
    };
    let text = String::from_utf8_lossy(text);
    let Some(after) = text.find("'shape'").map(|at| &text[at + 7..]) else {
        return false;
    };
    let Some(tuple) = after.find('(').and_then(|open| {
        let close = after[open..].find(')')? + open;
        Some(&after[open + 1..close])
    }) else {
        return false;
    };
    let mut product = 1u64;
    for dim in tuple.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match dim.trim_end_matches('L').parse::<u64>() {
            // A zero dimension empties the array but not the strides of the others.
            Ok(d) => match product.checked_mul(d.max(1)) {
                Some(p) => product = p,
                None => return true,
            },
            // Past u64 (or not a number): npyz rejects what it cannot parse itself.
            Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) => return true,
            Err(_) => return false,
        }
    }
    false
}

/// The C-order (last axis fastest) copy of Fortran-order (first axis fastest) values.
fn fortran_to_c<T: Clone>(values: &[T], shape: &[usize]) -> Vec<T> {
    let mut stride = vec![1usize; shape.len()];
    for d in 1..shape.len() {
        stride[d] = stride[d - 1] * shape[d - 1];
    }
    let mut index = vec![0usize; shape.len()];
    let mut at = 0usize;
    let mut out = Vec::with_capacity(values.len());
    for _ in 0..values.len() {
        out.push(values[at].clone());
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            at += stride[d];
            if index[d] < shape[d] {
                break;
            }
            at -= stride[d] * shape[d];
            index[d] = 0;
        }
    }
    out
}

/// An `.npz` archive (`numpy.savez`, `savez_compressed`): named arrays, read one at a time.
pub struct NpzArchive {
    path: PathBuf,
    archive: zip::ZipArchive<std::io::BufReader<std::fs::File>>,
}

impl NpzArchive {
    /// Opens an archive and reads its directory.
    ///
    /// # Errors
    /// [`DataError::Io`] when the file cannot be read; [`DataError::Array`] when it is not a
    /// zip archive.
    pub fn open(path: impl AsRef<Path>) -> Result<NpzArchive, DataError> {
        let path = path.as_ref().to_path_buf();
        let file = std::fs::File::open(&path).map_err(|source| DataError::Io {
            path: path.clone(),
            source,
        })?;
        let archive =
            zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|e| DataError::Array {
                file: path.display().to_string(),
                reason: format!("not an .npz (zip) archive: {e}"),
            })?;
        Ok(NpzArchive { path, archive })
    }

    /// The arrays' names (`x` for the member `x.npy`), sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .archive
            .file_names()
            .filter_map(|f| Some(f.ok()?.strip_suffix(".npy")?.to_string()))
            .collect();
        names.sort();
        names
    }

    /// The array `name`, or `None` when the archive has none of that name.
    ///
    /// # Errors
    /// [`DataError::Array`] for a member that does not inflate or parse.
    pub fn array(&mut self, name: &str) -> Result<Option<NpyArray>, DataError> {
        let what = format!("{}:{name}", self.path.display());
        let bad = |reason: String| DataError::Array {
            file: what.clone(),
            reason,
        };
        let mut member = match self.archive.by_name(&format!("{name}.npy")) {
            Ok(member) => member,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(bad(format!("cannot read the member: {e}"))),
        };
        // The declared size only sizes the first allocation, bounded, as it may lie.
        let mut bytes = Vec::with_capacity(member.size().min(1 << 30) as usize);
        member
            .read_to_end(&mut bytes)
            .map_err(|e| bad(format!("cannot inflate the member: {e}")))?;
        NpyArray::from_bytes(what.clone(), bytes).map(Some)
    }
}

/// A graph saved as NumPy arrays under PyG's names, in an `.npz` archive or a folder of `.npy`
/// files:
///
/// | array | shape | becomes |
/// |---|---|---|
/// | `edge_index` (required) | `[2, E]`, integers | senders (row 0) and receivers (row 1) |
/// | `x` | `[N, F]` or `[N]` | the main node feature, `f32` |
/// | `y` | `[N]`, integers | the labels, [`LABELS`] (`i64`) |
/// | `y` | other shapes or floats | the node feature [`LABELS`] as `f32` (regression, multi-task) |
/// | `edge_attr` | `[E, F]` or `[E]` | the main edge feature, `f32` |
/// | `edge_weight` | `[E]` | the edge feature [`EDGE_WEIGHT`], `f32` |
/// | `*_mask` | `[N]`, bool or 0/1 | [`TableGraph::masks`] |
/// | `num_nodes` | a scalar | the number of nodes when no `x` or `y` gives it |
///
/// Other arrays are not read. Without `x`, `y` and `num_nodes`, the nodes are `0..=max id`.
/// Ids are rows ([`NodeIndex::rows`]); every id must be one.
#[derive(Clone, Debug)]
pub struct NumpyGraph {
    source: NumpySource,
}

#[derive(Clone, Debug)]
enum NumpySource {
    Npz(PathBuf),
    Dir(PathBuf),
}

impl NumpyGraph {
    /// The arrays of an `.npz` archive.
    pub fn npz(path: impl AsRef<Path>) -> NumpyGraph {
        NumpyGraph {
            source: NumpySource::Npz(path.as_ref().to_path_buf()),
        }
    }

    /// The `<name>.npy` files of a folder.
    pub fn dir(path: impl AsRef<Path>) -> NumpyGraph {
        NumpyGraph {
            source: NumpySource::Dir(path.as_ref().to_path_buf()),
        }
    }

    /// Reads the arrays into a graph.
    ///
    /// # Errors
    /// [`DataError::Array`] naming the array for a missing `edge_index`, a shape that does not
    /// fit, a type that cannot be converted, or an id outside the nodes; the errors of
    /// [`NpyArray::open`] and [`NpzArchive::open`].
    pub fn read(&self) -> Result<TableGraph, DataError> {
        let mut arrays: BTreeMap<String, NpyArray> = BTreeMap::new();
        match &self.source {
            NumpySource::Npz(path) => {
                let mut archive = NpzArchive::open(path)?;
                for name in archive.names() {
                    if is_read(&name) {
                        let array = archive.array(&name)?.expect("a listed member");
                        arrays.insert(name, array);
                    }
                }
            }
            NumpySource::Dir(dir) => {
                let entries = std::fs::read_dir(dir).map_err(|source| DataError::Io {
                    path: dir.clone(),
                    source,
                })?;
                for entry in entries {
                    let path = entry
                        .map_err(|source| DataError::Io {
                            path: dir.clone(),
                            source,
                        })?
                        .path();
                    let name = path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_suffix(".npy"));
                    if let Some(name) = name.filter(|n| is_read(n)) {
                        arrays.insert(name.to_string(), NpyArray::open(&path)?);
                    }
                }
            }
        }
        graph_from_arrays(&self.source_name(), &arrays)
    }

    fn source_name(&self) -> String {
        match &self.source {
            NumpySource::Npz(p) | NumpySource::Dir(p) => p.display().to_string(),
        }
    }
}

fn is_read(name: &str) -> bool {
    matches!(
        name,
        "edge_index" | "x" | "y" | "edge_attr" | "edge_weight" | "num_nodes"
    ) || name.ends_with("_mask")
}

fn graph_from_arrays(
    source: &str,
    arrays: &BTreeMap<String, NpyArray>,
) -> Result<TableGraph, DataError> {
    let bad = |array: &NpyArray, reason: String| DataError::Array {
        file: array.name().to_string(),
        reason,
    };
    let edge_index = arrays.get("edge_index").ok_or_else(|| DataError::Array {
        file: source.to_string(),
        reason: format!(
            "no `edge_index` array (found: {})",
            arrays.keys().cloned().collect::<Vec<_>>().join(", ")
        ),
    })?;
    if edge_index.shape().len() != 2 || edge_index.shape()[0] != 2 {
        return Err(bad(
            edge_index,
            format!("edge_index has shape {:?}, not [2, E]", edge_index.shape()),
        ));
    }
    let num_edges = edge_index.shape()[1];
    let ids = edge_index.to_i64()?;
    let (senders, receivers) = (ids[..num_edges].to_vec(), ids[num_edges..].to_vec());
    // The number of nodes: x's rows, else y's, else num_nodes, else the largest id + 1.
    let rows = |a: &NpyArray| a.shape().first().copied();
    let num_nodes = match (arrays.get("x"), arrays.get("y"), arrays.get("num_nodes")) {
        (Some(x), _, _) => rows(x).ok_or_else(|| bad(x, "x is a scalar".into()))?,
        (None, Some(y), _) => rows(y).ok_or_else(|| bad(y, "y is a scalar".into()))?,
        (None, None, Some(n)) => {
            let v = n.to_i64()?;
            match (n.shape(), v.first()) {
                ([], Some(&count)) if count >= 0 => count as usize,
                _ => {
                    return Err(bad(
                        n,
                        format!(
                            "num_nodes is not a non-negative scalar (shape {:?})",
                            n.shape()
                        ),
                    ));
                }
            }
        }
        // (A negative id counts as none here; the check below names it.)
        (None, None, None) => senders
            .iter()
            .chain(&receivers)
            .copied()
            .max()
            .map_or(0, |max| (max.max(-1) + 1) as usize),
    };
    for (e, &id) in senders.iter().chain(&receivers).enumerate() {
        if id < 0 || id as u64 >= num_nodes as u64 {
            let (row, col) = (e / num_edges.max(1), e % num_edges.max(1));
            return Err(bad(
                edge_index,
                format!("edge_index[{row}, {col}] = {id} is not a node of 0..{num_nodes}"),
            ));
        }
    }
    let float_feature = |a: &NpyArray, rows: usize, what: &str| -> Result<FeatureData, DataError> {
        let shape = match a.shape() {
            [n] if *n == rows => vec![rows],
            [n, rest @ ..] if *n == rows => {
                std::iter::once(rows).chain(rest.iter().copied()).collect()
            }
            other => {
                return Err(bad(
                    a,
                    format!("{what} has shape {other:?}, not [{rows}, ...]"),
                ));
            }
        };
        Ok(FeatureData {
            shape,
            values: FeatureValues::F32(a.to_f32()?.into_owned()),
        })
    };
    let mut nodes = FeatureSetData::default();
    if let Some(x) = arrays.get("x") {
        let mut f = float_feature(x, num_nodes, "x")?;
        if f.shape.len() == 1 {
            f.shape.push(1);
        }
        nodes.main = Some(f);
    }
    if let Some(y) = arrays.get("y") {
        let integer = matches!(y.dtype(), NpyDType::I32 | NpyDType::I64 | NpyDType::U8);
        let y_feature = if integer && y.shape() == [num_nodes] {
            FeatureData {
                shape: vec![num_nodes],
                values: FeatureValues::I64(y.to_i64()?.into_owned()),
            }
        } else {
            float_feature(y, num_nodes, "y")?
        };
        nodes.named.insert(LABELS.into(), y_feature);
    }
    let mut edges = FeatureSetData::default();
    if let Some(a) = arrays.get("edge_attr") {
        edges.main = Some(float_feature(a, num_edges, "edge_attr")?);
    }
    if let Some(w) = arrays.get("edge_weight") {
        if w.shape() != [num_edges] {
            return Err(bad(
                w,
                format!("edge_weight has shape {:?}, not [{num_edges}]", w.shape()),
            ));
        }
        edges.named.insert(
            EDGE_WEIGHT.into(),
            float_feature(w, num_edges, "edge_weight")?,
        );
    }
    let mut masks = BTreeMap::new();
    for (name, a) in arrays.iter().filter(|(n, _)| n.ends_with("_mask")) {
        if a.shape() != [num_nodes] {
            return Err(bad(
                a,
                format!("{name} has shape {:?}, not [{num_nodes}]", a.shape()),
            ));
        }
        masks.insert(name.clone(), a.to_bool()?);
    }
    Ok(TableGraph {
        data: one_graph(nodes, edges, senders, receivers, num_nodes),
        index: NodeIndex::rows(num_nodes),
        classes: None,
        masks,
    })
}
