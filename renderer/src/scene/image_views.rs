//! The image-target views of a frame: every camera rendering into a named image
//! ([`ecs::CameraTarget::Image`]) gets its own run of the host's draw commands (its own
//! answer, [`culling::Visibility::for_view`]) and its own view-projection, listed in the
//! graph's [`ImageViews`] parameter; the image-view passes
//! ([`ImageViewPass`](crate::ImageViewPass)) draw each into its image, which later passes of
//! the same frame sample by its name.

use std::sync::Arc;

/// One view drawn into a named image.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageView {
    /// The image's name (the graph resource the view's passes write).
    pub name: Arc<str>,
    /// World to clip space of the view's camera (column-major, reversed-Z).
    pub view_projection: [[f32; 4]; 4],
    /// The run of the host list it draws: its index in
    /// [`GpuScene::view_lists`](crate::GpuScene::view_lists).
    pub list: u32,
}

/// A graph parameter: this frame's image-target views. A view's passes look their view up
/// by the image's name; a name missing this frame (its camera gone or refused, its list
/// without room) draws nothing into a cleared image.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImageViews {
    views: Vec<ImageView>,
}

impl ImageViews {
    /// The views, in render order.
    #[inline]
    pub fn views(&self) -> &[ImageView] {
        &self.views
    }

    /// The view drawn into the image `name`, if the frame has one.
    pub fn get(&self, name: &str) -> Option<&ImageView> {
        self.views.iter().find(|view| &*view.name == name)
    }

    /// Forgets the views, keeping the room.
    pub fn clear(&mut self) {
        self.views.clear();
    }

    /// Appends a view.
    pub fn push(&mut self, view: ImageView) {
        self.views.push(view);
    }
}
