//! Whether this machine can run the wgpu backend, asked before a device is made, so that a
//! missing driver is a message naming what to install instead of a shader-compilation panic.

use std::sync::OnceLock;

use cubecl::wgpu::wgpu;

/// The environment variable that turns skipped wgpu test targets into failures (`1`), for CI
/// machines that must have a driver.
pub const REQUIRE_WGPU_ENV: &str = "BURN_GNN_REQUIRE_WGPU";

/// This machine has no adapter the wgpu backend can use.
#[derive(Clone, Debug, thiserror::Error)]
#[error(
    "the wgpu backend needs a Vulkan adapter with 64-bit shader integers and {found}; without a \
     GPU, install Mesa's software driver (`apt-get install mesa-vulkan-drivers libvulkan1` on \
     Debian and Ubuntu) and pin it with \
     VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json, or use a CPU backend"
)]
pub struct WgpuUnavailable {
    /// What the probe found instead.
    pub found: String,
}

/// The name of the Vulkan adapter the wgpu backend will use, or why there is none. An
/// OpenGL-only adapter counts as none: Burn's kernels need 64-bit integers in shaders, which
/// WebGPU's OpenGL path lacks. Probed once per process.
///
/// # Errors
/// [`WgpuUnavailable`], saying what was found and what to install.
pub fn check_wgpu() -> Result<String, WgpuUnavailable> {
    static PROBE: OnceLock<Result<String, WgpuUnavailable>> = OnceLock::new();
    PROBE.get_or_init(probe).clone()
}

fn probe() -> Result<String, WgpuUnavailable> {
    if !wgpu::Instance::enabled_backend_features().contains(wgpu::Backends::VULKAN) {
        return Err(WgpuUnavailable {
            found: "this build has no Vulkan support".into(),
        });
    }
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::VULKAN,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = cubecl::future::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN));
    let found = match adapters
        .iter()
        .find(|a| a.features().contains(wgpu::Features::SHADER_INT64))
    {
        Some(a) => Ok(a.get_info().name),
        None if adapters.is_empty() => Err(WgpuUnavailable {
            found: "found no Vulkan adapter".into(),
        }),
        None => Err(WgpuUnavailable {
            found: "found only Vulkan adapters without 64-bit shader integers".into(),
        }),
    };
    // The Vulkan loader crashes when instances are destroyed while another thread creates one
    // (CubeCL keeps its own for the same reason): keep this one for the life of the process.
    std::mem::forget(adapters);
    std::mem::forget(instance);
    found
}

/// For the test suites: whether to add the wgpu targets. Without an adapter it prints one line
/// per test binary (past the test harness's capture) and returns `false`, or panics when
/// [`REQUIRE_WGPU_ENV`] is `1`.
#[doc(hidden)]
pub fn wgpu_test_targets() -> bool {
    static DECIDED: OnceLock<bool> = OnceLock::new();
    let required = std::env::var(REQUIRE_WGPU_ENV).as_deref() == Ok("1");
    match check_wgpu() {
        Ok(_) => true,
        Err(e) if required => panic!("{e} ({REQUIRE_WGPU_ENV}=1 requires it)"),
        Err(e) => *DECIDED.get_or_init(|| {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "skipping the wgpu test targets: {e}");
            false
        }),
    }
}
