//! The frame's parameters: typed values the host hands the graph before a frame (the camera,
//! settings) and passes read in `prepare` and `execute`
//! ([`RenderGraph::set_param`](crate::RenderGraph::set_param),
//! [`PrepareContext::param`](crate::PrepareContext::param),
//! [`ExecuteContext::param`](crate::ExecuteContext::param)).
//!
//! One value per type, found by its `TypeId` in a short list (a frame has a handful); setting
//! a type again replaces its value in place, so a steady frame allocates nothing.

use std::any::{type_name, Any, TypeId};

use crate::error::GraphError;

/// One parameter: its type and its value.
struct Param {
    id: TypeId,
    value: Box<dyn Any + Send>,
}

/// The parameters a graph holds, one value per type.
#[derive(Default)]
pub(crate) struct FrameParams {
    params: Vec<Param>,
}

impl FrameParams {
    /// Sets the value of type `T`, replacing the one there (in place: no allocation once
    /// the type has been set).
    pub(crate) fn set<T: Send + 'static>(&mut self, value: T) {
        match self.get_mut::<T>() {
            Some(slot) => *slot = value,
            None => self.params.push(Param { id: TypeId::of::<T>(), value: Box::new(value) }),
        }
    }

    /// The value of type `T`, if one was set.
    #[inline]
    pub(crate) fn get<T: 'static>(&self) -> Option<&T> {
        let id = TypeId::of::<T>();
        self.params.iter().find(|param| param.id == id).and_then(|param| param.value.downcast_ref())
    }

    /// The value of type `T` to change in place, if one was set.
    pub(crate) fn get_mut<T: 'static>(&mut self) -> Option<&mut T> {
        let id = TypeId::of::<T>();
        self.params.iter_mut().find(|param| param.id == id).and_then(|param| param.value.downcast_mut())
    }

    /// Removes the value of type `T` and returns it.
    pub(crate) fn remove<T: 'static>(&mut self) -> Option<T> {
        let id = TypeId::of::<T>();
        let index = self.params.iter().position(|param| param.id == id)?;
        self.params.swap_remove(index).value.downcast().ok().map(|value| *value)
    }

    /// The value of type `T`, or [`GraphError::MissingParam`] naming `pass` and the type.
    pub(crate) fn require<T: 'static>(&self, pass: &str) -> Result<&T, GraphError> {
        self.get().ok_or_else(|| GraphError::MissingParam { pass: pass.to_owned(), param: type_name::<T>() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Exposure(f32);

    #[test]
    fn a_value_per_type_replaced_in_place() {
        let mut params = FrameParams::default();
        assert_eq!(params.get::<Exposure>(), None);
        params.set(Exposure(1.0));
        params.set(7_u32);
        let first = params.get::<Exposure>().map(|value| value as *const Exposure);
        params.set(Exposure(2.0));
        assert_eq!(params.get::<Exposure>(), Some(&Exposure(2.0)));
        assert_eq!(params.get::<Exposure>().map(|value| value as *const Exposure), first, "replaced in place");
        assert_eq!(params.get::<u32>(), Some(&7));
        if let Some(value) = params.get_mut::<u32>() {
            *value += 1;
        }
        assert_eq!(params.remove::<u32>(), Some(8));
        assert_eq!(params.get::<u32>(), None);
    }

    #[test]
    fn a_missing_parameter_names_the_pass_and_the_type() {
        let params = FrameParams::default();
        let error = params.require::<Exposure>("tonemap").expect_err("nothing was set");
        assert_eq!(error.pass(), Some("tonemap"));
        let message = error.to_string();
        assert!(message.contains("tonemap") && message.contains("Exposure"), "{message}");
    }
}
