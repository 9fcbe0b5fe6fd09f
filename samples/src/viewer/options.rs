//! The viewer's command line: the files, the image, and which of the window, `--stream`,
//! `--animate` and `--classify` runs.

use std::path::PathBuf;

use super::Placement;

/// The viewer's usage line, printed with any command-line error (and for `--help`).
pub const USAGE: &str = "usage: viewer SCENE.gltf|SCENE.glb [MORE.gltf|MORE.glb ...] [--as-is] [--out IMAGE.png] \
                     [--size WxH] [--classify] [--shadows] [--stream] [--window [--hud] [--frames N] [--screenshot IMAGE.png]] \
                     [--animate [CLIP] [--frames N] [--png-every K] [--truth]]\n\
                     several files stand side by side along +x by their bounds (--as-is: each at its own \
                     origin); a bad one is named, the others drawn, and the exit code is 1";

/// What the command line asked for.
pub struct Options {
    /// The glTF files, in the order given.
    pub scenes: Vec<PathBuf>,
    /// Side by side, or each at its own origin (`--as-is`).
    pub placement: Placement,
    /// The PNG written (`--out`).
    pub out: PathBuf,
    /// The image's width (`--size`).
    pub width: u32,
    /// The image's height (`--size`).
    pub height: u32,
    /// `--classify`: meshlet culling and the verdict and material images.
    pub classify: bool,
    /// `--window`: a window instead of the PNG.
    pub window: bool,
    /// `--frames N`: the window closes, or the animation ends, after N frames.
    pub frames: Option<u64>,
    /// `--screenshot PATH`: the window's last frame.
    pub screenshot: Option<PathBuf>,
    /// `--shadows`: a sun casting shadows from every mesh.
    pub shadows: bool,
    /// `--hud`: the window's debug overlay from the start.
    pub hud: bool,
    /// `--stream`: the files load while frames run.
    pub stream: bool,
    /// `--animate`: the clip asked for (`Some(None)`: each skin's first).
    pub animate: Option<Option<String>>,
    /// `--png-every K`: every K-th animated frame written.
    pub png_every: Option<u64>,
    /// `--truth`: every animated frame's culled image compared with the unculled one.
    pub truth: bool,
}

/// Frames `--animate` draws headless without `--frames`.
pub(super) const ANIMATE_FRAMES: u64 = 60;
/// The animation's time step, seconds a frame.
pub(super) const ANIMATE_DELTA: f32 = 1.0 / 30.0;

impl Options {
    /// Reads the command line's `arguments` (the program's name left out). `Err` holds what
    /// is wrong, or nothing for `--help`.
    pub fn parse(arguments: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut scenes = Vec::new();
        let mut placement = Placement::SideBySide;
        let mut out = PathBuf::from("viewer.png");
        let (mut width, mut height) = (1280, 720);
        let mut classify = false;
        let (mut window, mut frames, mut screenshot) = (false, None, None);
        let (mut shadows, mut hud, mut stream) = (false, false, false);
        let (mut animate, mut png_every, mut truth) = (None, None, false);
        let mut arguments = arguments.peekable();
        while let Some(argument) = arguments.next() {
            match argument.as_str() {
                "--out" => out = PathBuf::from(arguments.next().ok_or("--out needs a path")?),
                "--size" => {
                    let size = arguments.next().ok_or("--size needs WxH")?;
                    let parsed = size.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
                    match parsed {
                        Some((w, h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => {
                            (width, height) = (w, h)
                        }
                        _ => return Err(format!("--size: '{size}' is not WxH with sides from 1 to 16384")),
                    }
                }
                "--as-is" => placement = Placement::AsIs,
                "--classify" => classify = true,
                "--window" => window = true,
                "--shadows" => shadows = true,
                "--hud" => hud = true,
                "--stream" => stream = true,
                "--truth" => truth = true,
                "--animate" => {
                    // The clip is the next argument unless it is an option or a file.
                    let next = arguments
                        .peek()
                        .filter(|next| !next.starts_with("--") && !next.ends_with(".gltf") && !next.ends_with(".glb"));
                    let clip = next.cloned();
                    if clip.is_some() {
                        arguments.next();
                    }
                    animate = Some(clip);
                }
                "--png-every" => {
                    let count = arguments.next().ok_or("--png-every needs a count")?;
                    match count.parse::<u64>() {
                        Ok(count) if count > 0 => png_every = Some(count),
                        _ => return Err(format!("--png-every: '{count}' is not a positive count")),
                    }
                }
                "--frames" => {
                    let count = arguments.next().ok_or("--frames needs a count")?;
                    match count.parse::<u64>() {
                        Ok(count) if count > 0 => frames = Some(count),
                        _ => return Err(format!("--frames: '{count}' is not a positive count")),
                    }
                }
                "--screenshot" => {
                    screenshot = Some(PathBuf::from(arguments.next().ok_or("--screenshot needs a path")?))
                }
                "--help" | "-h" => return Err(String::new()),
                flag if flag.starts_with("--") => return Err(format!("unknown option '{flag}'")),
                path => scenes.push(PathBuf::from(path)),
            }
        }
        if scenes.is_empty() {
            return Err(String::from("no scene file given"));
        }
        if (screenshot.is_some() || hud) && !window {
            return Err(String::from("--screenshot and --hud are for --window"));
        }
        if frames.is_some() && !window && animate.is_none() {
            return Err(String::from("--frames is for --window or --animate"));
        }
        if (png_every.is_some() || truth) && animate.is_none() {
            return Err(String::from("--png-every and --truth are for --animate"));
        }
        if animate.is_some() && (stream || classify) {
            return Err(String::from("--animate draws the preloaded scene: leave out --stream and --classify"));
        }
        if screenshot.is_some() && frames.is_none() {
            return Err(String::from("--screenshot needs --frames N (the last frame is the screenshot)"));
        }
        if stream && classify {
            return Err(String::from("--classify draws the preloaded scene: leave out --stream"));
        }
        Ok(Options {
            scenes,
            placement,
            out,
            width,
            height,
            classify,
            window,
            frames,
            screenshot,
            shadows,
            hud,
            stream,
            animate,
            png_every,
            truth,
        })
    }
}
