//! The city in a window (`city --window`): a winit window with a Vulkan surface, the Render
//! stage presenting every frame through the render graph into the swapchain
//! ([`target::SwapchainTarget`]), and a fly camera moved in the Input stage ([`fly`]).

pub mod fly;
pub mod run;
pub mod target;
