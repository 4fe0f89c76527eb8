//! Placeholder: the binding is being written.
