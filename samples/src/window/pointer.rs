//! The window's mouse: Alt + left click picks the entity under the cursor (selected in the
//! overlay once the GPU has drawn the pick), a left drag without Alt looks around.
//!
//! [`Pointer::on_event`] turns winit's window events into what the window does with them
//! ([`PointerAction`]); [`request_pick`] and [`poll_pick`] are the window's picking, a
//! request that never waits and its answer on a later frame. Kept apart from the event loop
//! (which needs a display) so a test can feed constructed events through the same path.

use glam::Vec2;
use overlay::{Overlay, Picking};
use runtime::App;
use winit::dpi::PhysicalPosition;
use winit::event::{ElementState, MouseButton, WindowEvent};

/// What a window event asks of the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PointerAction {
    /// Nothing (or only the pointer's own state changed).
    None,
    /// Pick the entity at this pixel of the window (Alt + left click).
    Pick {
        /// Column, from the left.
        x: u32,
        /// Row, from the top.
        y: u32,
    },
    /// Turn the fly camera by this mouse motion, pixels (a left drag).
    Look(Vec2),
}

/// The pointer's state between events: Alt held, the left button held for looking, where
/// the cursor is.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pointer {
    alt: bool,
    looking: bool,
    cursor: Option<PhysicalPosition<f64>>,
}

impl Pointer {
    /// Follows `event` and says what it asks (see [`PointerAction`]).
    pub fn on_event(&mut self, event: &WindowEvent) -> PointerAction {
        match event {
            WindowEvent::ModifiersChanged(modifiers) => self.alt = modifiers.state().alt_key(),
            WindowEvent::MouseInput { button: MouseButton::Left, state: ElementState::Pressed, .. } if self.alt => {
                // A cursor outside the window (negative) picks nothing: picking says why.
                if let Some(cursor) = self.cursor {
                    return PointerAction::Pick { x: cursor.x.max(0.0) as u32, y: cursor.y.max(0.0) as u32 };
                }
            }
            WindowEvent::MouseInput { button: MouseButton::Left, state, .. } => {
                self.looking = *state == ElementState::Pressed;
            }
            WindowEvent::CursorMoved { position, .. } => {
                let last = self.cursor.replace(*position);
                if let (true, Some(last)) = (self.looking, last) {
                    return PointerAction::Look(Vec2::new((position.x - last.x) as f32, (position.y - last.y) as f32));
                }
            }
            _ => {}
        }
        PointerAction::None
    }

    /// Stops looking (the overlay took the button's release).
    pub fn stop_looking(&mut self) {
        self.looking = false;
    }
}

/// Asks `picking` which entity of `app`'s last simulated frame is at window pixel (`x`, `y`)
/// (in the view under it, for a split-screen frame), without waiting; [`poll_pick`] on a
/// later frame selects it. A click while a pick is in flight, or outside the view, is logged
/// and dropped.
pub fn request_pick(picking: &mut Picking, app: &App, x: u32, y: u32) {
    // A pipelined window shows the frame before the last simulated one, which differs only
    // while things move.
    let asked = match overlay::window_view_at(app, x, y) {
        Some(view) => picking.request_view(app, view, x, y),
        None => picking.request(app, x, y),
    };
    if let Err(miss) = asked {
        log::info!("pick: {miss}");
    }
}

/// Selects the entity of the pick in flight once the GPU has drawn it (in `overlay`, opened
/// to show it), or logs why there is none (the selection cleared); does nothing while it is
/// drawn. True when a pick was answered.
pub fn poll_pick(picking: &mut Picking, overlay: &mut Overlay) -> bool {
    match picking.poll() {
        None => return false,
        Some(Ok(entity)) => {
            overlay.select(Some(entity));
            overlay.set_open(true);
        }
        Some(Err(miss)) => {
            log::info!("pick: {miss}");
            overlay.select(None);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use winit::event::{DeviceId, Modifiers};
    use winit::keyboard::ModifiersState;

    fn moved(x: f64, y: f64) -> WindowEvent {
        WindowEvent::CursorMoved { device_id: DeviceId::dummy(), position: PhysicalPosition::new(x, y) }
    }

    fn left(state: ElementState) -> WindowEvent {
        WindowEvent::MouseInput { device_id: DeviceId::dummy(), state, button: MouseButton::Left }
    }

    #[test]
    fn alt_click_picks_at_the_cursor_and_a_drag_looks() {
        let mut pointer = Pointer::default();
        assert_eq!(pointer.on_event(&moved(10.0, 20.0)), PointerAction::None);
        assert_eq!(pointer.on_event(&left(ElementState::Pressed)), PointerAction::None, "no Alt: looking");
        assert_eq!(pointer.on_event(&moved(13.0, 18.0)), PointerAction::Look(Vec2::new(3.0, -2.0)));
        assert_eq!(pointer.on_event(&left(ElementState::Released)), PointerAction::None);
        assert_eq!(pointer.on_event(&moved(40.0, 30.0)), PointerAction::None, "released: no look");
        pointer.on_event(&WindowEvent::ModifiersChanged(Modifiers::from(ModifiersState::ALT)));
        assert_eq!(pointer.on_event(&left(ElementState::Pressed)), PointerAction::Pick { x: 40, y: 30 });
        assert_eq!(pointer.on_event(&moved(41.0, 30.0)), PointerAction::None, "a pick does not start a look");
        pointer.on_event(&WindowEvent::ModifiersChanged(Modifiers::from(ModifiersState::empty())));
        assert_eq!(pointer.on_event(&left(ElementState::Pressed)), PointerAction::None);
    }
}
