//! Models: the [`model::Model`] seam the turn drives, the HTTP plumbing every remote provider
//! shares ([`http`]), the providers themselves ([`demo`], [`openai`], [`anthropic`]) and
//! which one a turn gets ([`config`]: the variables; [`offered`]: with the admins' providers). Where a provider's stream is parsed, it is in that
//! provider's file.

pub mod anthropic;
pub mod config;
pub mod demo;
pub mod files;
pub mod http;
pub mod logged;
pub mod model;
pub mod offered;
pub mod openai;
pub mod probe;
#[cfg(test)]
pub(crate) mod testing;
