//! Downloading the Planetoid raw files on first use (feature `download`, on by default).

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use crate::planetoid_files::{SOURCE, expected_sum, known, missing_in, sha256_hex, supply_hint};
use crate::{DataError, DownloadEvent, SOURCE_ENV};

/// The largest file accepted (PubMed's biggest raw file is about 40 MB).
const MAX_BYTES: u64 = 256 << 20;

/// Downloads the raw files of `name` that are missing from `dir` (creating it), verifying each
/// against the committed SHA-256 sum before it is moved into place (a partial or wrong file is
/// never left under its final name). Files already present are left alone; loading checks them.
///
/// The source is [`SOURCE_ENV`] if set, else the public repository PyG downloads from.
///
/// # Errors
/// An unknown name, a network or HTTP error, an oversized or mismatching file (the message lists
/// every file still missing and how to supply them), I/O errors.
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
    // A stalled connection fails instead of hanging: 30 s to connect, 60 s between reads.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(Duration::from_secs(60)))
        .build()
        .into();
    for (file, expected) in missing {
        let path = dir.join(&file);
        let url = format!("{source}/{file}");
        let fail = |reason: String| DataError::Download {
            url: url.clone(),
            reason,
            hint: supply_hint(dir, &missing_in(dir, &name)),
        };
        let mut response = agent.get(&url).call().map_err(|e| fail(e.to_string()))?;
        let total = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if total.is_some_and(|t| t > MAX_BYTES) {
            return Err(fail(format!(
                "the server announces {} bytes, more than any Planetoid file",
                total.unwrap_or(0)
            )));
        }
        progress(DownloadEvent::Start {
            file: file.clone(),
            total,
        });
        let mut reader = response.body_mut().as_reader().take(MAX_BYTES + 1);
        let mut bytes = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = reader.read(&mut buf).map_err(|e| fail(e.to_string()))?;
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
            progress(DownloadEvent::Progress {
                received: bytes.len() as u64,
            });
        }
        if bytes.len() as u64 > MAX_BYTES {
            return Err(fail(format!(
                "more than {MAX_BYTES} bytes, more than any Planetoid file"
            )));
        }
        let actual = sha256_hex(&bytes);
        if actual != expected {
            return Err(fail(format!(
                "the file has SHA-256 {actual}, expected {expected}"
            )));
        }
        let part = dir.join(format!("{file}.part"));
        let mut out = std::fs::File::create(&part).map_err(io(&part))?;
        out.write_all(&bytes).map_err(io(&part))?;
        out.sync_all().map_err(io(&part))?;
        std::fs::rename(&part, &path).map_err(io(&path))?;
        progress(DownloadEvent::Done { file });
    }
    Ok(())
}
