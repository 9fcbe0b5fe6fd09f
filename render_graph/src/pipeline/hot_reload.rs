//! Shader hot reload for the passes of a game in development: a [`HotPipeline`] watches the
//! GLSL sources of its pipeline and, when one changes, recompiles them with `glslc` and builds
//! the new pipeline on a thread of its own, so no frame waits. The pass takes the newest
//! pipeline at the start of its `execute` (a frame boundary: nothing of this frame is
//! recorded with the old one yet); the old one is kept until the frames that used it have
//! finished. A source that does not compile, or a pipeline that does not match its shader,
//! is logged and the old pipeline stays.
//!
//! Debug builds only, and only when asked: `ENGINE_HOT_RELOAD=1`, or
//! [`HotPipeline::watch`]. In release builds the pipeline is the one it was made with.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use super::binding::BindingKind;
use super::compute::ComputePipeline;
use crate::device::GpuDevice;
use crate::error::Result;

/// Frames a replaced pipeline is kept for after the frame that swapped it: more than the
/// frames in flight, so the frames that used it have finished when it is dropped.
pub const HOT_RETIRE_FRAMES: u64 = 3;

/// How often the watcher looks at the sources' modification times.
const POLL: Duration = Duration::from_millis(100);

/// The environment variable that turns hot reload on for every [`HotPipeline`] (debug
/// builds).
pub const HOT_RELOAD_ENV: &str = "ENGINE_HOT_RELOAD";

/// One GLSL source of a hot pipeline: its file and its stage as `glslc -fshader-stage` names
/// it (`comp`, `vert`, `frag`).
#[derive(Clone, Debug)]
pub struct HotSource {
    /// The GLSL file.
    pub path: PathBuf,
    /// The stage (`comp`, `vert`, `frag`).
    pub stage: &'static str,
}

/// Builds a pipeline from the SPIR-V words of each source, in the sources' order.
type Build<P> = dyn Fn(&Arc<GpuDevice>, &[Vec<u32>]) -> Result<P> + Send + Sync;

/// What the watcher sends: a pipeline built from changed sources, or why there is none.
type Rebuilt<P> = std::result::Result<P, String>;

/// A pipeline that follows its GLSL sources while the game runs (see the module docs): in
/// `execute`, `let pipeline = self.pipeline.current(context.frame_index());` and bind it as
/// usual. Without hot reload it is the pipeline it was made with, at no cost.
pub struct HotPipeline<P: Send + 'static> {
    name: String,
    current: P,
    /// Replaced pipelines, each with the frame that replaced it.
    retired: Vec<(u64, P)>,
    watcher: Option<Watcher<P>>,
    /// How many times the pipeline was replaced.
    reloads: u64,
    /// The last reload's error, if the last try failed.
    last_error: Option<String>,
}

/// The thread watching the sources, and what it sends.
struct Watcher<P> {
    rebuilt: Receiver<Rebuilt<P>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl<P> Drop for Watcher<P> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl HotPipeline<ComputePipeline> {
    /// A compute pipeline built from `spirv` (the compiled `glsl`, e.g. one of `shaders`'s),
    /// which follows `glsl` when hot reload is on (`ENGINE_HOT_RELOAD=1` in a debug build).
    /// `include_dirs` are given to `glslc -I` ([`crate::Registry`] users include the engine's
    /// headers: `shaders::ENGINE_INCLUDE_DIR`).
    pub fn compute(
        device: &Arc<GpuDevice>,
        name: &str,
        glsl: impl Into<PathBuf>,
        spirv: &[u32],
        bindings: &[BindingKind],
        push_constant_bytes: u32,
        include_dirs: &[PathBuf],
    ) -> Result<Self> {
        let bindings = bindings.to_vec();
        let pipeline_name = name.to_owned();
        let build = move |device: &Arc<GpuDevice>, words: &[Vec<u32>]| {
            ComputePipeline::new(device, &pipeline_name, &words[0], &bindings, push_constant_bytes)
        };
        let initial = build(device, &[spirv.to_vec()])?;
        let sources = vec![HotSource { path: glsl.into(), stage: "comp" }];
        let mut pipeline = HotPipeline::with_builder(name, initial);
        if hot_reload_asked() {
            pipeline.watch(device, sources, include_dirs, build);
        }
        Ok(pipeline)
    }
}

impl<P: Send + 'static> HotPipeline<P> {
    /// A pipeline that does not follow any source until [`HotPipeline::watch`] is called.
    pub fn with_builder(name: &str, initial: P) -> Self {
        HotPipeline {
            name: name.to_owned(),
            current: initial,
            retired: Vec::new(),
            watcher: None,
            reloads: 0,
            last_error: None,
        }
    }

    /// Starts following `sources` (debug builds; nothing in a release build): a change of any
    /// recompiles all of them with `glslc` (with `include_dirs`) and builds the pipeline with
    /// `build` on the watcher's thread. Replaces an earlier watch.
    pub fn watch(
        &mut self,
        device: &Arc<GpuDevice>,
        sources: Vec<HotSource>,
        include_dirs: &[PathBuf],
        build: impl Fn(&Arc<GpuDevice>, &[Vec<u32>]) -> Result<P> + Send + Sync + 'static,
    ) {
        if !cfg!(debug_assertions) {
            return;
        }
        let (sender, rebuilt) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let (device, include_dirs, watching) = (Arc::clone(device), include_dirs.to_vec(), Arc::clone(&stop));
        let build: Box<Build<P>> = Box::new(build);
        let name = self.name.clone();
        let thread = std::thread::Builder::new().name(format!("hot reload: {name}")).spawn(move || {
            let mut seen = modified(&sources);
            while !watching.load(Ordering::Relaxed) {
                std::thread::sleep(POLL);
                let now = modified(&sources);
                if now == seen {
                    continue;
                }
                seen = now;
                let rebuilt = compile_all(&sources, &include_dirs)
                    .and_then(|words| build(&device, &words).map_err(|error| error.to_string()));
                if sender.send(rebuilt).is_err() {
                    return;
                }
            }
        });
        match thread {
            Ok(thread) => self.watcher = Some(Watcher { rebuilt, stop, thread: Some(thread) }),
            Err(error) => log::warn!("shader hot reload of `{}` is off: no watcher thread ({error})", self.name),
        }
    }

    /// The pipeline to record frame `frame_index` with (call it at the start of `execute`,
    /// with [`crate::ExecuteContext::frame_index`]): the newest one the watcher built, if any
    /// (a failed rebuild is logged and keeps the old one); replaced pipelines are dropped once
    /// the frames that used them have finished.
    pub fn current(&mut self, frame_index: u64) -> &P {
        self.retired.retain(|(replaced, _)| frame_index < replaced + HOT_RETIRE_FRAMES);
        let Some(watcher) = &self.watcher else { return &self.current };
        loop {
            match watcher.rebuilt.try_recv() {
                Ok(Ok(pipeline)) => {
                    let old = std::mem::replace(&mut self.current, pipeline);
                    self.retired.push((frame_index, old));
                    self.reloads += 1;
                    self.last_error = None;
                    log::info!("shader hot reload: pipeline `{}` rebuilt from its sources", self.name);
                }
                Ok(Err(error)) => {
                    log::error!("shader hot reload: pipeline `{}` keeps its last build: {error}", self.name);
                    self.last_error = Some(error);
                }
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return &self.current,
            }
        }
    }

    /// How many times the pipeline was replaced by a rebuild.
    pub fn reloads(&self) -> u64 {
        self.reloads
    }

    /// The error of the last rebuild, when it failed (the pipeline is then the one before).
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Whether the sources are watched.
    pub fn is_watching(&self) -> bool {
        self.watcher.is_some()
    }
}

/// Whether hot reload was asked for: a debug build with `ENGINE_HOT_RELOAD=1`.
pub fn hot_reload_asked() -> bool {
    cfg!(debug_assertions) && std::env::var(HOT_RELOAD_ENV).is_ok_and(|value| value == "1")
}

/// The modification time of each source (`None` for one that cannot be read).
fn modified(sources: &[HotSource]) -> Vec<Option<SystemTime>> {
    sources.iter().map(|source| std::fs::metadata(&source.path).and_then(|meta| meta.modified()).ok()).collect()
}

/// The SPIR-V words of every source, or the first compiler's message.
fn compile_all(sources: &[HotSource], include_dirs: &[PathBuf]) -> std::result::Result<Vec<Vec<u32>>, String> {
    sources.iter().map(|source| compile(&source.path, source.stage, include_dirs)).collect()
}

/// Runs `glslc` on `path` into a temporary file and reads the words back.
fn compile(path: &Path, stage: &str, include_dirs: &[PathBuf]) -> std::result::Result<Vec<u32>, String> {
    let output = std::env::temp_dir().join(format!(
        "hot-reload-{}-{}.spv",
        std::process::id(),
        path.file_name().and_then(|name| name.to_str()).unwrap_or("shader")
    ));
    let mut command = Command::new("glslc");
    command.arg(format!("-fshader-stage={stage}")).args(["--target-env=vulkan1.2", "-O"]);
    for dir in include_dirs {
        command.arg("-I").arg(dir);
    }
    let ran = command.arg("-o").arg(&output).arg(path).output();
    let ran = ran.map_err(|error| format!("glslc could not run ({error}); is it on the PATH?"))?;
    if !ran.status.success() {
        return Err(format!("{} does not compile:\n{}", path.display(), String::from_utf8_lossy(&ran.stderr).trim()));
    }
    let bytes = std::fs::read(&output).map_err(|error| format!("glslc's output is unreadable: {error}"))?;
    let _ = std::fs::remove_file(&output);
    if !bytes.len().is_multiple_of(4) || bytes.len() < 20 {
        return Err(format!("glslc wrote {} bytes, not SPIR-V words", bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]])).collect())
}
