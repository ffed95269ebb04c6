//! Where [`TuDataset`]'s files come from: a data directory, the embedded MUTAG, the download
//! cache or a download, each file checked against the committed SHA-256 sums.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::planetoid_files::checked;
use crate::source::{download_step, open_in_order};
use crate::{DATA_DIR_ENV, DataError, DataSource, DownloadEvent, TuDataset};

/// The environment variable that replaces the TU download source (a mirror); the archives are
/// fetched from `<source>/<NAME>.zip`.
pub const TU_SOURCE_ENV: &str = "BURN_GNN_TU_URL";

/// The TU download cache, relative to the current directory; each dataset in `<NAME>/`.
pub const TU_CACHE_DIR: &str = "datasets/cache/tu";

/// Where the TU collection publishes its archives (the source PyG downloads from).
pub(crate) const TU_SOURCE: &str = "https://www.chrsmrrs.com/graphkerneldatasets";

/// The datasets whose sums are committed, as named in their files.
pub const TU_DATASETS: [&str; 5] = ["MUTAG", "PROTEINS", "ENZYMES", "NCI1", "IMDB-BINARY"];

/// The committed SHA-256 sums of their data files, `<sum>  <NAME>/<NAME>_<suffix>.txt`.
const SUMS: &str = include_str!("../data/tu.sha256");

/// MUTAG's data files, compiled into the crate.
#[cfg(feature = "embedded")]
const EMBEDDED: [(&str, &[u8]); 5] = {
    macro_rules! files {
        ($($file:literal),*) => {
            [$(($file, include_bytes!(concat!("../data/tu/MUTAG/", $file)))),*]
        };
    }
    files!(
        "MUTAG_A.txt",
        "MUTAG_edge_labels.txt",
        "MUTAG_graph_indicator.txt",
        "MUTAG_graph_labels.txt",
        "MUTAG_node_labels.txt"
    )
};

/// The canonical name of `name` (any case), if its sums are committed.
pub(crate) fn known(name: &str) -> Result<&'static str, DataError> {
    TU_DATASETS
        .into_iter()
        .find(|k| k.eq_ignore_ascii_case(name))
        .ok_or_else(|| DataError::UnknownDataset {
            name: name.to_string(),
            known: TU_DATASETS.join(", ").to_lowercase(),
        })
}

/// The data files of `name` (`<NAME>_<suffix>.txt`) with their committed sums.
pub(crate) fn files_of(name: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    SUMS.lines().filter_map(move |l| {
        let (sum, path) = l.split_once("  ")?;
        let (dir, file) = path.split_once('/')?;
        (dir == name).then_some((file, sum))
    })
}

/// `<name>_<suffix>.txt`.
fn file_name(name: &str, suffix: &str) -> String {
    format!("{name}_{suffix}.txt")
}

/// `bytes` if their sum is the committed one for `file` of `name`.
fn verified<'a>(
    path: &Path,
    name: &str,
    file: &str,
    bytes: Cow<'a, [u8]>,
) -> Result<Cow<'a, [u8]>, DataError> {
    let expected = files_of(name).find(|(f, _)| *f == file).map(|(_, s)| s);
    checked(path, file, expected, bytes)
}

/// The files of `name` missing from `dir`.
pub(crate) fn missing_in(dir: &Path, name: &str) -> Vec<String> {
    files_of(name)
        .map(|(f, _)| f.to_string())
        .filter(|f| !dir.join(f).is_file())
        .collect()
}

/// The folder under a data directory `dir` that holds every file of `name`: `dir` itself, or
/// `<NAME>`, `<NAME>/raw`, `tu/<NAME>`, `tu/<NAME>/raw` or `TUDataset/<NAME>/raw` under it (the
/// last is PyG's layout).
pub(crate) fn find_in(dir: &Path, name: &str) -> Option<PathBuf> {
    [
        dir.to_path_buf(),
        dir.join(name),
        dir.join(name).join("raw"),
        dir.join("tu").join(name),
        dir.join("tu").join(name).join("raw"),
        dir.join("TUDataset").join(name).join("raw"),
    ]
    .into_iter()
    .find(|d| missing_in(d, name).is_empty())
}

/// What to do when files are missing.
pub(crate) fn supply_hint(dir: &Path, name: &str, missing: &[String]) -> String {
    format!(
        "missing from {}: {}; unpack {TU_SOURCE}/{name}.zip into a directory and pass it as \
         --data-dir DIR (the examples) or set {DATA_DIR_ENV}=DIR, or set {TU_SOURCE_ENV} to a \
         mirror that serves <NAME>.zip",
        dir.display(),
        missing.join(", ")
    )
}

impl TuDataset {
    /// Loads `name` (one of [`TU_DATASETS`], any case) from wherever its files are, in this
    /// order:
    ///
    /// 1. `data_dir`, else the directory named by [`DATA_DIR_ENV`] (the files in it, or in
    ///    `<NAME>/`, `tu/<NAME>/` or PyG's `TUDataset/<NAME>/raw/` under it);
    /// 2. the copy compiled into the crate (MUTAG, feature `embedded`, on by default);
    /// 3. the download cache [`TU_CACHE_DIR`]`/<NAME>`;
    /// 4. a download of `<NAME>.zip` into that cache (feature `download`, on by default),
    ///    reported through `progress`.
    ///
    /// Every file is checked against the SHA-256 sums committed in the crate.
    ///
    /// # Errors
    /// An unknown name; files that could not be found or downloaded (the message lists each
    /// missing file and the ways to supply them); a checksum mismatch; a malformed file.
    pub fn open(
        name: &str,
        data_dir: Option<&Path>,
        progress: impl FnMut(DownloadEvent),
    ) -> Result<(TuDataset, DataSource), DataError> {
        let name = known(name)?;
        let download = download_step!(progress, |dir, progress| {
            download_tu(name, dir, progress)
        });
        open_in_order(
            data_dir,
            |dir| find_in(dir, name),
            embedded_file(name, "A").map(|_| || TuDataset::embedded(name)),
            Path::new(TU_CACHE_DIR).join(name),
            |dir| supply_hint(dir, name, &missing_in(dir, name)),
            |dir| TuDataset::load(name, dir),
            download,
        )
    }

    /// Loads `name` from the copy compiled into the crate (MUTAG; feature `embedded`, on by
    /// default): no file system, no network.
    ///
    /// # Errors
    /// [`DataError::NotEmbedded`] for any other dataset or a build without the feature.
    pub fn embedded(name: &str) -> Result<TuDataset, DataError> {
        let name = known(name)?;
        if embedded_file(name, "A").is_none() {
            return Err(DataError::NotEmbedded(name.to_string()));
        }
        TuDataset::from_files(name, |suffix| {
            let file = file_name(name, suffix);
            embedded_file(name, suffix)
                .map(|bytes| verified(Path::new(&file), name, &file, Cow::Borrowed(bytes)))
                .transpose()
        })
    }

    /// Loads `name` (one of [`TU_DATASETS`], any case) from its files directly in `dir`,
    /// each checked against the committed sums; other files in `dir` are ignored.
    ///
    /// # Errors
    /// A missing file (with where to get it), a checksum mismatch, a malformed file.
    pub fn load(name: &str, dir: &Path) -> Result<TuDataset, DataError> {
        let name = known(name)?;
        let missing = missing_in(dir, name);
        if !missing.is_empty() {
            return Err(DataError::MissingFile {
                path: dir.join(&missing[0]),
                hint: supply_hint(dir, name, &missing),
            });
        }
        TuDataset::from_files(name, |suffix| {
            let file = file_name(name, suffix);
            if files_of(name).all(|(f, _)| f != file) {
                return Ok(None);
            }
            let path = dir.join(&file);
            let bytes = std::fs::read(&path).map_err(|source| DataError::Io {
                path: path.clone(),
                source,
            })?;
            verified(&path, name, &file, Cow::Owned(bytes)).map(Some)
        })
    }
}

/// The embedded bytes of `<name>_<suffix>.txt`, if that dataset is embedded and has the file.
fn embedded_file(name: &str, suffix: &str) -> Option<&'static [u8]> {
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

/// Downloads `<NAME>.zip` of the TU dataset `name` (one of [`crate::TU_DATASETS`]) and unpacks
/// its data files into `dir` (creating it), each verified against the committed SHA-256 sum
/// before it is moved into place; the archive's other files (READMEs) are not kept. Files
/// already present are left alone; loading checks them.
///
/// The source is [`TU_SOURCE_ENV`] if set, else the TU collection's site.
///
/// # Errors
/// An unknown name, a network or HTTP error, an oversized or unreadable archive, an archive
/// without a file or with a mismatching one, I/O errors.
#[cfg(feature = "download")]
pub fn download_tu(
    name: &str,
    dir: &Path,
    progress: impl FnMut(DownloadEvent),
) -> Result<(), DataError> {
    let source = std::env::var(TU_SOURCE_ENV).unwrap_or_else(|_| TU_SOURCE.to_string());
    download_tu_from(&source, name, dir, progress)
}

/// [`download_tu`] from an explicit `source` URL (a mirror serving `<source>/<NAME>.zip`).
///
/// # Errors
/// As [`download_tu`].
#[cfg(feature = "download")]
pub fn download_tu_from(
    source: &str,
    name: &str,
    dir: &Path,
    mut progress: impl FnMut(DownloadEvent),
) -> Result<(), DataError> {
    use std::io::Read;
    let name = known(name)?;
    let missing = missing_in(dir, name);
    if missing.is_empty() {
        return Ok(());
    }
    let archive = format!("{name}.zip");
    let url = format!("{}/{archive}", source.trim_end_matches('/'));
    let fail = |reason: String| DataError::Download {
        url: url.clone(),
        reason,
        hint: supply_hint(dir, name, &missing_in(dir, name)),
    };
    let bytes = crate::download::fetch(&crate::download::agent(), &url, &archive, &mut progress)
        .map_err(fail)?;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| fail(format!("not a zip archive: {e}")))?;
    std::fs::create_dir_all(dir).map_err(|source| DataError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for (file, expected) in files_of(name).filter(|(f, _)| missing.iter().any(|m| m == f)) {
        // The archives hold `<NAME>/<file>`; match on the last component only.
        let index = (0..zip.len())
            .find(|&i| {
                zip.name_for_index(i)
                    .is_some_and(|n| n.is_ok_and(|n| n.rsplit('/').next() == Some(file)))
            })
            .ok_or_else(|| fail(format!("the archive has no {file}")))?;
        let mut entry = zip
            .by_index(index)
            .map_err(|e| fail(format!("cannot read {file} in the archive: {e}")))?;
        let mut data = Vec::new();
        (&mut entry)
            .take(crate::download::MAX_BYTES + 1)
            .read_to_end(&mut data)
            .map_err(|e| fail(format!("cannot unpack {file}: {e}")))?;
        let actual = crate::planetoid_files::sha256_hex(&data);
        if actual != expected {
            return Err(fail(format!(
                "{file} has SHA-256 {actual}, expected {expected}"
            )));
        }
        crate::download::write_atomically(&dir.join(file), &data)?;
    }
    // The archive counts as verified once every file it was fetched for is.
    progress(DownloadEvent::Done { file: archive });
    Ok(())
}
