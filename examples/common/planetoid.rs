//! The Planetoid datasets of the examples: the `--dataset` choice and the loader (embedded,
//! data directory, cache or download with a progress bar).

use std::path::Path;

use burn_gnn_data::Planetoid;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::cli::exit_with;
use super::download::downloads;

/// A Planetoid dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dataset {
    /// Cora (embedded: no download).
    Cora,
    /// CiteSeer (embedded: no download).
    Citeseer,
    /// PubMed (downloaded on first use).
    Pubmed,
}

impl Dataset {
    /// The name `Planetoid` takes.
    pub fn name(self) -> &'static str {
        match self {
            Dataset::Cora => "cora",
            Dataset::Citeseer => "citeseer",
            Dataset::Pubmed => "pubmed",
        }
    }
}

/// Loads a Planetoid dataset with [`Planetoid::open`]: `--data-dir` / `BURN_GNN_DATA_DIR` if
/// it holds the files, else the embedded copy (Cora, CiteSeer), else the cache, else a download
/// with a progress bar per file. Exits with status 1 and the reason when that fails.
pub fn planetoid(dataset: Dataset, data_dir: Option<&Path>) -> Planetoid {
    let opened = Planetoid::open(dataset.name(), data_dir, downloads());
    match opened {
        Ok((data, source)) => {
            println!("{} from {source}", data.name);
            data
        }
        Err(e) => exit_with(1, format!("cannot load {}: {e}", dataset.name())),
    }
}
