//! Runnable programs of the engine: the demo and the custom render-graph pass example.
#![warn(missing_docs)]

pub mod city;
pub mod mesh_render;
