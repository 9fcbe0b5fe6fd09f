//! What the tests that ask for SIMD code ran on this CPU. A test that asks for AVX-512 or
//! AVX2 on a CPU without it passes on the fallback, silently; so each such test says what ran
//! (on standard error, shown with `--nocapture`), and the test `kernels_available` prints the
//! whole table (CI runs it first, so its log says which kernels the machine checked).

use std::sync::Mutex;

use super::Kernel;

/// Tests that have already reported, so that a property test's many cases report once.
static REPORTED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// Whether `test` reports for the first time.
fn first_report(test: &'static str) -> bool {
    let mut reported = REPORTED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let first = !reported.contains(&test);
    if first {
        reported.push(test);
    }
    first
}

/// Prints, once per `test`, which of the frustum kernels `asked` ran natively on this CPU and
/// which were skipped, why, and what ran in their place.
pub(crate) fn report(test: &'static str, asked: &[Kernel]) {
    if first_report(test) {
        let parts: Vec<String> = asked.iter().map(|kernel| describe(*kernel, "ran")).collect();
        eprintln!("kernels of {test}: {}", parts.join("; "));
    }
}

/// Prints, once per `test`, whether occlusion's AVX2 paths (projection, raster, box test),
/// which the test asks for with [`Kernel::Avx2`], ran or were skipped for the scalar ones.
pub(crate) fn report_occlusion(test: &'static str) {
    if first_report(test) {
        eprintln!("kernels of {test}: {}", occlusion_line());
    }
}

/// One frustum kernel: `native` (ran, runs), or skipped with the reason and the fallback.
fn describe(kernel: Kernel, native: &str) -> String {
    match kernel.missing_feature() {
        None => format!("{kernel:?} {native}"),
        Some(missing) => {
            format!("{kernel:?} SKIPPED (this CPU lacks {missing}; its fallback {:?} ran instead)", kernel.runs_as())
        }
    }
}

/// Occlusion's AVX2 paths: ran, or skipped.
fn occlusion_line() -> String {
    match Kernel::Avx2.missing_feature() {
        None => String::from("occlusion's AVX2 paths run"),
        Some(missing) => format!("occlusion's AVX2 paths SKIPPED (this CPU lacks {missing}; only the scalar ones ran)"),
    }
}

/// The whole table: every frustum kernel, run or skipped and why, what the engine picks here,
/// and occlusion's AVX2 paths.
pub(crate) fn table() -> Vec<String> {
    let mut lines: Vec<String> =
        Kernel::ALL.iter().map(|kernel| describe(*kernel, "runs natively on this CPU")).collect();
    let skipped = Kernel::ALL.iter().filter(|kernel| kernel.missing_feature().is_some()).count();
    lines.push(format!("{skipped} of {} frustum kernels skipped on this CPU", Kernel::ALL.len()));
    lines.push(format!(
        "Kernel::detect() picks {:?} (from the CPU, ENGINE_NO_SIMD and ENGINE_NO_AVX512)",
        Kernel::detect()
    ));
    lines.push(occlusion_line());
    lines
}
