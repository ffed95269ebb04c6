//! Download progress for the dataset loaders: one bar per file, replaced by a line when the
//! file arrives verified.

use burn_gnn_data::DownloadEvent;

use super::progress::Progress;

/// A reporter to pass to `Planetoid::open` / `TuDataset::open`.
pub fn downloads() -> impl FnMut(DownloadEvent) {
    let mut bar: Option<Progress> = None;
    move |event| match event {
        DownloadEvent::Start { file, total } => {
            bar = Some(Progress::styled(
                total.unwrap_or(0),
                format!("downloading {file}"),
                "{prefix} [{bar:24}] {bytes}/{total_bytes} ({elapsed})",
            ));
        }
        DownloadEvent::Progress { received } => {
            if let Some(b) = bar.as_mut() {
                b.set(received, "");
            }
        }
        DownloadEvent::Done { file } => match bar.take() {
            Some(b) => b.finish(format!("{file} verified")),
            None => eprintln!("{file} verified"),
        },
    }
}
