//! What can be wrong with animation data, one variant per kind of problem.

use std::fmt;

/// Why a skeleton, track or clip was refused. `Display` gives one line naming the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnimationError {
    /// A skeleton's joints are unusable.
    BadSkeleton {
        /// The skeleton's name.
        skeleton: String,
        /// The first joint found wrong.
        joint: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// A track or a clip's list of tracks is unusable.
    BadTrack(&'static str),
    /// A clip was asked to play on a skeleton it was not made for.
    WrongSkeleton {
        /// The clip's name.
        clip: String,
        /// The skeleton it was made for.
        made_for: String,
        /// The skeleton it was asked to play on.
        skeleton: String,
    },
}

impl fmt::Display for AnimationError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnimationError::BadSkeleton { skeleton, joint, reason } => {
                write!(formatter, "skeleton '{skeleton}' joint {joint}: {reason}")
            }
            AnimationError::BadTrack(reason) => write!(formatter, "bad animation track: {reason}"),
            AnimationError::WrongSkeleton { clip, made_for, skeleton } => {
                write!(formatter, "clip '{clip}' was made for skeleton '{made_for}', not '{skeleton}'")
            }
        }
    }
}

impl std::error::Error for AnimationError {}
