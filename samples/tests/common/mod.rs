//! Helpers shared by the samples' integration tests.

use std::path::{Path, PathBuf};

/// A fresh, empty folder `{suite}-test-{name}-{pid}` under the system's temporary folder.
pub fn temporary(suite: &str, name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("{suite}-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    folder
}

/// The width, height and RGBA pixels of the PNG at `path`.
pub fn read_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the PNG exists")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut pixels).expect("one frame");
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}
