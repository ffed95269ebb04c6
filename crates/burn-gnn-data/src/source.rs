//! Where datasets come from: the data directory, the embedded copies, the download cache or a
//! download, tried in one order by every loader.

use std::path::{Path, PathBuf};

use crate::DataError;

/// The environment variable naming a data directory (see [`crate::Planetoid::open`]).
pub const DATA_DIR_ENV: &str = "BURN_GNN_DATA_DIR";

/// Progress of a download, for a progress bar.
#[derive(Clone, Debug)]
pub enum DownloadEvent {
    /// A file starts downloading; its size when the server says it.
    Start {
        /// `ind.<name>.<suffix>`, or a TU archive `<NAME>.zip`.
        file: String,
        /// `Content-Length`, if sent.
        total: Option<u64>,
    },
    /// Bytes of the current file received so far.
    Progress {
        /// Bytes received.
        received: u64,
    },
    /// The file arrived and its checksum matched (for an archive: every file taken from it).
    Done {
        /// `ind.<name>.<suffix>` or `<NAME>.zip`.
        file: String,
    },
}

/// Where [`crate::Planetoid::open`] or [`crate::TuDataset::open`] found a dataset's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSource {
    /// A data directory: the one passed in, or [`DATA_DIR_ENV`].
    Dir(PathBuf),
    /// The copy compiled into this crate (Cora, CiteSeer, MUTAG; feature `embedded`).
    Embedded,
    /// The download cache, already holding every file.
    Cache(PathBuf),
    /// Downloaded into the cache by this call.
    Downloaded(PathBuf),
}

impl std::fmt::Display for DataSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Dir(d) => write!(f, "{}", d.display()),
            Self::Embedded => write!(f, "the embedded copy"),
            Self::Cache(d) => write!(f, "the cache {}", d.display()),
            Self::Downloaded(d) => write!(f, "downloaded into {}", d.display()),
        }
    }
}

/// The `download` step of [`open_in_order`]: `fetch(dir, progress)`, or `None` in a build
/// without the `download` feature (where `fetch` names functions that do not exist, so it is
/// not even compiled, and `progress` goes unused).
macro_rules! download_step {
    ($progress:ident, $fetch:expr) => {{
        #[cfg(feature = "download")]
        let step = Some(|dir: &std::path::Path| $fetch(dir, $progress));
        #[cfg(not(feature = "download"))]
        let step = {
            let _ = $progress;
            None::<fn(&std::path::Path) -> Result<(), crate::DataError>>
        };
        step
    }};
}
pub(crate) use download_step;

/// Finds a dataset in the order every loader documents: `data_dir` (else [`DATA_DIR_ENV`]),
/// searched with `find_in`; the `embedded` copy; the `cache` when `find_in` finds it complete
/// there; a `download` into the cache (`None`: this build cannot download, and the error says
/// what to supply, with `hint`). `load` reads a directory found.
pub(crate) fn open_in_order<T>(
    data_dir: Option<&Path>,
    find_in: impl Fn(&Path) -> Option<PathBuf>,
    embedded: Option<impl FnOnce() -> Result<T, DataError>>,
    cache: PathBuf,
    hint: impl Fn(&Path) -> String,
    load: impl Fn(&Path) -> Result<T, DataError>,
    download: Option<impl FnOnce(&Path) -> Result<(), DataError>>,
) -> Result<(T, DataSource), DataError> {
    let given = data_dir
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(DATA_DIR_ENV).map(PathBuf::from));
    if let Some(dir) = given.as_deref().and_then(&find_in) {
        return Ok((load(&dir)?, DataSource::Dir(dir)));
    }
    if let Some(embedded) = embedded {
        return Ok((embedded()?, DataSource::Embedded));
    }
    if find_in(&cache).as_deref() == Some(cache.as_path()) {
        return Ok((load(&cache)?, DataSource::Cache(cache)));
    }
    match download {
        Some(download) => {
            download(&cache)?;
            Ok((load(&cache)?, DataSource::Downloaded(cache)))
        }
        None => Err(DataError::MissingFile {
            hint: format!(
                "this build cannot download (feature `download` is off); {}",
                hint(&cache)
            ),
            path: cache,
        }),
    }
}
