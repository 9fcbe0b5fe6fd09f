//! The city in a window (`city --window`): a winit window with a Vulkan surface, the Render
//! stage presenting every frame through the render graph into the swapchain
//! ([`target::SwapchainTarget`]), a fly camera moved in the Input stage ([`fly`]), and
//! Alt + click picking and the mouse look ([`pointer`](mod@pointer)).

pub mod fly;
pub mod pointer;
pub mod run;
pub mod target;
