//! What every example's command line shares: the backend choice, where a run writes and the
//! checkpoint check, a count parser, and exiting with a message.

use std::path::PathBuf;

use burn::tensor::Device;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// A Burn backend to run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Burn's Flex CPU backend.
    Flex,
    /// Burn's NdArray CPU backend.
    Ndarray,
    /// wgpu (CubeCL) on a Vulkan adapter; needs `--features wgpu`.
    Wgpu,
}

impl Backend {
    /// The backend's device, or why it cannot run here (usage errors: exit status 2).
    #[allow(deprecated)] // Device::ndarray: deprecated in Burn 0.22, still supported.
    pub fn device(self) -> Result<Device, String> {
        Ok(match self {
            Backend::Flex => Device::flex(),
            Backend::Ndarray => Device::ndarray(),
            #[cfg(feature = "wgpu")]
            Backend::Wgpu => {
                burn_segment::check_wgpu().map_err(|e| e.to_string())?;
                Device::wgpu(burn::tensor::DeviceKind::DefaultDevice)
            }
            #[cfg(not(feature = "wgpu"))]
            Backend::Wgpu => return Err("build with `--features wgpu` for the wgpu backend".into()),
        })
    }

    /// The device, or exit with status 2 and the reason.
    pub fn device_or_exit(self) -> Device {
        self.device().unwrap_or_else(|e| exit_with(2, e))
    }
}

/// A clap value parser: an integer of at least `MIN`.
pub fn at_least<const MIN: usize>(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(v) if v >= MIN => Ok(v),
        Ok(v) => Err(format!("{v} is less than {MIN}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Prints `msg` and exits with status 1 (2 for usage errors).
pub fn exit_with(code: i32, msg: impl std::fmt::Display) -> ! {
    eprintln!("{msg}");
    std::process::exit(code)
}

/// Where a run writes, and the evaluation of a saved checkpoint (flattened into each
/// example's flags).
#[derive(Clone, Debug, clap::Args)]
pub struct RunArgs {
    /// Where metrics, curves and checkpoints go [default: runs/<example>-<settings>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only evaluate the checkpoint given with --checkpoint (same flags as its run), and check
    /// it against the summary.json written beside it.
    #[arg(long, requires = "checkpoint")]
    pub eval_only: bool,
    /// A checkpoint (`seed-<N>.bpk`) to evaluate; goes with --eval-only.
    #[arg(long, requires = "eval_only")]
    pub checkpoint: Option<PathBuf>,
}
