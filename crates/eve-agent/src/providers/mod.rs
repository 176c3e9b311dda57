//! Models: the [`model::Model`] seam the turn drives, the HTTP plumbing every remote provider
//! shares ([`http`]), the providers themselves ([`demo`], [`openai`], [`anthropic`]) and
//! which one a turn gets ([`config`]). Where a provider's stream is parsed, it is in that
//! provider's file.

pub mod anthropic;
pub mod config;
pub mod demo;
pub mod files;
pub mod http;
pub mod logged;
pub mod model;
pub mod openai;
#[cfg(test)]
pub(crate) mod testing;
