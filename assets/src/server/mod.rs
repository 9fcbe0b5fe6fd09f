//! Assets at run time: generation-checked handles ([`Handle`], [`Assets`]) and the
//! [`AssetServer`], which loads glTF files on loader threads while the game runs.
//!
//! [`AssetServer::load`] returns a handle at once, in [`LoadState::Loading`]; a loader
//! thread reads, parses, decodes and meshopt-processes the file ([`load_gltf`]; the
//! processing's jobs run on the job system the server was given, which any number of outside
//! threads may call into), and the handle turns [`LoadState::Ready`] (the [`GltfScene`] is
//! then [`AssetServer::get`]) or [`LoadState::Failed`] with a [`LoadError`] naming the file
//! and the problem. Nothing of a load runs on the frame: a game polls the state each frame
//! (a lock and a look-up) and goes on whatever a file does, a panic in the importer
//! included (it becomes a `Failed` naming the panic).
//!
//! Removing a handle ([`AssetServer::remove`]) while its file loads drops the result when it
//! arrives; the handle is refused from then on ([`StaleHandle`]).

mod handle;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use handle::{AssetChange, Assets, Handle, StaleHandle, StaleReason};

use crate::gltf_import::{load_gltf, GltfScene, ImportError};
use crate::process::ProcessOptions;
use runtime::JobSystem;

/// Where a load stands.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadState {
    /// A loader thread has it queued or is reading and processing it.
    Loading,
    /// Loaded: [`AssetServer::get`] gives the scene.
    Ready,
    /// The file could not be loaded; the error names it and why.
    Failed(LoadError),
}

/// Why a file could not be loaded, naming the file. `Display` gives one line naming the file
/// and the problem.
#[derive(Clone, Debug, PartialEq)]
pub enum LoadError {
    /// The importer refused the file (missing, unreadable, malformed, unsupported).
    Import {
        /// The file.
        path: PathBuf,
        /// The importer's error, naming where the problem is.
        error: ImportError,
    },
    /// The importer panicked on the file (a bug of the importer; the game goes on).
    Panicked {
        /// The file.
        path: PathBuf,
        /// The panic's message.
        message: String,
    },
}

impl LoadError {
    /// The file that failed.
    pub fn path(&self) -> &Path {
        match self {
            LoadError::Import { path, .. } | LoadError::Panicked { path, .. } => path,
        }
    }
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Import { path, error } => write!(formatter, "loading {} failed: {error}", path.display()),
            LoadError::Panicked { path, message } => {
                write!(formatter, "loading {} failed: the importer panicked: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Import { error, .. } => Some(error),
            LoadError::Panicked { .. } => None,
        }
    }
}

/// A load's slot: its file and where its load stands.
#[derive(Debug)]
struct Slot {
    path: PathBuf,
    result: Option<Result<Arc<GltfScene>, LoadError>>,
}

/// What the server and its loader threads share.
struct Shared {
    slots: Mutex<Assets<Slot>>,
    /// Signalled whenever a load finishes.
    finished: Condvar,
    /// Set when the server is dropped: the loaders skip what is still queued.
    closing: AtomicBool,
}

impl Shared {
    fn slots(&self) -> MutexGuard<'_, Assets<Slot>> {
        // A loader thread never panics while holding the lock (the import runs outside it),
        // so a poisoned store still holds consistent data.
        self.slots.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One file for a loader thread.
struct Request {
    handle: Handle<Slot>,
    path: PathBuf,
}

/// How an [`AssetServer`] loads.
#[derive(Clone)]
pub struct ServerOptions {
    /// Loader threads (at least 1): files load side by side up to this many.
    pub loader_threads: usize,
    /// How each mesh is processed (the default derives each mesh's occluder on the loader
    /// thread: [`ProcessOptions::occluders`]).
    pub process: ProcessOptions,
    /// The job system the processing's jobs run on; `None`: [`JobSystem::global`].
    pub jobs: Option<Arc<JobSystem>>,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            loader_threads: 2,
            process: ProcessOptions { occluders: true, ..ProcessOptions::default() },
            jobs: None,
        }
    }
}

/// Loads glTF files on loader threads; see the [module docs](self). Dropping the server
/// waits for the files its threads are loading then, and drops the queued ones.
///
/// ```no_run
/// use assets::{AssetServer, LoadState};
/// let server = AssetServer::new(Default::default());
/// let district = server.load("district_3.glb");
/// // Each frame:
/// match server.state(district)? {
///     LoadState::Loading => {}
///     LoadState::Ready => {
///         let scene = server.get(district)?.expect("ready");
///         println!("{} meshes", scene.meshes.len());
///     }
///     LoadState::Failed(error) => eprintln!("{error}"),
/// }
/// # Ok::<(), assets::StaleHandle>(())
/// ```
pub struct AssetServer {
    shared: Arc<Shared>,
    /// `None` once the server is dropped: the loader threads then finish and exit.
    requests: Option<mpsc::Sender<Request>>,
    threads: Vec<JoinHandle<()>>,
}

/// A handle to a file the [`AssetServer`] loads: its [`GltfScene`] once ready.
pub type SceneHandle = Handle<GltfScene>;

impl AssetServer {
    /// Starts `options.loader_threads` loader threads.
    ///
    /// # Panics
    /// If the operating system refuses to start a thread.
    pub fn new(options: ServerOptions) -> AssetServer {
        let shared = Arc::new(Shared {
            slots: Mutex::new(Assets::new()),
            finished: Condvar::new(),
            closing: AtomicBool::new(false),
        });
        let (sender, receiver) = mpsc::channel::<Request>();
        let receiver = Arc::new(Mutex::new(receiver));
        let threads = (0..options.loader_threads.max(1))
            .map(|index| {
                let (shared, receiver, options) = (Arc::clone(&shared), Arc::clone(&receiver), options.clone());
                std::thread::Builder::new()
                    .name(format!("asset loader {index}"))
                    .spawn(move || loader_loop(&shared, &receiver, &options))
                    .expect("the operating system refused to start an asset loader thread")
            })
            .collect();
        AssetServer { shared, requests: Some(sender), threads }
    }

    /// Queues `path` for loading and returns its handle, in [`LoadState::Loading`]; never
    /// blocks on the file.
    pub fn load(&self, path: impl AsRef<Path>) -> SceneHandle {
        let path = path.as_ref().to_path_buf();
        let handle = self.shared.slots().add(Slot { path: path.clone(), result: None });
        let sender = self.requests.as_ref().expect("the server is alive");
        // The loader threads live as long as the server, so the channel is open.
        sender.send(Request { handle, path }).expect("asset loader threads are running");
        retype(handle)
    }

    /// Where the load of `handle` stands, or why the handle names no load.
    pub fn state(&self, handle: SceneHandle) -> Result<LoadState, StaleHandle> {
        Ok(match &self.shared.slots().get(retype(handle)).map_err(rename)?.result {
            None => LoadState::Loading,
            Some(Ok(_)) => LoadState::Ready,
            Some(Err(error)) => LoadState::Failed(error.clone()),
        })
    }

    /// The loaded scene of `handle` once it is ready (`None` while loading or failed).
    pub fn get(&self, handle: SceneHandle) -> Result<Option<Arc<GltfScene>>, StaleHandle> {
        Ok(match &self.shared.slots().get(retype(handle)).map_err(rename)?.result {
            Some(Ok(scene)) => Some(Arc::clone(scene)),
            None | Some(Err(_)) => None,
        })
    }

    /// The file `handle` loads or loaded.
    pub fn path(&self, handle: SceneHandle) -> Result<PathBuf, StaleHandle> {
        Ok(self.shared.slots().get(retype(handle)).map_err(rename)?.path.clone())
    }

    /// Forgets `handle`: a load still running is finished and dropped; the handle is refused
    /// from now on. Scenes already handed out by [`AssetServer::get`] stay with their holders.
    pub fn remove(&self, handle: SceneHandle) -> Result<(), StaleHandle> {
        self.shared.slots().remove(retype(handle)).map(drop).map_err(rename)
    }

    /// Loads queued or running.
    pub fn loading(&self) -> usize {
        self.shared.slots().iter().filter(|(_, slot)| slot.result.is_none()).count()
    }

    /// Waits until `handle` is no longer loading or `timeout` has passed, and returns its
    /// state (for tools and tests; a game polls [`AssetServer::state`] instead).
    pub fn wait(&self, handle: SceneHandle, timeout: Duration) -> Result<LoadState, StaleHandle> {
        let deadline = Instant::now() + timeout;
        let mut slots = self.shared.slots();
        loop {
            if slots.get(retype(handle)).map_err(rename)?.result.is_some() {
                drop(slots);
                return self.state(handle);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(LoadState::Loading);
            }
            slots = self.shared.finished.wait_timeout(slots, left).unwrap_or_else(|error| error.into_inner()).0;
        }
    }
}

impl Drop for AssetServer {
    fn drop(&mut self) {
        // Relaxed: the flag orders nothing else; a loader that misses it loads one more file.
        self.shared.closing.store(true, Ordering::Relaxed);
        // Closing the channel ends each loader's loop once its current file is done.
        self.requests = None;
        for thread in self.threads.drain(..) {
            if thread.join().is_err() {
                log::error!("an asset loader thread panicked outside a load");
            }
        }
    }
}

/// A loader thread: takes requests until the server is dropped.
fn loader_loop(shared: &Shared, receiver: &Mutex<mpsc::Receiver<Request>>, options: &ServerOptions) {
    loop {
        let request = {
            let receiver = receiver.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            receiver.recv()
        };
        let Ok(Request { handle, path }) = request else { return };
        // Relaxed: see `AssetServer::drop`.
        if shared.closing.load(Ordering::Relaxed) {
            return;
        }
        if !shared.slots().contains(handle) {
            continue;
        }
        runtime::profile_zone!("asset load");
        let result = load_file(&path, options).map(Arc::new);
        if let Err(error) = &result {
            log::warn!("{error}");
        }
        {
            let mut slots = shared.slots();
            // A handle removed meanwhile drops the result.
            if slots.contains(handle) {
                // Not a change a consumer must see: loading is not an asset of its own.
                slots.get_mut(handle).expect("checked live").result = Some(result);
            }
        }
        shared.finished.notify_all();
    }
}

/// Loads one file on `options`'s job system; a panic of the importer becomes an error.
fn load_file(path: &Path, options: &ServerOptions) -> Result<GltfScene, LoadError> {
    let load = || load_gltf(path, &options.process);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &options.jobs {
        Some(jobs) => jobs.install(load),
        None => load(),
    }));
    let path = path.to_path_buf();
    match result {
        Ok(Ok(scene)) => Ok(scene),
        Ok(Err(error)) => Err(LoadError::Import { path, error }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| String::from("a panic without a message"));
            Err(LoadError::Panicked { path, message })
        }
    }
}

/// The server keeps each load's slot in a store of [`Slot`]s; the handle a game holds names
/// the scene it will hold.
fn retype<A, B>(handle: Handle<A>) -> Handle<B> {
    Handle::from_parts(handle.slot(), handle.generation())
}

/// A refusal of the server's slots, named as the game's handle type.
fn rename(stale: StaleHandle) -> StaleHandle {
    StaleHandle { kind: "GltfScene", ..stale }
}
