//! Where [`Planetoid`]'s raw files come from: a data directory, the embedded copy, the download
//! cache or a download, each file checked against the committed SHA-256 sums.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::source::{download_step, open_in_order};
use crate::{DATA_DIR_ENV, DataError, DataSource, DownloadEvent, Planetoid};

/// The environment variable that replaces the download source (a mirror, or a local server
/// in tests); the files are fetched from `<source>/ind.<name>.<suffix>`.
pub const SOURCE_ENV: &str = "BURN_GNN_PLANETOID_URL";

/// The download cache, relative to the current directory.
pub const CACHE_DIR: &str = "datasets/cache/planetoid";

/// The committed SHA-256 sums of the canonical raw files (`sha256sum` format).
const SUMS: &str = include_str!("../data/planetoid.sha256");

/// The datasets [`Planetoid`] knows.
pub(crate) const NAMES: [&str; 3] = ["cora", "citeseer", "pubmed"];

/// The raw files of each dataset, `ind.<name>.<suffix>`.
pub(crate) const SUFFIXES: [&str; 8] =
    ["x", "tx", "allx", "y", "ty", "ally", "graph", "test.index"];

/// Where the canonical files are published (the source PyG downloads from).
pub(crate) const SOURCE: &str = "https://github.com/kimiyoung/planetoid/raw/master/data";

/// `ind.<name>.<suffix>`.
pub(crate) fn file_name(name: &str, suffix: &str) -> String {
    format!("ind.{name}.{suffix}")
}

/// The lowercase name if it is one of [`NAMES`].
pub(crate) fn known(name: &str) -> Result<String, DataError> {
    let lower = name.to_ascii_lowercase();
    if NAMES.contains(&lower.as_str()) {
        Ok(lower)
    } else {
        Err(DataError::UnknownDataset {
            name: lower,
            known: NAMES.join(", "),
        })
    }
}

/// The lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The committed SHA-256 sum of a raw file.
pub(crate) fn expected_sum(file: &str) -> Option<&'static str> {
    SUMS.lines().find_map(|l| {
        l.split_once("  ")
            .filter(|(_, f)| *f == file)
            .map(|(s, _)| s)
    })
}

/// `bytes` if their SHA-256 is `expected`, the committed sum of `file` (`None`: no sum is
/// committed for it, an error). Every loader checks its files through this.
pub(crate) fn checked<'a>(
    path: &Path,
    file: &str,
    expected: Option<&str>,
    bytes: Cow<'a, [u8]>,
) -> Result<Cow<'a, [u8]>, DataError> {
    let expected = expected
        .ok_or_else(|| DataError::Inconsistent(format!("no committed checksum for {file}")))?;
    let actual = sha256_hex(&bytes);
    if actual == expected {
        Ok(bytes)
    } else {
        Err(DataError::Checksum {
            path: path.to_path_buf(),
            expected: expected.to_string(),
            actual,
        })
    }
}

/// Reads `ind.<name>.<suffix>` from `dir`, checked.
pub(crate) fn read_from_dir(
    dir: &Path,
    name: &str,
    suffix: &str,
) -> Result<Cow<'static, [u8]>, DataError> {
    let file = file_name(name, suffix);
    let path = dir.join(&file);
    if !path.exists() {
        return Err(DataError::MissingFile {
            path,
            hint: format!(
                "put the canonical Planetoid files there (from {SOURCE}/{file}), or point \
                 --data-dir / {DATA_DIR_ENV} at a directory that has them"
            ),
        });
    }
    let bytes = std::fs::read(&path).map_err(|source| DataError::Io {
        path: path.clone(),
        source,
    })?;
    checked(&path, &file, expected_sum(&file), Cow::Owned(bytes))
}

/// The raw files compiled into the crate.
#[cfg(feature = "embedded")]
const EMBEDDED: [(&str, &[u8]); 16] = {
    macro_rules! files {
        ($($file:literal),*) => {
            [$(($file, include_bytes!(concat!("../data/planetoid/", $file)))),*]
        };
    }
    files!(
        "ind.cora.x",
        "ind.cora.tx",
        "ind.cora.allx",
        "ind.cora.y",
        "ind.cora.ty",
        "ind.cora.ally",
        "ind.cora.graph",
        "ind.cora.test.index",
        "ind.citeseer.x",
        "ind.citeseer.tx",
        "ind.citeseer.allx",
        "ind.citeseer.y",
        "ind.citeseer.ty",
        "ind.citeseer.ally",
        "ind.citeseer.graph",
        "ind.citeseer.test.index"
    )
};

/// The embedded bytes of `ind.<name>.<suffix>`, if that dataset is embedded.
pub(crate) fn embedded_file(name: &str, suffix: &str) -> Option<&'static [u8]> {
    #[cfg(feature = "embedded")]
    {
        let file = file_name(name, suffix);
        EMBEDDED
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, bytes)| *bytes)
    }
    #[cfg(not(feature = "embedded"))]
    {
        let _ = (name, suffix);
        None
    }
}

/// Whether `dir` holds every raw file of `name`.
fn has_all(dir: &Path, name: &str) -> bool {
    missing_in(dir, name).is_empty()
}

/// The directory under a data directory `dir` that holds every file of `name`: `dir` itself,
/// `dir/planetoid` or `dir/planetoid/raw` (a root shared with other dataset families).
pub(crate) fn find_in(dir: &Path, name: &str) -> Option<PathBuf> {
    [
        dir.to_path_buf(),
        dir.join("planetoid"),
        dir.join("planetoid").join("raw"),
    ]
    .into_iter()
    .find(|d| has_all(d, name))
}

/// The files of `name` missing from `dir`.
pub(crate) fn missing_in(dir: &Path, name: &str) -> Vec<String> {
    SUFFIXES
        .iter()
        .map(|s| file_name(name, s))
        .filter(|f| !dir.join(f).is_file())
        .collect()
}

/// What to do when files are missing: where they go and the three ways to supply them.
pub(crate) fn supply_hint(dir: &Path, missing: &[String]) -> String {
    format!(
        "missing from {}: {}; put the canonical files in a directory and pass it as --data-dir \
         DIR (the examples) or set {DATA_DIR_ENV}=DIR, or set {} to a mirror that serves them",
        dir.display(),
        missing.join(", "),
        crate::SOURCE_ENV
    )
}

impl Planetoid {
    /// Loads `name` (`cora`, `citeseer`, `pubmed`; any case) from wherever its raw files are,
    /// in this order:
    ///
    /// 1. `data_dir`, else the directory named by [`DATA_DIR_ENV`]: the files directly in it,
    ///    or under `planetoid/` or `planetoid/raw/` (a data root shared with other datasets);
    /// 2. the copy compiled into the crate (Cora and CiteSeer, feature `embedded`, on by
    ///    default), so these two work offline from a fresh clone;
    /// 3. the download cache [`CACHE_DIR`];
    /// 4. a download into that cache (feature `download`, on by default), reported through
    ///    `progress`.
    ///
    /// Returns the dataset and where it came from.
    ///
    /// # Errors
    /// An unknown name; files that could not be found or downloaded (the message lists each
    /// missing file and the ways to supply them); a checksum mismatch; a corrupt file.
    pub fn open(
        name: &str,
        data_dir: Option<&Path>,
        progress: impl FnMut(DownloadEvent),
    ) -> Result<(Planetoid, DataSource), DataError> {
        let name = known(name)?;
        let download = download_step!(progress, |dir, progress| {
            download_planetoid(&name, dir, progress)
        });
        open_in_order(
            data_dir,
            |dir| find_in(dir, &name),
            embedded_file(&name, "x").map(|_| || Planetoid::embedded(&name)),
            PathBuf::from(CACHE_DIR),
            |dir| supply_hint(dir, &missing_in(dir, &name)),
            |dir| Planetoid::load(&name, dir),
            download,
        )
    }

    /// Loads `name` from the copy compiled into the crate (Cora and CiteSeer; feature
    /// `embedded`, on by default): no file system, no network.
    ///
    /// # Errors
    /// [`DataError::NotEmbedded`] for PubMed, an unknown name, or a build without the feature.
    pub fn embedded(name: &str) -> Result<Planetoid, DataError> {
        let name = known(name)?;
        if embedded_file(&name, "x").is_none() {
            return Err(DataError::NotEmbedded(name));
        }
        Planetoid::from_files(&name, |suffix| {
            let file = file_name(&name, suffix);
            let bytes = embedded_file(&name, suffix).expect("every file of an embedded dataset");
            checked(
                Path::new(&file),
                &file,
                expected_sum(&file),
                Cow::Borrowed(bytes),
            )
        })
    }

    /// Loads `name` (`cora`, `citeseer`, `pubmed`; any case) from the raw files directly in
    /// `dir`.
    ///
    /// # Errors
    /// A missing file (with where to get it), a checksum mismatch, a corrupt pickle, files that
    /// do not fit together.
    pub fn load(name: &str, dir: &Path) -> Result<Planetoid, DataError> {
        let name = known(name)?;
        Planetoid::from_files(&name, |suffix| read_from_dir(dir, &name, suffix))
    }

    /// Downloads the files of `name` missing from `dir` ([`crate::download_planetoid`], with
    /// `progress`), then [`load`](Self::load)s it.
    ///
    /// # Errors
    /// As [`crate::download_planetoid`] and [`load`](Self::load).
    #[cfg(feature = "download")]
    pub fn fetch(
        name: &str,
        dir: &Path,
        progress: impl FnMut(DownloadEvent),
    ) -> Result<Planetoid, DataError> {
        download_planetoid(name, dir, progress)?;
        Planetoid::load(name, dir)
    }
}

/// Downloads the raw files of `name` that are missing from `dir` (creating it), verifying each
/// against the committed SHA-256 sum before it is moved into place (a partial or wrong file is
/// never left under its final name). Files already present are left alone; loading checks them.
///
/// The source is [`SOURCE_ENV`] if set, else the public repository PyG downloads from.
///
/// # Errors
/// An unknown name, a network or HTTP error, an oversized or mismatching file (the message lists
/// every file still missing and how to supply them), I/O errors.
#[cfg(feature = "download")]
pub fn download_planetoid(
    name: &str,
    dir: &Path,
    progress: impl FnMut(DownloadEvent),
) -> Result<(), DataError> {
    let source = std::env::var(SOURCE_ENV).unwrap_or_else(|_| SOURCE.to_string());
    download_planetoid_from(&source, name, dir, progress)
}

/// [`download_planetoid`] from an explicit `source` URL (a mirror; files are fetched from
/// `<source>/ind.<name>.<suffix>`).
///
/// # Errors
/// As [`download_planetoid`].
#[cfg(feature = "download")]
pub fn download_planetoid_from(
    source: &str,
    name: &str,
    dir: &Path,
    mut progress: impl FnMut(DownloadEvent),
) -> Result<(), DataError> {
    let name = known(name)?;
    let source = source.trim_end_matches('/');
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DataError::Io { path, source }
    };
    let missing: Vec<(String, &'static str)> = missing_in(dir, &name)
        .into_iter()
        .map(|file| {
            let sum = expected_sum(&file).expect("a sum is committed for every raw file");
            (file, sum)
        })
        .collect();
    if !missing.is_empty() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let agent = crate::download::agent();
    for (file, expected) in missing {
        let path = dir.join(&file);
        let url = format!("{source}/{file}");
        let fail = |reason: String| DataError::Download {
            url: url.clone(),
            reason,
            hint: supply_hint(dir, &missing_in(dir, &name)),
        };
        let bytes = crate::download::fetch(&agent, &url, &file, &mut progress).map_err(fail)?;
        let actual = sha256_hex(&bytes);
        if actual != expected {
            return Err(fail(format!(
                "the file has SHA-256 {actual}, expected {expected}"
            )));
        }
        crate::download::write_atomically(&path, &bytes)?;
        progress(DownloadEvent::Done { file });
    }
    Ok(())
}
