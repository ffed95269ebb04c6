//! A strict reader for the Python pickles the Planetoid files use (protocol 2: numpy arrays,
//! scipy CSR matrices, a `defaultdict` of lists). It runs the pickle opcodes into an arena of
//! values — never calling anything — and refuses every opcode and class it does not know.
//! Sizes are bounded by the input, so malformed bytes give an error, never a panic or a huge
//! allocation.

use crate::DataError;

/// Index of a value in the arena.
type Id = usize;

/// A value built by the pickle program.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    None,
    Bool(bool),
    Int(i64),
    Bytes(Vec<u8>),
    Tuple(Vec<Id>),
    List(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Global(String, String),
    /// `callable(*args)` (REDUCE or NEWOBJ), with the state given by BUILD and the items given
    /// by SETITEMS (a `defaultdict`).
    Object {
        class: (String, String),
        args: Id,
        state: Option<Id>,
        items: Vec<(Id, Id)>,
    },
}

/// The values a pickle built, and the one it returned.
pub(crate) struct Pickle {
    pub arena: Vec<Value>,
    pub root: Id,
}

const MARK_SENTINEL: usize = usize::MAX;

/// The only classes a Planetoid pickle may name.
const ALLOWED: [(&str, &str); 7] = [
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("scipy.sparse.csr", "csr_matrix"),
    ("collections", "defaultdict"),
    ("__builtin__", "list"),
    ("builtins", "list"),
];

fn err(at: usize, msg: impl Into<String>) -> DataError {
    DataError::Pickle(format!("byte {at}: {}", msg.into()))
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DataError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or_else(|| {
            err(
                self.pos,
                format!("needs {n} more bytes, the file ends first"),
            )
        })?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    fn u8(&mut self) -> Result<u8, DataError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, DataError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn i32(&mut self) -> Result<i32, DataError> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn line(&mut self) -> Result<String, DataError> {
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| err(self.pos, "unterminated text line"))?;
        let s = std::str::from_utf8(&rest[..n])
            .map_err(|_| err(self.pos, "a GLOBAL name is not UTF-8"))?
            .to_string();
        self.pos += n + 1;
        Ok(s)
    }
}

/// Runs a pickle program.
pub(crate) fn parse(data: &[u8]) -> Result<Pickle, DataError> {
    let mut r = Reader { data, pos: 0 };
    let mut arena: Vec<Value> = Vec::new();
    let mut stack: Vec<Id> = Vec::new();
    let mut memo: Vec<Option<Id>> = Vec::new();
    let push = |arena: &mut Vec<Value>, stack: &mut Vec<Id>, v: Value| {
        arena.push(v);
        stack.push(arena.len() - 1);
    };
    loop {
        let at = r.pos;
        let op = r.u8()?;
        let pop = |stack: &mut Vec<Id>| -> Result<Id, DataError> {
            match stack.pop() {
                Some(MARK_SENTINEL) | None => Err(err(at, "stack underflow")),
                Some(id) => Ok(id),
            }
        };
        let pop_mark = |stack: &mut Vec<Id>| -> Result<Vec<Id>, DataError> {
            let m = stack
                .iter()
                .rposition(|&x| x == MARK_SENTINEL)
                .ok_or_else(|| err(at, "no MARK on the stack"))?;
            let items = stack.split_off(m + 1);
            stack.pop();
            Ok(items)
        };
        match op {
            0x80 => {
                let proto = r.u8()?;
                if proto > 2 {
                    return Err(err(
                        at,
                        format!("pickle protocol {proto}; these files use protocol 2"),
                    ));
                }
            }
            b'.' => {
                let root = pop(&mut stack)?;
                return Ok(Pickle { arena, root });
            }
            b'(' => stack.push(MARK_SENTINEL),
            b'N' => push(&mut arena, &mut stack, Value::None),
            0x88 => push(&mut arena, &mut stack, Value::Bool(true)),
            0x89 => push(&mut arena, &mut stack, Value::Bool(false)),
            b'K' => {
                let v = r.u8()? as i64;
                push(&mut arena, &mut stack, Value::Int(v))
            }
            b'M' => {
                let v = r.u16()? as i64;
                push(&mut arena, &mut stack, Value::Int(v))
            }
            b'J' => {
                let v = r.i32()? as i64;
                push(&mut arena, &mut stack, Value::Int(v))
            }
            b'U' => {
                let n = r.u8()? as usize;
                let b = r.take(n)?.to_vec();
                push(&mut arena, &mut stack, Value::Bytes(b))
            }
            b'T' => {
                let n = r.i32()?;
                let n = usize::try_from(n).map_err(|_| err(at, "negative string length"))?;
                let b = r.take(n)?.to_vec();
                push(&mut arena, &mut stack, Value::Bytes(b))
            }
            b')' => push(&mut arena, &mut stack, Value::Tuple(vec![])),
            b']' => push(&mut arena, &mut stack, Value::List(vec![])),
            b'}' => push(&mut arena, &mut stack, Value::Dict(vec![])),
            0x85..=0x87 => {
                let k = (op - 0x84) as usize;
                if stack.len() < k || stack[stack.len() - k..].contains(&MARK_SENTINEL) {
                    return Err(err(at, "stack underflow"));
                }
                let items = stack.split_off(stack.len() - k);
                push(&mut arena, &mut stack, Value::Tuple(items))
            }
            b't' => {
                let items = pop_mark(&mut stack)?;
                push(&mut arena, &mut stack, Value::Tuple(items))
            }
            b'c' => {
                let module = r.line()?;
                let name = r.line()?;
                if !ALLOWED.contains(&(module.as_str(), name.as_str())) {
                    return Err(err(
                        at,
                        format!("refusing class {module}.{name} (not a Planetoid file)"),
                    ));
                }
                push(&mut arena, &mut stack, Value::Global(module, name))
            }
            b'q' | b'r' => {
                let i = if op == b'q' {
                    r.u8()? as usize
                } else {
                    r.i32()? as u32 as usize
                };
                let top = *stack
                    .last()
                    .filter(|&&x| x != MARK_SENTINEL)
                    .ok_or_else(|| err(at, "PUT on an empty stack"))?;
                if i > data.len() {
                    return Err(err(at, format!("memo index {i} is larger than the file")));
                }
                if memo.len() <= i {
                    memo.resize(i + 1, None);
                }
                memo[i] = Some(top);
            }
            b'h' => {
                let i = r.u8()? as usize;
                let id = memo
                    .get(i)
                    .copied()
                    .flatten()
                    .ok_or_else(|| err(at, format!("memo {i} is unset")))?;
                stack.push(id);
            }
            b'R' | 0x81 => {
                let args = pop(&mut stack)?;
                let callable = pop(&mut stack)?;
                let Value::Global(m, n) = &arena[callable] else {
                    return Err(err(at, "REDUCE/NEWOBJ of something that is not a class"));
                };
                if !matches!(arena[args], Value::Tuple(_)) {
                    return Err(err(at, "REDUCE/NEWOBJ arguments are not a tuple"));
                }
                let class = (m.clone(), n.clone());
                push(
                    &mut arena,
                    &mut stack,
                    Value::Object {
                        class,
                        args,
                        state: None,
                        items: vec![],
                    },
                )
            }
            b'b' => {
                let state = pop(&mut stack)?;
                let obj = *stack
                    .last()
                    .filter(|&&x| x != MARK_SENTINEL)
                    .ok_or_else(|| err(at, "BUILD on an empty stack"))?;
                match &mut arena[obj] {
                    Value::Object { state: s, .. } => *s = Some(state),
                    _ => return Err(err(at, "BUILD on something that is not an object")),
                }
            }
            b'a' => {
                let v = pop(&mut stack)?;
                let list = *stack
                    .last()
                    .ok_or_else(|| err(at, "APPEND on an empty stack"))?;
                match arena.get_mut(list) {
                    Some(Value::List(items)) => items.push(v),
                    _ => return Err(err(at, "APPEND to something that is not a list")),
                }
            }
            b'e' => {
                let items = pop_mark(&mut stack)?;
                let list = *stack
                    .last()
                    .ok_or_else(|| err(at, "APPENDS on an empty stack"))?;
                match arena.get_mut(list) {
                    Some(Value::List(l)) => l.extend(items),
                    _ => return Err(err(at, "APPENDS to something that is not a list")),
                }
            }
            b'u' => {
                let items = pop_mark(&mut stack)?;
                if items.len() % 2 != 0 {
                    return Err(err(at, "SETITEMS with an odd number of values"));
                }
                let pairs: Vec<(Id, Id)> = items.chunks(2).map(|p| (p[0], p[1])).collect();
                let dict = *stack
                    .last()
                    .ok_or_else(|| err(at, "SETITEMS on an empty stack"))?;
                match arena.get_mut(dict) {
                    Some(Value::Dict(d)) => d.extend(pairs),
                    Some(Value::Object { items: d, .. }) => d.extend(pairs),
                    _ => return Err(err(at, "SETITEMS on something that is not a dict")),
                }
            }
            other => return Err(err(at, format!("unsupported pickle opcode 0x{other:02x}"))),
        }
    }
}

/// An object's constructor arguments, BUILD state and SETITEMS items.
type ObjectParts<'a> = (Id, Option<Id>, &'a [(Id, Id)]);

/// A numpy array: shape and values (f32 and i32 are what these files hold; f64/i64 are read too).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Array {
    pub shape: Vec<usize>,
    pub values: Vec<f64>,
}

/// A scipy CSR matrix.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CsrMatrix {
    pub rows: usize,
    pub cols: usize,
    pub indptr: Vec<usize>,
    pub indices: Vec<usize>,
    pub data: Vec<f64>,
}

impl Pickle {
    fn bad(&self, what: &str) -> DataError {
        DataError::Pickle(format!("unexpected structure: {what}"))
    }

    fn tuple(&self, id: Id) -> Result<&[Id], DataError> {
        match &self.arena[id] {
            Value::Tuple(t) => Ok(t),
            _ => Err(self.bad("expected a tuple")),
        }
    }

    fn int(&self, id: Id) -> Result<i64, DataError> {
        match &self.arena[id] {
            Value::Int(v) => Ok(*v),
            _ => Err(self.bad("expected an integer")),
        }
    }

    fn bytes(&self, id: Id) -> Result<&[u8], DataError> {
        match &self.arena[id] {
            Value::Bytes(b) => Ok(b),
            _ => Err(self.bad("expected a byte string")),
        }
    }

    fn object(&self, id: Id, module: &str, name: &str) -> Result<ObjectParts<'_>, DataError> {
        match &self.arena[id] {
            Value::Object {
                class,
                args,
                state,
                items,
            } if class.0 == module && class.1 == name => Ok((*args, *state, items)),
            Value::Object { class, .. } => Err(DataError::Pickle(format!(
                "found a {}.{} where a {module}.{name} was expected",
                class.0, class.1
            ))),
            _ => Err(self.bad(&format!("expected a {module}.{name}"))),
        }
    }

    /// A `numpy.ndarray` (C order, little-endian, dtype f4/f8/i4/i8).
    pub(crate) fn array(&self, id: Id) -> Result<Array, DataError> {
        let (_, state, _) = self.object(id, "numpy.core.multiarray", "_reconstruct")?;
        let state = self.tuple(state.ok_or_else(|| self.bad("an ndarray without state"))?)?;
        let [_, shape, dtype, fortran, raw] = state else {
            return Err(self.bad("ndarray state of the wrong length"));
        };
        let shape: Vec<usize> = self
            .tuple(*shape)?
            .iter()
            .map(|&d| usize::try_from(self.int(d)?).map_err(|_| self.bad("a negative dimension")))
            .collect::<Result<_, _>>()?;
        if self.arena[*fortran] != Value::Bool(false) {
            return Err(DataError::Pickle(
                "Fortran-ordered arrays are not supported".into(),
            ));
        }
        let (dargs, dstate, _) = self.object(*dtype, "numpy", "dtype")?;
        let code = self.bytes(
            *self
                .tuple(dargs)?
                .first()
                .ok_or_else(|| self.bad("dtype without a code"))?,
        )?;
        if let Some(s) = dstate {
            let order = self.tuple(s)?.get(1).map(|&o| self.bytes(o)).transpose()?;
            if !matches!(order, Some(b"<") | Some(b"|") | None) {
                return Err(DataError::Pickle(
                    "big-endian arrays are not supported".into(),
                ));
            }
        }
        let raw = self.bytes(*raw)?;
        let count = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(|| self.bad("shape overflows"))?;
        let width = match code {
            b"f4" | b"i4" => 4,
            b"f8" | b"i8" => 8,
            other => {
                return Err(DataError::Pickle(format!(
                    "unsupported dtype `{}`",
                    String::from_utf8_lossy(other)
                )));
            }
        };
        if count.checked_mul(width) != Some(raw.len()) {
            return Err(DataError::Pickle(format!(
                "array of shape {shape:?} needs {} bytes, holds {}",
                count.saturating_mul(width),
                raw.len()
            )));
        }
        let values = raw
            .chunks_exact(width)
            .map(|c| match code {
                b"f4" => f32::from_le_bytes(c.try_into().expect("4")) as f64,
                b"i4" => i32::from_le_bytes(c.try_into().expect("4")) as f64,
                b"f8" => f64::from_le_bytes(c.try_into().expect("8")),
                _ => i64::from_le_bytes(c.try_into().expect("8")) as f64,
            })
            .collect();
        Ok(Array { shape, values })
    }

    fn field(&self, items: &[(Id, Id)], key: &str) -> Result<Id, DataError> {
        items
            .iter()
            .find(|(k, _)| matches!(&self.arena[*k], Value::Bytes(b) if b == key.as_bytes()))
            .map(|(_, v)| *v)
            .ok_or_else(|| DataError::Pickle(format!("CSR matrix without `{key}`")))
    }

    /// A `scipy.sparse.csr.csr_matrix`, checked for consistency.
    pub(crate) fn csr(&self, id: Id) -> Result<CsrMatrix, DataError> {
        let (_, state, _) = self.object(id, "scipy.sparse.csr", "csr_matrix")?;
        let Value::Dict(items) =
            &self.arena[state.ok_or_else(|| self.bad("a CSR matrix without state"))?]
        else {
            return Err(self.bad("CSR state is not a dict"));
        };
        let shape = self.tuple(self.field(items, "_shape")?)?;
        let [rows, cols] = shape else {
            return Err(self.bad("CSR shape is not 2-D"));
        };
        let (rows, cols) = (self.int(*rows)?, self.int(*cols)?);
        let (rows, cols) = (usize::try_from(rows), usize::try_from(cols));
        let (Ok(rows), Ok(cols)) = (rows, cols) else {
            return Err(self.bad("negative CSR shape"));
        };
        let as_index = |a: Array, what: &str| -> Result<Vec<usize>, DataError> {
            a.values
                .iter()
                .map(|&v| {
                    if v >= 0.0 {
                        Ok(v as usize)
                    } else {
                        Err(DataError::Pickle(format!("negative CSR {what}")))
                    }
                })
                .collect()
        };
        let indptr = as_index(self.array(self.field(items, "indptr")?)?, "indptr")?;
        let indices = as_index(self.array(self.field(items, "indices")?)?, "index")?;
        let data = self.array(self.field(items, "data")?)?.values;
        let ok = indptr.len() == rows + 1
            && indptr.first() == Some(&0)
            && indptr.windows(2).all(|w| w[0] <= w[1])
            && indptr.last() == Some(&indices.len())
            && data.len() == indices.len()
            && indices.iter().all(|&c| c < cols);
        if !ok {
            return Err(DataError::Pickle(format!(
                "inconsistent CSR matrix of shape {rows}x{cols}"
            )));
        }
        Ok(CsrMatrix {
            rows,
            cols,
            indptr,
            indices,
            data,
        })
    }

    /// A `collections.defaultdict(list)` (or dict) of int -> list of ints.
    pub(crate) fn adjacency(&self, id: Id) -> Result<Vec<(i64, Vec<i64>)>, DataError> {
        let items = match &self.arena[id] {
            Value::Dict(d) => d.as_slice(),
            _ => self.object(id, "collections", "defaultdict")?.2,
        };
        items
            .iter()
            .map(|&(k, v)| {
                let Value::List(l) = &self.arena[v] else {
                    return Err(self.bad("adjacency values are not lists"));
                };
                Ok((
                    self.int(k)?,
                    l.iter().map(|&x| self.int(x)).collect::<Result<_, _>>()?,
                ))
            })
            .collect()
    }
}
