//! Downloading on first use (feature `download`, on by default): the HTTP transport the
//! Planetoid and TU loaders fetch their files through, and OGB's archives.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use crate::{DataError, DownloadEvent};

/// The largest file accepted (PubMed's biggest raw file is about 40 MB, the largest TU archive
/// of the collection's common datasets under 100 MB).
pub(crate) const MAX_BYTES: u64 = 256 << 20;

/// An HTTP agent on which a stalled connection fails instead of hanging: 30 s to connect, 60 s
/// between reads.
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// The body of `url` (at most [`MAX_BYTES`]), its progress reported as `file`; the error is the
/// reason.
pub(crate) fn fetch(
    agent: &ureq::Agent,
    url: &str,
    file: &str,
    progress: &mut impl FnMut(DownloadEvent),
) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    stream(agent, url, file, Some(MAX_BYTES), &mut bytes, progress)?;
    Ok(bytes)
}

/// Streams the body of `url` into `out`, its progress reported as `file`, refusing more than
/// `limit` bytes (announced or received). Returns the bytes received and those announced.
fn stream(
    agent: &ureq::Agent,
    url: &str,
    file: &str,
    limit: Option<u64>,
    out: &mut impl Write,
    progress: &mut impl FnMut(DownloadEvent),
) -> Result<(u64, Option<u64>), String> {
    let mut response = agent.get(url).call().map_err(|e| e.to_string())?;
    let total = content_length(&response);
    if let (Some(total), Some(limit)) = (total, limit)
        && total > limit
    {
        return Err(format!(
            "the server announces {total} bytes, more than the {limit} accepted"
        ));
    }
    progress(DownloadEvent::Start {
        file: file.to_string(),
        total,
    });
    let mut reader = response
        .body_mut()
        .as_reader()
        .take(limit.map_or(u64::MAX, |l| l + 1));
    let mut buf = vec![0u8; 64 << 10];
    let mut received = 0u64;
    loop {
        let n = reader.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])
            .map_err(|e| format!("cannot write: {e}"))?;
        received += n as u64;
        progress(DownloadEvent::Progress { received });
    }
    if let Some(limit) = limit.filter(|&l| received > l) {
        return Err(format!("more than the {limit} bytes accepted"));
    }
    Ok((received, total))
}

/// The size the server announces, if it does.
fn content_length(response: &ureq::http::Response<ureq::Body>) -> Option<u64> {
    response
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

/// Writes `bytes` to `path` through `<path>.part`, so a partial file never has the final name.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), DataError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DataError::Io { path, source }
    };
    let mut part = path.as_os_str().to_owned();
    part.push(".part");
    let part = std::path::PathBuf::from(part);
    let mut out = std::fs::File::create(&part).map_err(io(&part))?;
    out.write_all(bytes).map_err(io(&part))?;
    out.sync_all().map_err(io(&part))?;
    std::fs::rename(&part, path).map_err(io(path))
}

/// Downloads the OGB dataset `name` (e.g. `ogbn-arxiv`) from OGB's server (the zip its
/// `master.csv` names) into `root`, unpacked into `root/<dir name>` (`ogbn_arxiv`) where the
/// OGB loaders ([`crate::ogb::OgbNodeDataset::open`] and the others) find it. Nothing is done
/// when that folder already holds `raw/`.
///
/// The zip is streamed to `root/<download name>.zip.part` (reported through `progress`), then
/// unpacked into `root/<dir name>.part/` and renamed into place, so an interrupted download
/// never leaves a folder the loaders would take for a dataset. OGB publishes no checksums: the
/// zip's own CRC-32 of each file is what is verified. Returns the dataset's folder.
///
/// # Errors
/// An unknown name; [`DataError::Download`] for a network or HTTP error or an archive that does
/// not unpack (an entry outside the dataset's folder included); I/O errors.
pub fn download_ogb(
    name: &str,
    root: &Path,
    progress: impl FnMut(DownloadEvent),
) -> Result<std::path::PathBuf, DataError> {
    let info = crate::ogb::OgbInfo::get(name)?;
    download_ogb_from(&info.url.clone(), &info, root, progress)
}

/// [`download_ogb`] of the dataset `info` describes, from `url` (a mirror, or a dataset of the
/// user's own).
///
/// # Errors
/// As [`download_ogb`].
pub fn download_ogb_from(
    url: &str,
    info: &crate::ogb::OgbInfo,
    root: &Path,
    mut progress: impl FnMut(DownloadEvent),
) -> Result<std::path::PathBuf, DataError> {
    let target = root.join(info.dir_name());
    if target.join("raw").is_dir() {
        return Ok(target);
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DataError::Io { path, source }
    };
    std::fs::create_dir_all(root).map_err(io(root))?;
    let fail = |reason: String| DataError::Download {
        url: url.to_string(),
        reason,
        hint: format!(
            "download {url} yourself and unpack it into {} (its raw/ and split/ folders)",
            target.display()
        ),
    };
    let file = format!("{}.zip", info.download_name);
    let zip_path = root.join(format!("{file}.part"));
    if let Err(reason) = fetch_to_file(&agent(), url, &file, &zip_path, &mut progress) {
        // A download that broke off leaves no partial zip behind.
        let _ = std::fs::remove_file(&zip_path);
        return Err(fail(reason));
    }
    let staging = root.join(format!("{}.part", info.dir_name()));
    let _ = std::fs::remove_dir_all(&staging);
    let unpacked = unpack(&zip_path, &staging);
    let _ = std::fs::remove_file(&zip_path);
    if let Err(reason) = unpacked {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(fail(reason));
    }
    // The zip holds `<download name>/raw/...`; a zip of the folder's contents works too.
    let inner = staging.join(&info.download_name);
    let source = if inner.join("raw").is_dir() {
        inner
    } else {
        staging.clone()
    };
    if !source.join("raw").is_dir() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(fail(format!(
            "the archive has no raw/ folder (in {}/ or at its top)",
            info.download_name
        )));
    }
    std::fs::rename(&source, &target).map_err(io(&target))?;
    let _ = std::fs::remove_dir_all(&staging);
    progress(DownloadEvent::Done { file });
    Ok(target)
}

/// Streams `url` into `path` (no size limit: OGB's zips reach tens of gigabytes), its progress
/// reported as `file`; the error is the reason. A body shorter than announced is an error.
fn fetch_to_file(
    agent: &ureq::Agent,
    url: &str,
    file: &str,
    path: &Path,
    progress: &mut impl FnMut(DownloadEvent),
) -> Result<(), String> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?,
    );
    let (received, total) = stream(agent, url, file, None, &mut out, progress)?;
    if let Some(total) = total.filter(|&t| t != received) {
        return Err(format!(
            "received {received} bytes of the {total} announced"
        ));
    }
    out.flush()
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Unpacks the zip at `path` into `dir`, refusing entries that would land outside it.
fn unpack(path: &Path, dir: &Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| format!("not a zip archive: {e}"))?;
    for i in 0..zip.len() {
        let mut entry = zip
            .by_index(i)
            .map_err(|e| format!("cannot read entry {i}: {e}"))?;
        let name = entry
            .name()
            .map_err(|e| format!("entry {i} has no readable name: {e}"))?
            .to_string();
        let relative = entry
            .enclosed_name()
            .ok_or_else(|| format!("the entry `{name}` would land outside the dataset's folder"))?;
        let out = dir.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        let mut writer = std::fs::File::create(&out).map_err(|e| e.to_string())?;
        // The zip reader checks each entry's CRC-32 as it reaches the end.
        std::io::copy(&mut entry, &mut writer)
            .map_err(|e| format!("cannot unpack `{name}`: {e}"))?;
    }
    Ok(())
}
