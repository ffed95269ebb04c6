//! The JSON and binary file forms that `GraphData` and `HeteroGraphData` share: JSON refuses
//! non-finite floats (it has no such numbers); the binary form is 8 magic bytes, a version byte,
//! then `postcard`.

#[cfg(any(feature = "json", feature = "binary"))]
use serde::{Serialize, de::DeserializeOwned};

#[cfg(any(feature = "json", feature = "binary"))]
use crate::GraphError;

/// `value` as JSON, unless `non_finite` names a feature holding NaN or ±inf, which
/// `serde_json` would write as `null` (the caller finds it: `FeatureSetData::first_non_finite`).
#[cfg(feature = "json")]
pub(crate) fn to_json<T: Serialize>(
    value: &T,
    non_finite: Option<String>,
) -> Result<String, GraphError> {
    if let Some(what) = non_finite {
        return Err(GraphError::NonFiniteJson(what));
    }
    serde_json::to_string(value).map_err(|e| GraphError::Decode(e.to_string()))
}

/// Parses JSON written by [`to_json`].
#[cfg(feature = "json")]
pub(crate) fn from_json<T: DeserializeOwned>(json: &str) -> Result<T, GraphError> {
    serde_json::from_str(json).map_err(|e| GraphError::Decode(format!("JSON: {e}")))
}

/// A binary file form: its magic bytes, the version this build writes and reads, and what it
/// holds (for errors).
#[cfg(feature = "binary")]
pub(crate) struct Binary {
    pub magic: &'static [u8; 8],
    pub version: u8,
    pub what: &'static str,
}

#[cfg(feature = "binary")]
impl Binary {
    /// Magic bytes, version, then `value` in postcard.
    pub fn write<T: Serialize>(&self, value: &T) -> Result<Vec<u8>, GraphError> {
        let mut out = self.magic.to_vec();
        out.push(self.version);
        postcard::to_extend(value, out).map_err(|e| GraphError::Decode(e.to_string()))
    }

    /// Parses what [`write`](Self::write) wrote: a wrong header or version, truncated or
    /// malformed bytes are [`GraphError::Decode`].
    pub fn read<T: DeserializeOwned>(&self, bytes: &[u8]) -> Result<T, GraphError> {
        let what = self.what;
        let body = bytes.strip_prefix(self.magic.as_slice()).ok_or_else(|| {
            GraphError::Decode(format!("not a burn-gnn {what} (wrong magic bytes)"))
        })?;
        match body.split_first() {
            Some((&v, rest)) if v == self.version => postcard::from_bytes(rest)
                .map_err(|e| GraphError::Decode(format!("binary {what}: {e}"))),
            Some((&v, _)) => Err(GraphError::Decode(format!(
                "format version {v}, this build reads {}",
                self.version
            ))),
            None => Err(GraphError::Decode("file ends after the magic bytes".into())),
        }
    }
}
