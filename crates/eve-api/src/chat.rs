//! See the crate docs; filled in by the issue that owns this contract.
