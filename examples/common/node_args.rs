//! The flags of the node-classification examples (`gat_cora`, `gcn_cora`).

use std::path::PathBuf;

use clap::{CommandFactory, FromArgMatches, Parser};

use super::cli::{Backend, RunArgs};
use super::planetoid::Dataset;
use super::resume::ResumeArgs;

/// The flags of the node-classification examples (`gat_cora`, `gcn_cora`).
#[derive(Debug, Parser)]
pub struct NodeArgs {
    /// The Planetoid dataset.
    #[arg(long, value_enum, default_value_t = Dataset::Cora)]
    pub dataset: Dataset,
    /// The backend to train on.
    #[arg(long, value_enum, default_value_t = Backend::Flex)]
    pub backend: Backend,
    /// Epochs per seed at most.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub epochs: u64,
    /// Seeds to train, 0..N.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds: u64,
    /// Early-stopping patience (see the example's doc).
    #[arg(long)]
    pub patience: usize,
    /// A directory holding the raw files (`ind.<name>.*`, directly or under `planetoid/raw/`);
    /// Cora and CiteSeer are embedded, PubMed is downloaded into `datasets/cache/planetoid`.
    #[arg(long, env = burn_gnn_data::DATA_DIR_ENV)]
    pub data_dir: Option<PathBuf>,
    /// Where the run writes; a checkpoint to evaluate.
    #[command(flatten)]
    pub run: RunArgs,
    /// Dense input features instead of the sparse first layer.
    #[arg(long)]
    pub dense: bool,
    /// `--resume` and how often it saves.
    #[command(flatten)]
    pub resume: ResumeArgs,
}

impl NodeArgs {
    /// Parses the command line of `example`, whose `--epochs` and `--patience` default to
    /// `epochs` and `patience`; exits 0 after `--help`, 2 on bad flags.
    pub fn parse_for(
        example: &'static str,
        about: &'static str,
        epochs: &'static str,
        patience: &'static str,
    ) -> Self {
        parse_with_defaults::<Self>(
            example,
            about,
            &[("epochs", epochs), ("patience", patience)],
        )
    }

    /// `--out`, or its default for `example`.
    pub fn out_dir(&self, example: &str) -> PathBuf {
        self.run
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("runs/{example}-{}", self.dataset.name())))
    }
}

/// Parses `T`'s flags as `example` with the given defaults set at run time, so that `--help`
/// shows them; exits as clap does (0 after `--help`, 2 on a usage error).
pub fn parse_with_defaults<T: CommandFactory + FromArgMatches>(
    example: &'static str,
    about: &'static str,
    defaults: &[(&'static str, &'static str)],
) -> T {
    let mut command = T::command().name(example).bin_name(example).about(about);
    for &(arg, value) in defaults {
        command = command.mut_arg(arg, move |a| a.default_value(value).required(false));
    }
    let matches = command.get_matches();
    T::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}
